"""Compiled JAX programs kept across runs, loaded without tracing, lowering or compiling them.

JAX's persistent compilation cache (``_compile_cache``) skips only the backend compile: a warm
run still traces and lowers every program first, and a warm run of the catalog spent about as
long on that as on evaluating. This store keeps the compiled executable itself, serialized by
``jax.experimental.serialize_executable``, under a key made of everything the program is built
from, known before tracing it:

- the program: the compiled source of each side and of the differentiated primal, and the
  output axes (a theorem with ``implementation=`` runs user code, which no source text pins
  down, so its programs are never stored here; JAX's own cache still serves them);
- the code that assembles it: a digest of the ``numeric`` package's own modules, and for a
  claim kind's route (``run_route_program``) of the kinds' routes too;
- the call: sizes, static arguments, and the shape and dtype of every array;
- where it runs: the device, JAX's and jaxlib's versions, JAX's configuration, ``XLA_FLAGS`` and
  the host CPU (an executable is machine code for it).

Entries live under ``<cache>/executables/<theorem>/<program digest>/``: storing one for a new
program digest removes that theorem's other program folders, so a changed theorem replaces
exactly its own entries. Each file carries a SHA-256 of its payload; an entry that does not
match, or that JAX cannot load, is deleted and compiled again, never trusted. The payload is a
pickle, as JAX writes it: the store trusts its directory as JAX trusts its own cache, a folder
only its user can write.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _time_log as time_log
from ._compile_cache import cache_directory, exclusive, folder_name, write_atomically

if TYPE_CHECKING:
    from jax.stages import Compiled

# a program run on a call's arrays: jitted, compiled here, or loaded from the store
Program = Callable[[dict], Any]

FOLDER = "executables"
_MAGIC = b"attnproof-executable-1\n"


def program_digest(parts: list[str]) -> str:
    """A digest of the texts that make one theorem's programs (its sources, the runner's code)."""
    return _sha("\n\0".join([*parts, numeric_version()]))


def call_key(sizes: dict, statics: dict, arrays: dict, device: object) -> str:
    """A digest of one call's shapes, dtypes and statics, and of where it runs."""
    avals = sorted((name, tuple(a.shape), str(a.dtype)) for name, a in arrays.items())
    parts = [repr(sorted(sizes.items())), repr(sorted(statics.items())), repr(avals),
             _device_text(device), runtime_version()]
    return _sha("\n\0".join(parts))


def load_or_compile(theorem: str, program: str, call: str, jitted: Any,
                    arrays: dict) -> Program:
    """The compiled program for this call: loaded from the store, else compiled by ``jitted``
    for ``arrays`` and stored. With caching turned off, ``jitted`` itself (a ``jax.jit``
    function, typed ``Any``: the backend table's ``compile`` gives it as a plain callable)."""
    directory = cache_directory()
    if directory is None:
        return jitted
    path = directory / FOLDER / folder_name(theorem) / program / f"{call}.bin"
    start = time.perf_counter()
    loaded = _load(path)
    if loaded is not None:
        time_log.record("executable-load", time.perf_counter() - start)
        return _FirstCallChecked(loaded, path, jitted)
    hits = _persistent_cache_hits()
    compiled = jitted.lower(arrays).compile()
    # an executable JAX read back from its own cache serializes without its machine code
    # (it loads, then fails when run): only a program compiled here and now is stored
    if _persistent_cache_hits() == hits:
        _store(path, compiled)
    return compiled


# kind routes' programs already loaded or compiled in this process, by (owner, program, call)
_ROUTE_PROGRAMS: dict[tuple[str, str, str], Program] = {}


def run_route_program(owner: str, program_text: str, jitted: Any, arrays: dict,
                      device: object) -> Any:
    """A claim-kind route's jitted program run on ``arrays``, compiled once per machine.

    The program is kept for the process and stored across runs under ``owner`` (a theorem and
    its route), so a warm run neither traces nor lowers it. ``program_text`` pins the program
    down (its compiled source or expression, and its sizes); the route code that builds it is
    pinned by a digest of the kinds' routes (``numeric/kinds/``) beside the package's own
    modules. Its first run in a process holds the program's machine-wide lock: two workers that
    reach the same program at once compile it one after the other, and the second reads it
    back from JAX's cache."""
    program = program_digest([kinds_version()])
    call = call_key({}, {"program": _sha(program_text)}, arrays, device)
    key = (owner, program, call)
    known = _ROUTE_PROGRAMS.get(key)
    if known is not None:
        return known(arrays)
    with exclusive(f"{program_text}\n{call}"):  # not the owner's: theorems share programs
        run = load_or_compile(owner, program, call, jitted, arrays)
        values = run(arrays)
    _ROUTE_PROGRAMS[key] = run
    return values


@functools.cache
def kinds_version() -> str:
    """A digest of the claim kinds' numeric routes (``numeric/kinds/``)."""
    return source_digest(Path(__file__).resolve().parent / "kinds")


class _FirstCallChecked:
    """A loaded program whose first run is awaited: if the runtime rejects it, the entry is
    deleted and the program compiled afresh (results are never taken from a broken entry)."""

    def __init__(self, loaded: Program, path: Path, jitted: Program) -> None:
        self.program, self.path, self.jitted, self.checked = loaded, path, jitted, False

    def __call__(self, arrays: dict) -> Any:
        if self.checked:
            return self.program(arrays)
        try:
            values = self.program(arrays)
            _block_until_ready(values)
        except Exception:  # whatever the runtime objects to, the entry is not used
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.program = self.jitted
            values = self.program(arrays)
        self.checked = True
        return values


def _block_until_ready(values: Any) -> None:
    import jax

    jax.block_until_ready(values)


class _PersistentCacheHits:
    """Counts the programs JAX reads from its persistent cache in this process."""

    EVENT = "/jax/compilation_cache/cache_hits"

    def __init__(self) -> None:
        self.count, self.listening = 0, False

    def __call__(self) -> int:
        if not self.listening:
            from jax import monitoring

            monitoring.register_event_listener(self._on_event)
            self.listening = True
        return self.count

    def _on_event(self, event: str, **_: str | int) -> None:
        if event == self.EVENT:
            self.count += 1


_persistent_cache_hits = _PersistentCacheHits()


def _load(path: Path) -> Program | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    with contextlib.suppress(Exception):  # anything at all wrong with an entry: compile again
        from jax.experimental import serialize_executable

        header, digest, payload = data.split(b"\n", 2)
        if header + b"\n" == _MAGIC and digest.decode() == hashlib.sha256(payload).hexdigest():
            return serialize_executable.deserialize_and_load(*pickle.loads(payload))
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def _store(path: Path, compiled: Compiled) -> None:
    """Write the entry; a store that cannot be written only makes the next run slower."""
    with contextlib.suppress(Exception):
        from jax.experimental import serialize_executable

        payload = pickle.dumps(serialize_executable.serialize(compiled))
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_other_programs(path.parent)
        digest = hashlib.sha256(payload).hexdigest().encode()
        write_atomically(path, _MAGIC + digest + b"\n" + payload)


def _remove_other_programs(program_folder: Path) -> None:
    for sibling in program_folder.parent.iterdir():
        if sibling != program_folder and sibling.is_dir():
            shutil.rmtree(sibling, ignore_errors=True)


@functools.cache
def numeric_version() -> str:
    """A digest of the ``numeric`` package's own modules, which assemble every stored program:
    the runner, backends and compiler. The claim kinds' routes in ``kinds/`` are digested on
    their own (``kinds_version``) into their programs' keys only, so a change to a route leaves
    the search's programs in place."""
    return source_digest(Path(__file__).resolve().parent)


def source_digest(root: Path) -> str:
    """A digest of the modules in folder ``root`` (not its subfolders)."""
    digest = hashlib.sha256()
    for path in sorted(root.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.cache
def runtime_version() -> str:
    """JAX, jaxlib, JAX's configuration, ``XLA_FLAGS`` and the host CPU, as one text."""
    import jax
    import jaxlib

    configuration = sorted((k, repr(v)) for k, v in jax.config.values.items())
    return "\n".join([jax.__version__, jaxlib.__version__, repr(configuration),
                      os.environ.get("XLA_FLAGS", ""), platform.machine(), _cpu_flags()])


def _device_text(device: object) -> str:
    client = getattr(device, "client", None)
    return " ".join(map(str, (device, getattr(device, "platform", ""),
                              getattr(device, "device_kind", ""),
                              getattr(client, "platform_version", ""))))


def _cpu_flags() -> str:
    """The host CPU's feature flags (Linux), so a cache carried to another CPU misses."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    return platform.processor()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]
