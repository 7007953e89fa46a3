"""Where a run's time goes, appended as JSON lines to the file named by ``$ATTNPROOF_TIME_LOG``
(unset, nothing is measured and nothing is written).

Each line is one phase of one process, in seconds of its own: a phase's line excludes the
phases nested in it, so the lines of a run add up to its workers' time without counting any
second twice. attnproof marks its phases with ``phase(name)`` (a worker's start-up, a proof, a
numeric record, an evaluation, the ground truth, the report); JAX's compilation stages come
from JAX itself.

JAX reports the three stages of a compilation (tracing, lowering to MLIR, the backend compile,
or on a persistent-cache hit the cache read) through ``jax.monitoring``; a listener adds the
configuration being evaluated. The benchmark (``benchmarks/bench_harness.py``) reads the file
to report each phase's share of a run.

Each request to compile also names the program: JAX's persistent-cache key, a digest of the
lowered module (the program's source, shapes and dtypes), the devices, the compile options and
JAX's version, logged as a ``request`` line with ``hit`` true when the program was read back
from the cache rather than compiled. The benchmark counts the keys requested more than once in a
run: each repeat is a program traced, lowered and looked up again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator

ENVIRONMENT_VARIABLE = "ATTNPROOF_TIME_LOG"
STAGES = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
}
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
# JAX names each compilation request's cache key only in these debug messages of its compiler
COMPILER_LOGGER = "jax._src.compiler"
REQUEST_MESSAGES = {
    "Persistent compilation cache hit for '%s' with key %r": True,
    "PERSISTENT COMPILATION CACHE MISS for '%s' with key %r": False,
}

_context: dict = {}
_listening = False
# one entry per open phase: the seconds spent so far in phases nested inside it
_nested: list[float] = []
_clock = time.perf_counter


def listen() -> None:
    """Register the JAX listeners once per process, if the log is asked for."""
    global _listening
    if _listening or not os.environ.get(ENVIRONMENT_VARIABLE):
        return
    from jax import monitoring

    monitoring.register_event_duration_secs_listener(_on_duration)
    monitoring.register_event_listener(_on_event)
    compiler_log = logging.getLogger(COMPILER_LOGGER)
    compiler_log.addHandler(_RequestHandler())
    compiler_log.setLevel(logging.DEBUG)
    compiler_log.propagate = False  # its other debug lines stay out of the user's log
    _listening = True


class _RequestHandler(logging.Handler):
    """Writes a ``request`` line for each program JAX is asked to compile, with its key."""

    def emit(self, entry: logging.LogRecord) -> None:
        hit = REQUEST_MESSAGES.get(entry.msg)
        if hit is not None and isinstance(entry.args, tuple) and len(entry.args) == 2:
            module, key = entry.args
            _write({**_context, "stage": "request", "seconds": 0.0, "module": str(module),
                    "key": str(key), "hit": hit})


@contextlib.contextmanager
def attributed(theorem: str, backend: str, dtype: str, mode: str,
               sizes: dict) -> Iterator[None]:
    """Compilations inside this block are charged to this configuration and shape."""
    saved = dict(_context)
    _context.update(theorem=theorem, backend=backend, dtype=dtype, mode=mode,
                    shape=",".join(f"{k}={v}" for k, v in sorted(sizes.items())))
    try:
        yield
    finally:
        _context.clear()
        _context.update(saved)


def enabled() -> bool:
    return bool(os.environ.get(ENVIRONMENT_VARIABLE))


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Time this block as phase ``name``, less the phases nested in it."""
    if not enabled():
        yield
        return
    _nested.append(0.0)
    start = _clock()
    try:
        yield
    finally:
        elapsed = _clock() - start
        record(name, elapsed - _nested.pop(), elapsed)


def record(stage: str, seconds: float, elapsed: float | None = None) -> None:
    """A phase timed elsewhere (``seconds`` of its own; ``elapsed`` in all, if more), such as
    loading a stored executable (``_executables``) or a worker's start-up."""
    if not enabled():
        return
    if _nested:  # the phase it interrupted does not count these seconds as its own
        _nested[-1] += seconds if elapsed is None else elapsed
    _write({**_context, "stage": stage, "seconds": seconds})


# JAX passes the event and duration by position: the names are its listener protocols'
def _on_duration(event: str, duration_secs: float, **_: str | int) -> None:
    if event in STAGES:
        record(STAGES[event], duration_secs)


def _on_event(event: str, **_: str | int) -> None:
    if event == CACHE_HIT_EVENT:
        _write({**_context, "stage": "cache-hit", "seconds": 0.0})


def _write(entry: dict) -> None:
    path = os.environ.get(ENVIRONMENT_VARIABLE)
    if not path:
        return
    # one short line per write in append mode: lines from several workers do not interleave
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")


def read(path: str | os.PathLike[str]) -> list[dict]:
    """The entries of a log file; a line cut short (a killed worker) is skipped."""
    entries = []
    with open(path, encoding="utf-8") as log:
        for line in log:
            with contextlib.suppress(json.JSONDecodeError):
                entries.append(json.loads(line))
    return entries
