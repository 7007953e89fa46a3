"""Fixtures the command-line tests share."""

import pytest

from attnproof.numeric import _compile_cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty cache directory of the test's own, caches switched on."""
    directory = tmp_path / "cache"
    monkeypatch.setenv(_compile_cache.DIRECTORY_VARIABLE, str(directory))
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "")
    return directory
