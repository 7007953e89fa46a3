"""How a theorem's status is composed from its proof attempt and its numeric records.

The rules, in order (the first that applies decides):

1. **inconsistent**: two routes disagree. A record whose float64 strays from the 50-digit
   evaluation of the same statement; or a symbolic proof (for all sizes, or for sizes up to a
   bound that covers the counterexample) beside a float64 counterexample. Always a bug in the
   checker, the compiler or the implementation: it heads the report and fails the run.
2. **refuted** / **failed**: a counterexample (exact, in float64, or code that is NaN or ±∞
   where the statement is finite, in any format) stands even when another record erred; the
   crash still fails the run.
3. **error**: the proof attempt or a numeric record could not be completed.
4. For a claim expected to hold and not refuted: **unstable** when a record that does not
   decide truth (a lower precision, MLX float64) failed: the claim holds, but not in that
   format, and the run fails ("holds; unstable in float16"). Otherwise the proof's status, or
   **checked** with a passed float64 record, or **unchecked**.

"Proved" comes only from the symbolic route: ``lemmas-proved`` (lemmas proved but not shown to
imply the claim, or a claim that runs user code) counts as numeric evidence only.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from attnproof.numeric import NumericStatus
from attnproof.symbolic import ProofStatus

if TYPE_CHECKING:
    from attnproof.numeric import NumericRecord


class ProofAttempt(Protocol):
    """What the rules read of a proof attempt: a ``symbolic.ProofResult`` or the results'
    ``SymbolicOutcome`` (not imported here: ``results`` imports this module)."""

    @property
    def status(self) -> ProofStatus: ...
    @property
    def max_size(self) -> int | None: ...


class TheoremStatus(enum.StrEnum):
    """A theorem's status, worst news first for a claim expected to hold; the values are the
    strings the results JSON holds."""

    INCONSISTENT = "inconsistent"
    PROVED = "proved"
    PROVED_BOUNDED = "proved-bounded"
    CHECKED = "checked"
    UNCHECKED = "unchecked"
    UNSTABLE = "unstable"
    REFUTED = "refuted"
    FAILED = "failed"
    ERROR = "error"


PROVED, PROVED_BOUNDED = TheoremStatus.PROVED, TheoremStatus.PROVED_BOUNDED
CHECKED, UNCHECKED = TheoremStatus.CHECKED, TheoremStatus.UNCHECKED
UNSTABLE, REFUTED, FAILED = TheoremStatus.UNSTABLE, TheoremStatus.REFUTED, TheoremStatus.FAILED
INCONSISTENT, ERROR = TheoremStatus.INCONSISTENT, TheoremStatus.ERROR

# keyed by ``expect``, which a result read from JSON may lack (None: no status is expected)
EXPECTED: dict[str | None, tuple[TheoremStatus, ...]] = {
    "holds": (PROVED, PROVED_BOUNDED, CHECKED), "refuted": (REFUTED,)}


def compose(expect: str | None, symbolic: ProofAttempt | None,
            numeric: Sequence[NumericRecord]) -> TheoremStatus:
    """The theorem's status from its proof attempt (``.status``, ``.max_size``; or None) and
    its numeric records (``.status``, ``.decides_truth``, ``.counterexample``)."""
    proof = getattr(symbolic, "status", None)
    if _inconsistent(symbolic, numeric):
        return INCONSISTENT
    exact_counterexample = proof == ProofStatus.REFUTED
    numeric_counterexample = any(r.counterexample_stands for r in numeric)
    counterexample = exact_counterexample or numeric_counterexample
    if not counterexample and (proof == ProofStatus.ERROR
                               or any(r.status == NumericStatus.ERROR for r in numeric)):
        return ERROR
    if expect == "refuted":
        if counterexample:
            return REFUTED
        shown_true = proof in _PROOFS or has_truth_evidence(numeric)
        return FAILED if shown_true else UNCHECKED
    if counterexample:
        return FAILED
    if unstable_formats(numeric):
        return UNSTABLE
    if proof in _PROOFS:
        return TheoremStatus(proof)
    return CHECKED if has_truth_evidence(numeric) else UNCHECKED


_PROOFS = (ProofStatus.PROVED, ProofStatus.PROVED_BOUNDED)


def is_ok(expect: str | None, status: str, numeric: Sequence[NumericRecord] = (),
          unstable_in: Iterable[str] = ()) -> bool:
    """The status is the one ``expect`` asks for, and no record crashed on the way (an exact
    counterexample decides the status, but a crash beside it must still fail the run). An
    instability is as expected only in formats the theorem declares (``unstable_in``)."""
    crashed = any(r.status == NumericStatus.ERROR for r in numeric)
    declared = (status == UNSTABLE and expect == "holds"
                and set(unstable_formats(numeric)) <= set(unstable_in))
    return (status in EXPECTED.get(expect, ()) or declared) and not crashed


def has_truth_evidence(numeric: Sequence[NumericRecord]) -> bool:
    return any(r.decides_truth and r.status == NumericStatus.PASSED for r in numeric)


def unstable_format_name(backend: str, dtype: str) -> str:
    """How ``unstable_in`` names a format: the dtype, or for float64 (the reference's format)
    the backend's too, "mlx float64", since only a backend computing it in less can be
    unstable there."""
    return dtype if dtype != "float64" else f"{backend} {dtype}"


def unstable_formats(numeric: Sequence[NumericRecord]) -> list[str]:
    """The formats (``float16``, ``mlx float64``) whose records failed without deciding truth,
    in the order first seen."""
    found: list[str] = []
    for r in numeric:
        if r.status == NumericStatus.FAILED and not r.counterexample_stands:
            name = unstable_format_name(r.backend, r.dtype)
            if name not in found:
                found.append(name)
    return found


def _inconsistent(symbolic: ProofAttempt | None,
                  numeric: Sequence[NumericRecord]) -> bool:
    if any(r.status == NumericStatus.INCONSISTENT for r in numeric):
        return True
    proof = getattr(symbolic, "status", None)
    failures = [r for r in numeric if r.counterexample_stands]
    if proof == ProofStatus.PROVED:
        return bool(failures)
    if proof == ProofStatus.PROVED_BOUNDED:
        bound = getattr(symbolic, "max_size", None) or 0
        return any(_largest_size(r) <= bound for r in failures)
    return False


def _largest_size(record: NumericRecord) -> float:
    sizes = (record.counterexample or {}).get("sizes") or {}
    return max(sizes.values(), default=float("inf"))
