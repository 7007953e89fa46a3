"""What a cell's calls cost in programs: the distinct shapes the kernel was called at, and the
programs its framework compiled for them (or read from its persistent compilation cache).

A compiling kernel's cases are cheap once their program exists: the checker's cost is its
compilations. A backend whose row has ``listen_compilations`` reports each compilation of a
program (JAX's, through ``jax.monitoring``: an XLA compilation, or a program read back from
the persistent cache instead, eager dispatch's per-primitive programs included); the checker's
own jitted calls (``numeric/_backends.py``) compile once per signature, counted there. A
``torch.compile``'d kernel's graphs are counted by TorchDynamo's own count. Frameworks that
build no program for a call (PyTorch eager, NumPy, MLX without ``mx.compile``) report none:
their cells say 0.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attnproof.numeric import Backend


@dataclass
class Programs:
    """One cell's calls: the shapes called at, as (b, h, h_kv, n_q, n_k, d_k, d_v), and the
    programs compiled for them."""

    shapes: set[tuple[int, ...]] = field(default_factory=set)
    compiled: int = 0  # programs the framework compiled
    loaded: int = 0  # programs read from the persistent compilation cache instead
    seconds: float = 0.0  # spent compiling
    call_seconds: float = 0.0  # in the kernel's calls, their compilations included

    def to_json(self, compiled_twice: int = 0) -> dict[str, int | float]:
        """A cell's ``programs`` in the JSON, with the checker's signatures compiled more than
        once meanwhile (all zeros for a cell that made no call)."""
        return {"shapes": len(self.shapes), "compiled": self.compiled, "loaded": self.loaded,
                "compiled_twice": compiled_twice, "compile_seconds": round(self.seconds, 3),
                "call_seconds": round(self.call_seconds, 3)}


_COUNTING: list[Programs] = []
_listening: set[str] = set()


@contextlib.contextmanager
def counted(programs: Programs) -> Iterator[Programs]:
    """Count into ``programs`` what the calls made inside compile, and the shapes they use."""
    _COUNTING.append(programs)
    graphs = _torch_graphs()
    try:
        yield programs
    finally:
        _COUNTING.remove(programs)
        programs.compiled += _torch_graphs() - graphs


def _torch_graphs() -> int:
    """The graphs ``torch.compile`` has compiled in this process (TorchDynamo's count), 0
    where nothing has loaded it: a kernel compiled with it loads it, the checker never does."""
    utils = sys.modules.get("torch._dynamo.utils")
    return 0 if utils is None else int(utils.counters["stats"].get("unique_graphs", 0))


def called_at(q_shape: tuple[int, ...], k_shape: tuple[int, ...],
              v_shape: tuple[int, ...]) -> None:
    """A call of the kernel at these canonical (b, h, n, d) shapes of q, k and v."""
    b, h, n_q, d_k = q_shape
    shape = (b, h, k_shape[1], n_q, k_shape[2], d_k, v_shape[3])
    for programs in _COUNTING:
        programs.shapes.add(shape)


@contextlib.contextmanager
def timed_calls() -> Iterator[None]:
    """Time the kernel's calls made inside (the rest of a cell's time is the checker's: the
    truth, the judging, the drawing)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        for programs in _COUNTING:
            programs.call_seconds += time.perf_counter() - started


def listen(row: Backend) -> None:
    """Listen to the compilations of a backend's module (its ``listen_compilations``: JAX's;
    the others report none), once per process."""
    if row.listen_compilations is None or row.name in _listening:
        return
    row.listen_compilations(_on_compiled, _on_loaded)
    _listening.add(row.name)


def _on_compiled(seconds: float) -> None:
    for programs in _COUNTING:
        programs.compiled += 1
        programs.seconds += seconds


def _on_loaded() -> None:
    for programs in _COUNTING:
        programs.loaded += 1


def compiled_twice() -> int:
    """How many of the checker's jitted signatures were compiled more than once in this
    process (0: each (kernel, shape, dtype, keywords) compiled at most once)."""
    from attnproof.numeric import kernel_compilations

    return sum(1 for n in kernel_compilations().values() if n > 1)
