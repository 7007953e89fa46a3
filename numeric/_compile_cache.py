"""Where attnproof keeps caches, and JAX's persistent compilation cache there.

A compiled program is keyed by JAX on its HLO, compile options, device and JAX version, so a
warm run loads it instead of compiling again, and a changed statement simply misses. JAX reads
entries through a checksummed compression and recompiles, with a warning, when an entry cannot
be read. Every compilation is stored, however quick: a run compiles hundreds of small programs.
With caching turned off (``--no-cache``, ``$ATTNPROOF_NO_CACHE=1``) the cache is disabled.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
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


@contextlib.contextmanager
def exclusive(program: str):
    """Hold the machine-wide lock of ``program`` (any text naming it): two workers that reach
    the same program at once compile it one after the other, so the second reads it back from
    JAX's persistent cache instead of compiling it a second time. Without caches, or where the
    lock cannot be taken, nothing is held: the program is only compiled twice."""
    directory = cache_directory()
    if directory is None:
        yield
        return
    name = hashlib.sha256(program.encode()).hexdigest()[:32]
    try:
        (directory / "locks").mkdir(parents=True, exist_ok=True)
        handle = open(directory / "locks" / f"{name}.lock", "a")  # noqa: SIM115 (held below)
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes, or the process ends
        yield
