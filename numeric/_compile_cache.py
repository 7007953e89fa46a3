"""Where attnproof keeps caches, and JAX's persistent compilation cache there.

A compiled program is keyed by JAX on its HLO, compile options, device and JAX version, so a
warm run loads it instead of compiling again, and a changed statement simply misses. JAX reads
entries through a checksummed compression and recompiles, with a warning, when an entry cannot
be read. Every compilation is stored, however quick: a run compiles hundreds of small programs.
With caching turned off (``--no-cache``, ``$ATTNPROOF_NO_CACHE=1``) the cache is disabled;
``$ATTNPROOF_NO_CACHE=stores`` turns off attnproof's own stores and keeps this one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path

NO_CACHE_VARIABLE = "ATTNPROOF_NO_CACHE"
DIRECTORY_VARIABLE = "ATTNPROOF_CACHE_DIR"
# ``$ATTNPROOF_NO_CACHE=stores``: attnproof's own stores off (proofs, executables, timings),
# JAX's compilation cache kept. JAX keys an entry by the lowered program, so an entry it reads
# back is the very program it would compile: the test suite runs its unit tests this way.
STORES_OFF = "stores"


def cache_directory() -> Path | None:
    """Where attnproof's stores live (``$ATTNPROOF_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/attnproof``, else ``~/.cache/attnproof``), or None when they are off."""
    if _setting() in ("1", "true", "yes", STORES_OFF):
        return None
    return _root()


def compilation_cache_directory() -> Path | None:
    """Where JAX's persistent compilation cache lives (``<cache>/jax``), or None when every
    cache is off."""
    if _setting() in ("1", "true", "yes"):
        return None
    return _root() / "jax"


def _setting() -> str:
    return os.environ.get(NO_CACHE_VARIABLE, "").lower()


def _root() -> Path:
    chosen = os.environ.get(DIRECTORY_VARIABLE)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attnproof"


def disable() -> None:
    """Turn caching off for this process and the workers it starts (``--no-cache``)."""
    os.environ[NO_CACHE_VARIABLE] = "1"


def configure(jax: types.ModuleType) -> None:
    """Point JAX at ``<cache>/jax``, or turn its persistent cache off."""
    directory = compilation_cache_directory()
    if directory is None:
        jax.config.update("jax_enable_compilation_cache", False)
        return
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
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
def exclusive(program: str) -> Iterator[None]:
    """Hold the machine-wide lock of ``program`` (any text naming it): two workers that reach
    the same program at once compile it one after the other, so the second reads it back from
    JAX's persistent cache instead of compiling it a second time. Without caches, or where the
    lock cannot be taken, nothing is held: the program is only compiled twice."""
    directory = compilation_cache_directory()
    if directory is None:
        yield
        return
    name = hashlib.sha256(program.encode()).hexdigest()[:32]
    try:
        (directory.parent / "locks").mkdir(parents=True, exist_ok=True)
        handle = open(directory.parent / "locks" / f"{name}.lock", "a")  # noqa: SIM115
    except OSError:
        yield
        return
    with handle:
        with contextlib.suppress(OSError):  # a file system without locks: go on unlocked
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes or we exit
        yield
