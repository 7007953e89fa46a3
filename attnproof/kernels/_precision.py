"""The precision a kernel behaves like: the unit roundoff u, in bits of mantissa, of a plain
evaluation whose errors in the output O match the kernel's.

Each row's error is taken relative to the proved error bound of the declared precision
(``_proved``: the block-wise algorithm's bound times the row's abs-scale; where no bound
applies, a bias or a score modification or a framework without a rounding model, the row's
condition 1 + max |score| times its abs-scale), so that rows of every size and conditioning
weigh alike, and summed over the rows of a cell's decided cases (rows with a finite kernel
error; fully masked rows have none to speak of). The bound is worst-case: an honest kernel's
errors sit far below it, by a slack the bound does not tell. Two plain references computed on
the same rows measure it: the one the rule compares with, at the declared precision (unit
roundoff u_d, its sum D: the output format's u where it is coarser, since the result is
rounded to it), and a probe 2 bits coarser (u_p = 4 u_d, every step and the inputs rounded to
it, sum P). Rounding errors grow in proportion to u, so the errors of a plain evaluation at u
lie on the line through (u_d, D) and (u_p, P), and the kernel's sum K lands on it at

    u = u_d + (K − D) (u_p − u_d) / (P − D).

A kernel that is the declared reference gets u_d exactly. One computing at a coarser u (TF32
products, bfloat16 inside) gets that u: the probe rounds its inputs and every step, as such a
kernel does, which the declared reference, whose inputs are already in its format, does not
(measured on the planted kernels: TF32 products declared float32, 11.4 to 11.5 bits for 11;
bfloat16 inside, declared float16, 8.0 to 8.1 for 8; the declared reference's ratio alone
says 13.1 and 7.7). A kernel is flagged when it behaves like more than FLAG_BITS fewer bits
than declared. A kernel declared to compute in float64 gets no estimate: the truth is float64
arithmetic too, which a float64 reference's coincides with wherever they round alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from attnproof.symbolic import FLOAT64

from ._frameworks import probe, reference_unit

if TYPE_CHECKING:
    from attnproof.symbolic import Format

# a kernel is flagged as less precise than declared below this many bits under the declared:
# the 2x rule already lets a kernel's worst error be twice the reference's (a bit), and honest
# kernels measured up to 0.92 bit below on average in a cell (torch's float32 SDPA on the CPU,
# strided inputs with head dims to 256), so a flag needs twice that: 4x the unit roundoff
FLAG_BITS = 2.0
# the probe is this many bits coarser than the declared precision
PROBE_BITS = 2
# the truth is computed in float64: a declared precision needs this many bits below its 53 to
# be told apart from it (a float64 reference's arithmetic coincides with the truth's, so its
# error against the truth understates it)
TRUTH_HEADROOM = 8

# the summed relative errors of a cell's rows: kernel, declared, probe (floats), rows (a count)
Sums: TypeAlias = dict[str, float]
# an estimate as reports write it (JSON): declared, bits, unit roundoff, sums, ...
Estimate: TypeAlias = dict[str, Any]


def bits(u: float) -> float:
    """The mantissa bits (the implicit one included) of a unit roundoff: 24 for float32."""
    return -math.log2(u)


def resolvable(dtype: Format, compute: Format) -> bool:
    """Whether the float64 truth can tell the precision apart (not a float64 computation)."""
    return bits(reference_unit(dtype, compute)) <= bits(FLOAT64.unit_roundoff) - TRUTH_HEADROOM


def probe_precision(dtype: Format, compute: Format) -> Format:
    """The probe's precision: PROBE_BITS coarser than the one that limits the reference."""
    return probe(round(bits(reference_unit(dtype, compute))) - PROBE_BITS)


def row_sums(got: np.ndarray, exact: np.ndarray, size: np.ndarray, plain: np.ndarray,
             coarse: np.ndarray, bound: np.ndarray | None, condition: np.ndarray,
             rows: np.ndarray, compute: Format) -> Sums | None:
    """The kernel's, the declared reference's and the probe's errors of O relative to each
    row's bound, summed over the ``rows`` (b, h, n_q) where all three are finite."""
    with np.errstate(all="ignore"):
        errors = [np.max(np.abs(a - exact), axis=-1) for a in (got, plain, coarse)]
        relative = np.full(condition.shape, np.nan) if bound is None else bound
        relative = np.where(np.isfinite(relative), relative,
                            compute.unit_roundoff * condition)
        norm = relative * np.max(size, axis=-1)
    usable = rows & (norm > 0) & np.all([np.isfinite(e) for e in errors], axis=0)
    if not usable.any():
        return None
    with np.errstate(over="ignore"):  # a large error over a row of tiny weights (a sink
        # taking nearly all of them) is an infinite relative error, read as such
        kernel, declared, probed = (float(np.sum(e[usable] / norm[usable])) for e in errors)
    return {"kernel": kernel, "declared": declared, "probe": probed, "rows": int(usable.sum())}


def add(total: Sums | None, part: Sums | None) -> Sums | None:
    if part is None:
        return total
    if total is None:
        return dict(part)
    return {key: total[key] + part[key] for key in total}


def unestimable(sums: Sums | None, dtype: Format, compute: Format) -> str | None:
    """Why no precision can be estimated from ``sums``, where none can; None where it can."""
    if not resolvable(dtype, compute):
        return (f"no precision estimate in {compute} computation (the float64 truth cannot "
                "tell its precision)")
    if sums is None or sums["rows"] == 0:
        return "no precision estimate: no row with finite errors"
    if not sums["probe"] > sums["declared"] > 0:  # nothing to measure the slope by
        return (f"no precision estimate: a probe {PROBE_BITS} bits coarser errs no more than "
                "the declared reference (the output's rounding is every error)")
    return None


def estimate(sums: Sums | None, dtype: Format, compute: Format) -> Estimate | None:
    """The precision the kernel behaves like, from the summed relative errors; None where
    none can be estimated (``unestimable``)."""
    if unestimable(sums, dtype, compute) is not None:
        return None
    assert sums is not None  # ``unestimable`` gives a reason for None sums
    u_d = reference_unit(dtype, compute)
    u_p = probe_precision(dtype, compute).unit_roundoff
    kernel, declared, probed = sums["kernel"], sums["declared"], sums["probe"]
    u = u_d + (kernel - declared) * (u_p - u_d) / (probed - declared)
    if u <= 0:  # far more accurate than the declared reference: its errors' ratio says how far
        u = u_d * kernel / declared
    limited = dtype.unit_roundoff > compute.unit_roundoff
    estimated = bits(u) if u > 0 else math.inf
    # a record: the formats by their names
    return {"declared": compute.name, "declared_bits": round(bits(u_d), 2),
            "limited_by": dtype.name if limited else None, "unit_roundoff": u,
            "bits": round(estimated, 2), "error_ratio": kernel / declared,
            "rows": sums["rows"], "less_precise": estimated < bits(u_d) - FLAG_BITS,
            "sums": dict(sums)}


def pooled(cells: Iterable[Estimate | None], dtype: Format, compute: Format) -> Estimate | None:
    """The estimate over every row of several cells' estimates (their sums added)."""
    total: Sums | None = None
    for precision in cells:
        total = add(total, (precision or {}).get("sums"))
    return estimate(total, dtype, compute)


def words(precision: Estimate | None) -> str:
    """"declared float32, behaves like 11 bits" (and what the output's format limits)."""
    if precision is None:
        return ""
    limited = f" ({precision['limited_by']} output: {precision['declared_bits']:.0f} bits)" \
        if precision.get("limited_by") else ""
    shown = "more than 60" if precision["bits"] > 60 else f"{precision['bits']:.0f}"
    flag = ", less precise than declared" if precision["less_precise"] else ""
    return f"declared {precision['declared']}{limited}, behaves like {shown} bits{flag}"
