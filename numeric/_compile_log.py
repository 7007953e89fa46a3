"""Where compilation time goes: every JAX compilation, attributed to a theorem, backend, dtype,
mode and shape, appended as one JSON line to the file named by ``$ATTNPROOF_COMPILE_LOG``.

JAX reports the three stages of a compilation (tracing, lowering to MLIR, the backend compile,
or on a persistent-cache hit the cache read) through ``jax.monitoring``; a listener adds the
configuration being evaluated. Unset, nothing is registered and nothing is written. The
benchmark (``benchmarks/bench_harness.py``) reads the file to report compilation's share of
numeric time per backend.

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

ENVIRONMENT_VARIABLE = "ATTNPROOF_COMPILE_LOG"
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
def attributed(theorem: str, backend: str, dtype: str, mode: str, sizes: dict):
    """Compilations inside this block are charged to this configuration and shape."""
    saved = dict(_context)
    _context.update(theorem=theorem, backend=backend, dtype=dtype, mode=mode,
                    shape=",".join(f"{k}={v}" for k, v in sorted(sizes.items())))
    try:
        yield
    finally:
        _context.clear()
        _context.update(saved)


def record(stage: str, seconds: float) -> None:
    """An entry of attnproof's own, such as loading a stored executable (``_executables``)."""
    if _listening:
        _write({**_context, "stage": stage, "seconds": seconds})


def _on_duration(event: str, duration: float, **_) -> None:
    if event in STAGES:
        _write({**_context, "stage": STAGES[event], "seconds": duration})


def _on_event(event: str, **_) -> None:
    if event == CACHE_HIT_EVENT:
        _write({**_context, "stage": "cache-hit", "seconds": 0.0})


def _write(entry: dict) -> None:
    path = os.environ.get(ENVIRONMENT_VARIABLE)
    if not path:
        return
    # one short line per write in append mode: lines from several workers do not interleave
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")


def read(path) -> list[dict]:
    """The entries of a log file; a line cut short (a killed worker) is skipped."""
    entries = []
    with open(path, encoding="utf-8") as log:
        for line in log:
            with contextlib.suppress(json.JSONDecodeError):
                entries.append(json.loads(line))
    return entries
