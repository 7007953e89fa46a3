"""Where attnproof keeps caches, and JAX's persistent compilation cache there.

A compiled program is keyed by JAX on its HLO, compile options, device and JAX version, so a
warm run loads it instead of compiling again, and a changed statement simply misses. JAX reads
entries through a checksummed compression and recompiles, with a warning, when an entry cannot
be read. Every compilation is stored, however quick: a run compiles hundreds of small programs.
With caching turned off (``--no-cache``, ``$ATTNPROOF_NO_CACHE=1``) the cache is disabled.
"""

from __future__ import annotations

import os
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


# -- compiled programs, stored whole --------------------------------------------------------------
#
# JAX's persistent cache saves the backend compile, but a warm run still traces and lowers every
# program to find its key (most of a warm run's JAX time, measured). A program generated from a
# statement is fully determined by its generated source, the package that runs it, JAX and the
# shapes and dtypes it sees, so it is stored here as a serialized executable under a key made of
# exactly those, and loaded without tracing. Programs that call user code (``implementation=``)
# are not stored: their source is not ours to digest.

EXECUTABLES = "executables"


def stored_program(jitted, identity: tuple):
    """``jitted`` (a ``jax.jit`` function of one dict of arrays), loaded from the cache when a
    program of the same ``identity`` and argument shapes was stored, else compiled and stored."""
    directory = cache_directory()
    if directory is None or not hasattr(jitted, "lower"):
        return jitted
    loaded: dict = {}

    def run(traced: dict):
        signature = tuple(sorted((k, tuple(v.shape), str(v.dtype)) for k, v in traced.items()))
        if signature not in loaded:
            loaded[signature] = _load_or_compile(jitted, traced, directory,
                                                 _key(identity, signature))
        return loaded[signature](traced)

    return run


def _key(identity: tuple, signature: tuple) -> str:
    import hashlib

    text = repr((identity, signature, _generation()))
    return hashlib.sha256(text.encode()).hexdigest()


def _generation() -> str:
    """What every stored program depends on beyond its own source: the package's code, JAX,
    jaxlib, the JAX options set here, XLA's flags."""
    import hashlib

    import jax
    import jaxlib

    digest = hashlib.sha256(_package_digest().encode())
    for part in (jax.__version__, jaxlib.__version__, jax.config.jax_enable_x64,
                 jax.config.jax_default_matmul_precision, os.environ.get("XLA_FLAGS", "")):
        digest.update(repr(part).encode())
    return digest.hexdigest()[:16]


def _package_digest() -> str:
    import hashlib

    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder in ("numeric", "symbolic"):
        for path in sorted((root / folder).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _load_or_compile(jitted, traced: dict, directory: Path, key: str):
    path = directory / EXECUTABLES / _generation() / f"{key}.bin"
    program = _load(path, traced, key)
    if program is not None:
        return program
    compiled = jitted.lower(traced).compile()
    _store(path, compiled, key)
    return compiled


def _load(path: Path, traced: dict, key: str):
    """The stored executable, or None if it is missing, damaged or not the one asked for."""
    import contextlib
    import hashlib
    import json

    import jax
    from jax.experimental import serialize_executable

    try:
        header, payload = path.read_bytes().split(b"\n", 1)
        entry = json.loads(header)
        if entry["key"] != key or entry["digest"] != hashlib.sha256(payload).hexdigest():
            raise ValueError("stored program does not match its key or digest")
        in_tree = jax.tree.structure(((traced,), {}))
        out_tree = jax.tree.structure(dict.fromkeys(entry["outputs"], 0))
        program = serialize_executable.deserialize_and_load(payload, in_tree, out_tree)
    except FileNotFoundError:
        return None
    except Exception:  # damaged: recompile, never trust it
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    from . import _compile_log

    _compile_log.stored_program_loaded()
    return program


def _store(path: Path, compiled, key: str) -> None:
    import contextlib
    import hashlib
    import json
    import tempfile

    from jax.experimental import serialize_executable

    with contextlib.suppress(Exception):  # a cache that cannot be written is only slower
        payload, _, out_tree = serialize_executable.serialize(compiled)
        outputs = sorted(out_tree.unflatten([0] * out_tree.num_leaves))
        header = json.dumps({"key": key, "digest": hashlib.sha256(payload).hexdigest(),
                             "outputs": outputs}).encode()
        _prune_other_generations(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            file.write(header + b"\n" + payload)
        os.replace(temporary, path)


def _prune_other_generations(current: Path) -> None:
    """Programs of an older package or JAX can never load again: remove them."""
    import shutil

    if current.exists() or not current.parent.exists():
        return
    for other in current.parent.iterdir():
        if other.is_dir() and other != current:
            shutil.rmtree(other, ignore_errors=True)
