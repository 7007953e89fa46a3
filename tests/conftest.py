"""Shared fixtures: the catalog, the planted false variants, the source documents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attnproof.numeric._compile_cache import NO_CACHE_VARIABLE, STORES_OFF
from attnproof.symbolic import discover

# The attnproof plugin is installed with the package (a pytest11 entry point): harness records
# become a report in reports/pytest/. pytester runs a pytest inside a test, for its own tests.
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _stores_off_outside_the_harness(request, monkeypatch):
    """The harness tier runs with the caches ``attnproof prove`` uses, as a user's
    ``pytest -n auto`` does: its proofs, its stored executables and JAX's persistent cache
    (unless the user turned caching off). Every other test runs with attnproof's own stores
    off (the cache tests turn theirs on in a temporary directory): it must neither read a
    user's stored proof or program nor leave one, and a test that patches the prover or the
    checker must see its patch run. JAX's compilation cache stays on for them: JAX keys an
    entry by the lowered program, so what it reads back is the program it would compile.
    Processes a test starts inherit the variable."""
    if request.node.get_closest_marker("harness") is None and not os.environ.get(
            NO_CACHE_VARIABLE):
        monkeypatch.setenv(NO_CACHE_VARIABLE, STORES_OFF)


REPO = Path(__file__).resolve().parent.parent
PLANTED_DIR = REPO / "tests" / "planted"
SEEDS_DIR = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def catalog():
    return discover()


@pytest.fixture(scope="session")
def planted():
    return discover([PLANTED_DIR])
