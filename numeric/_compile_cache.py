"""Where attnproof keeps caches, and JAX's persistent compilation cache there.

A compiled program is keyed by JAX on its HLO, compile options, device and JAX version, so a
warm run loads it instead of compiling again, and a changed statement simply misses. JAX reads
entries through a checksummed compression and recompiles, with a warning, when an entry cannot
be read. Every compilation is stored, however quick: a run compiles hundreds of small programs.
With caching turned off (``--no-cache``, ``$ATTNPROOF_NO_CACHE=1``) the cache is disabled.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

NO_CACHE_VARIABLE = "ATTNPROOF_NO_CACHE"
DIRECTORY_VARIABLE = "ATTNPROOF_CACHE_DIR"


def cache_directory() -> Path | None:
    """Where caches live (``$ATTNPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/attnproof``, else
    ``~/.cache/attnproof``), or None when caching is turned off."""
    if os.environ.get(NO_CACHE_VARIABLE, "").lower() in ("1", "true", "yes"):
        return None
    chosen = os.environ.get(DIRECTORY_VARIABLE)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attnproof"


def disable() -> None:
    """Turn caching off for this process and the workers it starts (``--no-cache``)."""
    os.environ[NO_CACHE_VARIABLE] = "1"


def configure(jax) -> None:
    """Point JAX at ``<cache>/jax``, or turn its persistent cache off."""
    directory = cache_directory()
    if directory is None:
        jax.config.update("jax_enable_compilation_cache", False)
        return
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(directory / "jax"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def folder_name(name: str) -> str:
    """A theorem's name as a folder of its own in a cache (a user's name may hold anything)."""
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in name)


def write_atomically(path: Path, data: bytes | str) -> None:
    """Write a cache entry so that a reader sees the old file or the new one, never a part."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data.encode() if isinstance(data, str) else data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
