"""Precision across lengths: the precision a kernel behaves like must not change with the
number of keys, past what a change of summation order explains.

A kernel may switch paths with the sequence's length (TF32 products, a bfloat16 fast path,
another accumulator only past some n), and every case it answers may still sit within what
some rule allows. So each case of ``precision_across_lengths`` is a pair: 64 queries over a
long key length (129, 257 or 1,025: past the block multiples where kernels switch) and its
*short twin*, the same sizes and values drawn over 32 keys. The precision each behaves like
is estimated from its own rows (``_precision.estimate``: 192 rows, three heads of 64 queries),
and the case fails where the two differ by more than

    log2(n_long / n_short) + FLAG_BITS

bits and the coarser of the two is less precise than declared (FLAG_BITS under the declared
bits). The first term is what summation order alone accounts for: the error bound of a
recursive sum grows in proportion to its length (gamma_n, about n u), and the sums of a
softmax row have terms of one sign, whose errors grow so too, where the plain references the
estimate is measured against sum pairwise (errors growing as log n). Measured by
``python benchmarks/length_precision.py`` (12 seeds of each fill, each length): an honest
float32 kernel summing key by key reads 23.4 to 24.0 bits at 32 keys and 19.2 to 23.2 at
1,025, MLX's fast SDPA 23.3 to 24.1 and 19.3 to 23.3 (its float32 error grows with length as
such a kernel's does), 4.9 bits apart at most where 7 are allowed; a kernel on TF32 products
from 512 keys reads 24 and 10.6 to 12.8, 11.2 bits or more apart; one in bfloat16 up to 64
keys 7.8 to 8.3 at 32 and 24 at every long length.

Where either length gives no estimate (float64 computation, or a probe that does not err more
than the declared reference, as where a half-precision output's rounding is every error), the
case is judged by the rule alone, as every property judges its cases, and the cell counts the
cases whose change was not judged, with why (``Cell.unchecked``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from . import _precision as precision
from ._cases import FILLS, Case
from ._shapes import (
    LENGTH_HEAD_DIM,
    LENGTH_HEADS,
    LENGTH_ROWS,
    LONG_KEYS,
    SHORT_KEYS,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._declaration import Kernel
    from ._precision import Sums

# the rows each length is asked with, and the lengths (``_shapes.LENGTH_RUNGS``)
ROWS, HEADS, HEAD_DIM = LENGTH_ROWS, LENGTH_HEADS, LENGTH_HEAD_DIM


def _case(n_k: int, fill: str = "gaussian", seed: int = 0) -> Case:
    return Case(n_q=ROWS, n_k=n_k, d_k=HEAD_DIM, d_v=HEAD_DIM, heads=HEADS, kv_heads=HEADS,
                fill=fill, seed=seed)


@st.composite
def cases(draw: st.DrawFn, kernel: Kernel | None = None) -> Case:
    """A long case: ``ROWS`` queries in ``HEADS`` heads over one of ``LONG_KEYS`` keys, its
    values drawn as any property's are (the fill, the seed)."""
    return _case(draw(st.sampled_from(LONG_KEYS)), draw(st.sampled_from(FILLS)),
                 draw(st.integers(0, 2**32 - 1)))


def explicit(kernel: Kernel | None = None) -> tuple[Case, ...]:
    """Past 1,024 keys with Gaussian and spiky scores, then past 256: where a kernel switching
    paths at 512 or 1,024 keys shows from every seed."""
    return (_case(LONG_KEYS[-1]), _case(LONG_KEYS[-1], "spikes", 1), _case(LONG_KEYS[1], seed=2))


def short_twin(case: Case) -> Case:
    """The case over ``SHORT_KEYS`` keys: its other sizes, fill and seed as they are."""
    return dataclasses.replace(case, n_k=SHORT_KEYS)


def allowance(n_long: int, n_short: int) -> float:
    """The bits two lengths' estimates may differ by with no change of precision: what
    summation order accounts for between them, and the flag's margin."""
    return math.log2(n_long / n_short) + precision.FLAG_BITS


def changed(long_sums: Sums | None, short_sums: Sums | None, n_long: int, n_short: int,
            dtype: Format, compute: Format) -> dict[str, Any] | None:
    """The two estimates where they differ past ``allowance`` and the coarser is less precise
    than declared; None where they do not (or where either length gives no estimate)."""
    at_long = precision.estimate(long_sums, dtype, compute)
    at_short = precision.estimate(short_sums, dtype, compute)
    if at_long is None or at_short is None:
        return None
    coarser = min((at_long, n_long), (at_short, n_short), key=lambda pair: pair[0]["bits"])
    gap = abs(at_long["bits"] - at_short["bits"])
    if gap <= allowance(n_long, n_short) or not coarser[0]["less_precise"]:
        return None
    return {"bits": {str(n_long): at_long["bits"], str(n_short): at_short["bits"]},
            "coarser_at": coarser[1], "gap": round(gap, 2),
            "allowed": round(allowance(n_long, n_short), 2), "declared": compute.name}


def unmeasured(long_sums: Sums | None, short_sums: Sums | None, dtype: Format,
               compute: Format) -> str | None:
    """Why the two lengths' precision cannot be compared, where it cannot: why either gives
    no estimate (``_precision.unestimable``)."""
    return precision.unestimable(long_sums, dtype, compute) or \
        precision.unestimable(short_sums, dtype, compute)


def words(change: dict[str, Any], n_long: int, n_short: int) -> str:
    """"precision changes with length: O behaves like 11 bits at 1,025 keys and 24 at 32 ..."."""
    bits = change["bits"]
    return (f"precision changes with length: O behaves like {bits[str(n_long)]:.1f} bits at "
            f"n_k = {n_long} and {bits[str(n_short)]:.1f} bits at n_k = {n_short} (its short "
            f"twin), declared {change['declared']}: {change['gap']:.1f} bits apart, past the "
            f"{change['allowed']:.1f} a change of summation order explains")
