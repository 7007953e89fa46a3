"""The warnings a kernel raises while it is checked: kept with its cell, not on the terminal.

A kernel's own NumPy or framework warnings (overflow in exp, an invalid value in a subtraction)
repeat on every one of hundreds of calls; printed, they bury the matrix. Each cell records
them instead, counted and deduplicated by category, message and place, and the report lists
them. Warnings raised by attnproof's own code are not the kernel's: they are issued again, as
they would have been.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from pathlib import Path

# attnproof's code, and the folders its package links in (symbolic/, numeric/, theorems/)
_PACKAGE = Path(__file__).resolve().parents[1]
_OWN_ROOTS = (_PACKAGE, *((_PACKAGE / name).resolve() for name in ("symbolic", "numeric",
                                                                   "theorems")))
# a cell keeps this many distinct warnings; the rest are counted in one entry
KEPT = 20


@contextlib.contextmanager
def kept_with(cell):
    """Record every warning raised inside, as ``cell.kernel_warnings``. Filters stay the
    user's where they turn a warning into an error (the kernel raises as it would in their
    code); else every occurrence is recorded, so the counts are true."""
    with warnings.catch_warnings(record=True) as seen:
        if not any(action == "error" for action, *_ in warnings.filters):
            warnings.simplefilter("always")
        try:
            yield
        finally:
            cell.kernel_warnings = _tally([w for w in seen if not _own(w.filename)])
    for w in seen:
        if _own(w.filename):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _own(filename: str) -> bool:
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return any(path.is_relative_to(root) for root in _OWN_ROOTS)


def _tally(seen) -> list[dict]:
    counts = Counter((w.category.__name__, str(w.message).splitlines()[0] if str(w.message)
                      else "", f"{Path(w.filename).name}:{w.lineno}") for w in seen)
    kept = [{"category": category, "message": message, "where": where, "count": count}
            for (category, message, where), count in counts.most_common(KEPT)]
    rest = sum(counts.values()) - sum(entry["count"] for entry in kept)
    if rest:
        kept.append({"category": "other", "message": f"{len(counts) - KEPT} more distinct "
                     "warnings", "where": "", "count": rest})
    return kept


def total(cells) -> int:
    """How many warnings the kernel raised over these cells."""
    return sum(entry["count"] for cell in cells for entry in getattr(cell, "kernel_warnings",
                                                                       None) or ())
