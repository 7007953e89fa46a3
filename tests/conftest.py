"""Shared fixtures: the catalog, the planted false variants, the source documents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attnproof.symbolic import discover

# The attnproof plugin is installed with the package (a pytest11 entry point): harness records
# become a report in reports/pytest/. pytester runs a pytest inside a test, for its own tests.
pytest_plugins = ["pytester"]

# Tests run with every cache off (the cache tests turn theirs on in a temporary directory): a
# test must neither read a user's cache nor leave entries in it, and a test that patches the
# checker must see its patch run, not a program stored by an earlier test. Worker processes
# inherit the variable.
os.environ.setdefault("ATTNPROOF_NO_CACHE", "1")

REPO = Path(__file__).resolve().parent.parent
PLANTED_DIR = REPO / "tests" / "planted"
SEEDS_DIR = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def catalog():
    return discover()


@pytest.fixture(scope="session")
def planted():
    return discover([PLANTED_DIR])
