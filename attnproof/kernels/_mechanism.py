"""The mechanism of a failure: what tells two failures of one cell apart as two defects.

A cell's search shrinks its first failure to a small case, and a second defect of the same
cell is shrunk away behind it: a kernel that double-counts its keys past 1,024 and also
returns NaN rows reads as the one smaller failure. So a failing cell searches again for a
failure of another *mechanism* (``_check``), a small hashable signature of a failing case:

* ``status``: what the kernel did, a case's word: ``fail`` (it returned outputs the rule
  rejects), ``raised``, ``layout`` (wrong shape or axis order), ``declaration`` (it refused
  what its declaration promises);
* ``output``: which output failed, ``out``, ``lse``, ``dq``, ``dk`` or ``dv`` (None where none
  was compared: the kernel raised, or returned the wrong shape);
* ``values``: what the failing output held: ``finite`` errors (judged against the rule, and
  against the proved bound beside it: the kind of failure a precision says anything about),
  ``non-finite`` values (NaN or ±∞ where the truth is finite, or a call that ran where its
  twin raised), or a broken ``convention`` (a fully masked row's output or lse, the causal
  alignment, a convention read differently from case to case), or ``bits`` (a kernel
  declared batch-invariant whose element differs, to the bit, from itself run alone), or
  ``slack`` (a packed kernel's gradient not 0 at tokens no sequence owns); None where
  nothing was compared;
* ``regime``: the size regime of the case, from its key and query lengths (below).

The regimes separate where tiled kernels are known to break, the smallest tile kernels use
being 16 (``_regimes.TILE_SIZES``) and the largest common chunk 1,024 keys or queries: a
length past 1,024 (a chunk-level bug: keys of a last partial chunk counted twice); a length
past a multiple of 16 (a ragged last tile, ragged for every tile size of 16 to 128 alike: a
tail dropped, counted twice or read past); a length of several whole tiles (the rescaling
between tiles); and one tile (the arithmetic itself). A case gets the first that applies, keys
before queries, as a case past 1,024 keys is past a multiple of 16 too. ``n_q > n_k`` alone is
no regime of its own: a defect that shows everywhere would be reported again for it, and the
bugs it separates (the causal alignment) are read as conventions.

A defect that shows in every regime is found again in the regimes after its first: a cell
keeps at most a few counterexamples (``_check.MAX_COUNTEREXAMPLES``), so it reads as one
defect in up to that many regimes, each saying so, never as more.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from ._cases import Case
from ._regimes import TILE_SIZES

if TYPE_CHECKING:
    from ._run import CaseResult

TILE = TILE_SIZES[0]  # the smallest tile: a length ragged for it is ragged for every tile size
CHUNK = 1024  # the largest chunk common kernels split keys or queries by
FLOAT_MAX = sys.float_info.max  # a row's error where the kernel's value is not finite
# the statuses whose failures a precision says nothing of, and the words for each
NOT_NUMERICAL = {"raised": "raised", "layout": "returned the wrong layout",
                 "declaration": "contradicts its declaration",
                 "crashed": "its worker crashed", "timed-out": "its worker timed out"}
VALUES_WORDS = {"finite": "finite errors in {output}",
                "non-finite": "non-finite {output} where the truth is finite",
                "convention": "{output} breaks a convention",
                "bits": "{output} not the same to the bit beside other batch elements",
                "slack": "{output} not 0 at tokens no packed sequence owns"}


class Mechanism(NamedTuple):
    """What tells one failure of a cell from another (the module's docstring)."""

    status: str
    output: str | None
    values: str | None
    regime: str

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


def mechanism_of(case: Case, result: CaseResult) -> Mechanism:
    """The mechanism of a failing case's result (a ``_run.CaseResult``)."""
    compared = result.status == "fail"
    output = (result.output or result.detail.get("output")) if compared else None
    return Mechanism(result.status, output, failed_values(result), size_regime(case))


def failed_values(result: CaseResult) -> str | None:
    """``finite``, ``non-finite``, ``convention``, ``bits`` or ``slack`` for a result the rule
    failed; None where the kernel raised or returned another shape. A failure with no error of
    its own (no ``kernel_error``, no ``difference`` between two calls) that read conventions
    broke one of them: the checks of a fully masked row and of the causal alignment return the
    conventions they read with their verdict, and ``_check`` marks one read differently from
    case to case.
    A row's error is the largest finite float where the kernel's value is NaN or ±∞ and the
    truth's finite (``_run._row_errors`` writes it so), and a call that ran where its twin
    raised has no error but an infinite ratio: both are non-finite."""
    if result.status != "fail":
        return None
    detail = result.detail
    if detail.get("bitwise"):  # sameness promised and broken: no error to judge a precision by
        return "bits"
    if "slack" in detail:  # a gradient where there is none: no error to judge a precision by
        return "slack"
    error = detail.get("kernel_error", detail.get("difference"))
    if "convention" in detail or (error is None and result.conventions):
        return "convention"
    measured = error if error is not None else result.ratio
    finite = measured is not None and math.isfinite(measured) and measured < FLOAT_MAX
    return "finite" if finite else "non-finite"


def size_regime(case: Case) -> str:
    """The size regime of ``case``: the first of the module's regimes its lengths reach."""
    for axis, length in (("n_k", case.n_k), ("n_q", case.n_q)):
        if length > CHUNK:
            return f"{axis} past {CHUNK}"
    for axis, length in (("n_k", case.n_k), ("n_q", case.n_q)):
        if length > TILE and length % TILE:
            return f"{axis} past a multiple of {TILE}"
    for axis, length in (("n_k", case.n_k), ("n_q", case.n_q)):
        if length > TILE:
            return f"{axis} several whole tiles of {TILE}"
    return f"one tile (n_q, n_k ≤ {TILE})"


def numerical(mechanism: dict | None) -> bool:
    """Whether a failure's errors say something of the kernel's precision: finite errors
    judged by the rule. (A failure of no known mechanism, in a file written before they were
    recorded, counts as numerical, as every failure did then.)"""
    return mechanism is None or (mechanism["status"] == "fail"
                                 and mechanism["values"] == "finite")


def what_failed(mechanism: dict) -> str:
    """"non-finite out where the truth is finite", "raised": the mechanism but its regime."""
    status, values = mechanism["status"], mechanism.get("values")
    if status == "fail" and values in VALUES_WORDS:
        return VALUES_WORDS[values].format(output=mechanism.get("output") or "an output")
    return NOT_NUMERICAL.get(status, status)


def words(mechanism: dict) -> str:
    """"non-finite out where the truth is finite; n_q past a multiple of 16"."""
    return f"{what_failed(mechanism)}; {mechanism['regime']}"


def not_numerical_reason(mechanism: dict | None) -> str | None:
    """Why a failure's errors say nothing of the kernel's precision; None where they do."""
    return None if mechanism is None or numerical(mechanism) else what_failed(mechanism)
