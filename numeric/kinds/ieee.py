"""The numeric route of IEEE values: the formula evaluated as written on a backend, in a dtype.

The same written formula the symbolic route encloses (definitions and vocabulary spelled out,
nothing rewritten for stability) is evaluated operation by operation with the backend's own
arithmetic in the record's dtype: each literal is placed into the dtype (−1e9 becomes −∞ in
float16), sums are added in the order the symbolic route adds them, x/y is one division. Fixed
inputs are placed as written; free inputs are drawn in float64 (the ends of their range, zeros
where allowed, then uniform) and placed into the dtype. Every entry of every row must fall in
the claimed class (NaN, ±∞, exactly 0, finite) or, for a finite claim, within its stated
bounds; the first row that does not is the counterexample.

Backends are not all IEEE to the last bit, and a failed record says so: JAX and MLX on the CPU
flush subnormal results to zero (float32 exp(−100) is 0 there, 3.8e−44 in NumPy), so a claim
that rests on a subnormal can fail on them where the case analysis, which keeps subnormals,
holds; MLX computes float64 exp in float32, so its float64 records are skipped.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp

from attnproof.symbolic.kinds import ieee as kind
from attnproof.symbolic.route import AsWritten, index_env

from ..route import (
    Array,
    ArrayModule,
    Evidence,
    Failure,
    NativeDevice,
    Passed,
    Unsupported,
    find_failure,
    numeric_route,
    search_seed,
    to_numpy,
)
from ._evaluate import ArrayArithmetic

if TYPE_CHECKING:
    from attnproof.symbolic import Theorem
    from attnproof.symbolic.kinds.ieee import Expected, Format
    from attnproof.symbolic.route import Env, InputKey

    from .. import Profile
    from ..route import Backend, Where

# one case: a size assignment and the seed its batch is drawn from
Case = tuple[dict[str, int], int]


@numeric_route(kind.IEEEValue)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    """Every declared size assignment, one case each (the domain enumerated, not drawn),
    through the driver's search in order: its batch's free entries drawn from the case's seed,
    the search's seed plus the case's number."""
    row, dtype, device = where.row, where.dtype, where.device
    claim = cast(kind.IEEEValue, theorem.claim)  # the route of IEEEValue: the driver's lookup
    if row.measured_as(dtype) != dtype:
        return Evidence(outcome=Unsupported("MLX evaluates exp in float32 for float64 arrays "
                                            "(exp(89) = inf), so it has no float64 IEEE values "
                                            "to compare"))
    searched_from = search_seed(profile, seed)
    cases = [(sizes, (searched_from + number) % 2**32)
             for number, sizes in enumerate(claim.size_assignments())]
    judged = _Judged(theorem, row, dtype, row.devices()[device],
                     batch=max(8, profile.truth.batch // 4))
    with row.scope(judged.place_on), np.errstate(all="ignore"):
        find_failure(None, judged.fails, 0, searched_from, explicit=cases)
    if judged.failure is not None:
        return Evidence(examples=1, instances=judged.entries * judged.batch,
                        worst_ulps=judged.worst, seed=searched_from, outcome=judged.failure)
    # with every input given by at=, each entry is one instance however many rows repeat it
    rows = judged.batch if judged.drawn_any else 1
    return Evidence(
        examples=judged.entries, instances=judged.entries * rows, worst_ulps=judged.worst,
        seed=searched_from, outcome=Passed(
            f"evaluated as written in {dtype} on {row.name}, op by op (eagerly, in every "
            f"mode: a jit per size would cost more than the check): {judged.entries} entries "
            f"× {rows} rows, each {judged.expected.describe()}",
            fixed_inputs=None if judged.drawn_any else (
                "fixed inputs: every input is given by at=, and each entry was evaluated at "
                "it")))


class _Judged:
    """One case at a time: every entry of the written formula at one size assignment,
    evaluated on the backend in the record's dtype, against the claimed class or bounds."""

    def __init__(self, theorem: Theorem, row: Backend, dtype: Format, place_on: NativeDevice,
                 batch: int) -> None:
        self.theorem, self.row, self.dtype, self.place_on = theorem, row, dtype, place_on
        self.batch = batch
        self.xp = row.namespace(row.load(), dtype)
        self.claim = cast(kind.IEEEValue, theorem.claim)  # the route of IEEEValue
        self.expr = kind.written(theorem, self.claim)
        self.expected = self.claim.claimed[dtype.name]
        self.entries, self.worst, self.drawn_any = 0, 0.0, False
        self.failure: Failure | None = None

    def fails(self, case: Case) -> bool:
        sizes, seed = case
        theorem, claim = self.theorem, self.claim
        fixed = kind.fixed_values(theorem, claim, sizes)
        self.drawn_any = self.drawn_any or bool(kind.free_entries(theorem, sizes, fixed))
        drawn = _draw(theorem, sizes, fixed, self.batch, np.random.default_rng(seed))
        arrays = {_name(k): self.row.place(self.xp, v, self.dtype.storage, self.place_on)
                  for k, v in drawn.items()}
        arithmetic = _BackendArithmetic(self.xp, self.row, self.dtype, self.place_on, arrays)
        evaluation = AsWritten(arithmetic, sizes, fixed)
        for env in index_env(self.expr, sizes):
            values = to_numpy(evaluation.eval(self.expr, env)) * np.ones(self.batch)
            self.entries += 1
            self.worst = max(self.worst, _error_ulps(values, self.expected, self.dtype))
            wrong = ~_accepted(values, self.expected, self.dtype)
            if wrong.any():
                first = int(np.argmax(wrong))
                self.failure = _failure(sizes, env, fixed, drawn, first, values[first],
                                        self.expected, self.dtype)
                return True
        return False


def _error_ulps(values: np.ndarray, expected: Expected, fmt: Format) -> float:
    """How far the finite values are from a number the claim names, in ulps of the format at
    that number; 0 for a claim of a class or a range, which a value meets or does not."""
    if not isinstance(expected, kind.Near):
        return 0.0
    centre = float(kind.as_mpf(expected.value))
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 0.0
    return float(np.max(np.abs(finite - centre)) / float(fmt.ulp(centre)))


def _accepted(values: np.ndarray, expected: Expected, fmt: Format) -> np.ndarray:
    bounds = expected.bounds(fmt)
    if bounds is None:
        return np.isnan(values)
    lo, hi = float(bounds[0]), float(bounds[1])
    return ~np.isnan(values) & (values >= lo) & (values <= hi)


def _failure(sizes: dict[str, int], env: Env, fixed: dict[InputKey, sp.Expr],
             drawn: dict[InputKey, np.ndarray], row_number: int, value: float,
             expected: Expected, dtype: Format) -> Failure:
    shown = {kind.entry_name(k): str(v) for k, v in list(fixed.items())[:8]}
    shown.update({kind.entry_name(k): f"{float(v[row_number]):.6g}"
                  for k, v in list(drawn.items())[:8] if k not in fixed})
    return Failure({"format": dtype, "sizes": dict(sizes), "indices": kind.indices_text(env),
                    "values": shown, "lhs": _class(value), "rhs": expected.describe()},
                   f"evaluated as written in {dtype}: {_class(value)}, where the claim says "
                   f"{expected.describe()}")


def _class(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:.8g}"


def _draw(theorem: Theorem, sizes: dict[str, int], fixed: dict[InputKey, sp.Expr], batch: int,
          rng: np.random.Generator) -> dict[InputKey, np.ndarray]:
    """Float64 values per input key, shape (batch,): fixed ones repeated, free ones drawn with
    the ends of their range and zero first."""
    drawn = {}
    for key, value in fixed.items():
        drawn[key] = np.full(batch, _float(value))
    for number, (key, domain) in enumerate(kind.free_entries(theorem, sizes, fixed)):
        low, high = kind.domain_range(domain)
        values = rng.uniform(low, high, batch)
        for row_number, corner in enumerate(kind.CORNERS.values()):
            values[row_number] = corner(number, low, high)
        drawn[key] = values
    return drawn


def _name(key: InputKey) -> str:
    """An input's key as a string, so the arrays form a dict a jit can trace."""
    return kind.entry_name(key)


def _float(value: sp.Expr) -> float:
    if value is sp.nan:
        return math.nan
    if value in (sp.oo, -sp.oo):
        return math.inf if value == sp.oo else -math.inf
    return float(value)


class _BackendArithmetic(ArrayArithmetic):
    """The arithmetic of :class:`AsWritten` on a backend's arrays in the record's dtype: each
    literal placed into the dtype once, each operation one call of the backend."""

    def __init__(self, xp: ArrayModule, row: Backend, dtype: Format, device: NativeDevice,
                 arrays: dict[str, Array]) -> None:
        super().__init__(xp)
        self.row, self.dtype, self.device = row, dtype, device
        self.arrays = arrays
        self.literals: dict[float, Array] = {}

    def literal(self, value: sp.Expr) -> Array:
        number = _float(value)
        if number not in self.literals:
            self.literals[number] = self.row.place(self.xp, np.full(1, number), self.dtype.storage,
                                                   self.device)
        return self.literals[number]

    exact = size = literal  # an integer, as a literal of the dtype

    def input(self, key: InputKey) -> Array:
        return self.arrays[_name(key)]
