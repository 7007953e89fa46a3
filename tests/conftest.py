"""Shared fixtures: the catalog, the planted false variants, the source documents."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from attnproof.symbolic import discover

# The attnproof plugin is installed with the package (a pytest11 entry point): harness records
# become a report in reports/pytest/. pytester runs a pytest inside a test, for its own tests.
pytest_plugins = ["pytester"]

# Tests keep proofs and compiled programs in a cache of their own, removed at exit: a test must
# neither read a user's cache nor leave entries in it. Worker processes inherit the variable.
if "ATTNPROOF_CACHE_DIR" not in os.environ:
    os.environ["ATTNPROOF_CACHE_DIR"] = tempfile.mkdtemp(prefix="attnproof-test-cache-")
    atexit.register(shutil.rmtree, os.environ["ATTNPROOF_CACHE_DIR"], ignore_errors=True)

REPO = Path(__file__).resolve().parent.parent
PLANTED_DIR = REPO / "tests" / "planted"
SEEDS_DIR = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def catalog():
    return discover()


@pytest.fixture(scope="session")
def planted():
    return discover([PLANTED_DIR])
