"""Shared fixtures: the catalog, the planted false variants, the source documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnproof.symbolic import discover

# The attnproof plugin is installed with the package (a pytest11 entry point): harness records
# become a report in reports/pytest/. pytester runs a pytest inside a test, for its own tests.
pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
PLANTED_DIR = REPO / "tests" / "planted"
SEEDS_DIR = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def catalog():
    return discover()


@pytest.fixture(scope="session")
def planted():
    return discover([PLANTED_DIR])
