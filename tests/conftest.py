"""Shared fixtures: the catalog, the planted false variants, the source documents."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from attnproof import numeric
from attnproof.numeric._compile_cache import NO_CACHE_VARIABLE
from attnproof.symbolic import discover

# The attnproof plugin is installed with the package (a pytest11 entry point): harness records
# become a report in reports/pytest/. pytester runs a pytest inside a test, for its own tests.
pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(config, items):
    """The harness tier runs with the caches ``attnproof prove`` uses, as a user's
    ``pytest -n auto`` does: its proofs, its stored executables and JAX's persistent cache
    (unless the user turned caching off). JAX reads its cache settings once per process, so JAX
    is loaded here, before any test runs: a test without caches could otherwise be the first to
    load it and turn JAX's cache off for the harness tests after it. JAX keys its entries by the
    lowered program, so a test that patches the checker never meets a program compiled from
    other code."""
    if any(item.get_closest_marker("harness") for item in items):
        with contextlib.suppress(ImportError):  # without JAX there is nothing to configure
            numeric.backend("jax").load()


@pytest.fixture(autouse=True)
def _caches_off_outside_the_harness(request, monkeypatch):
    """Every other test runs with attnproof's caches off (the cache tests turn theirs on in a
    temporary directory): it must neither read a user's cache nor leave entries in it, and a
    test that patches the prover or the checker must see its patch run, not a result stored by
    an earlier run. Processes a test starts inherit the variable."""
    if request.node.get_closest_marker("harness") is None:
        monkeypatch.setenv(NO_CACHE_VARIABLE, "1")


REPO = Path(__file__).resolve().parent.parent
PLANTED_DIR = REPO / "tests" / "planted"
SEEDS_DIR = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def catalog():
    return discover()


@pytest.fixture(scope="session")
def planted():
    return discover([PLANTED_DIR])
