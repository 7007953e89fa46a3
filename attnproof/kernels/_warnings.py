"""The warnings a kernel raises while it is checked: kept with its cell, not on the terminal.

A kernel's own NumPy or framework warnings (overflow in exp, an invalid value in a subtraction)
repeat on every one of hundreds of calls; printed, they bury the matrix. Each cell records
them instead, counted and deduplicated by category, message and place, and the report lists
them. Only the kernel's calls are watched (``raised_by_kernel``, around the forward and gradient
calls and a declared ``merge``): a warning of the checker's own code, or of a library the
checker calls, is issued as usual, and one a kernel issues with ``stacklevel=2`` (pointing at
its caller, the checker) is still the kernel's.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

# a cell keeps this many distinct warnings; the rest are counted in one entry
KEPT = 20

# the warnings counted so far in the cell being checked, by (category, message, where); None
# outside a cell (a replay, a user's own call), where the kernel's warnings are issued as in
# their code
_COUNTED: contextvars.ContextVar[Counter[tuple[str, str, str]] | None] = contextvars.ContextVar(
    "kernel_warnings", default=None)


class KeepsWarnings(Protocol):
    """A cell being checked (``_check.Cell``, which imports this module, so it is named by what
    it has): where its kernel's warnings end."""

    kernel_warnings: list[dict[str, Any]]


@contextlib.contextmanager
def kept_with(cell: KeepsWarnings) -> Iterator[None]:
    """Check ``cell`` inside: what the kernel raises in its calls ends in
    ``cell.kernel_warnings``, counted."""
    counted: Counter[tuple[str, str, str]] = Counter()
    token = _COUNTED.set(counted)
    try:
        yield
    finally:
        _COUNTED.reset(token)
        cell.kernel_warnings = _tally(counted)


@contextlib.contextmanager
def raised_by_kernel() -> Iterator[None]:
    """Around one call of the kernel: its warnings are recorded for the cell, not shown.
    Filters stay the user's where they turn a warning into an error (the kernel raises as it
    would in their code); else every occurrence is recorded, so the counts are true."""
    counted = _COUNTED.get()
    if counted is None:
        yield
        return
    with warnings.catch_warnings(record=True) as seen:
        if not any(action == "error" for action, *_ in warnings.filters):
            warnings.simplefilter("always")
        try:
            yield
        finally:
            counted.update(_key(w) for w in seen)


def _key(w: warnings.WarningMessage) -> tuple[str, str, str]:
    """What makes two warnings one entry: category, the message's first line, file:line."""
    message = str(w.message)
    return (w.category.__name__, message.splitlines()[0] if message else "",
            f"{Path(w.filename).name}:{w.lineno}")


def _tally(counts: Counter[tuple[str, str, str]]) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = [
        {"category": category, "message": message, "where": where, "count": count}
        for (category, message, where), count in counts.most_common(KEPT)]
    rest = sum(counts.values()) - sum(entry["count"] for entry in kept)
    if rest:
        kept.append({"category": "other", "message": f"{len(counts) - KEPT} more distinct "
                     "warnings", "where": "", "count": rest})
    return kept


def total(cells: Iterable[object]) -> int:
    """How many warnings the kernel raised over these cells."""
    return sum(entry["count"] for cell in cells for entry in getattr(cell, "kernel_warnings",
                                                                       None) or ())
