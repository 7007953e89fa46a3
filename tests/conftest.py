"""Shared fixtures: the catalog, the planted false variants, the source documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from symbolic import discover

# Harness records become a report in reports/pytest/ (see attnproof/pytest_plugin.py);
# pytester runs a pytest inside a test, for the plugin's own tests.
pytest_plugins = ["attnproof.pytest_plugin", "pytester"]

REPO = Path(__file__).resolve().parent.parent
PLANTED_DIR = REPO / "tests" / "planted"
SEEDS_DIR = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def catalog():
    return discover()


@pytest.fixture(scope="session")
def planted():
    return discover([PLANTED_DIR])
