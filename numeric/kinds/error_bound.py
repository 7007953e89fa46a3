"""Numeric route of error bounds: the observed error of the expression, evaluated as written on
a backend in a format, against the bound the claim states for that instance.

The rounding model the symbolic route assumes is declared per backend and format
(``numeric/_rounding.py``), with where each figure comes from, and held to the backend on every
run, which is what the backend, not the bound, answers for:

* before anything else the route measures the backend's exp and log in that format against a
  wider one on ``MODEL_SAMPLES`` arguments; one less accurate than declared leaves the record
  unjudged (skipped), its reason a finding about the backend that names the function, the
  error and the backend's version: a backend cannot be absorbed into a bound that assumes
  better, nor its fault read as the bound's;
* it measures where the backend's exp stops being finite (``ExpDomain``): MLX 0.32.4's float32
  exp returns inf from x = 88.0000076, below float32's log-max 88.72. An instance that takes
  exp past that limit is outside the model, as one that overflows the format is, and the
  record says how many there were;
* an instance above its bound is asked whether the backend's own exp or log broke the model at
  one of its arguments (``Evaluation.breaches``); if so it is outside the model too, and named.

Evaluation is as written, by the one as-written evaluator walked a whole axis at a time
(``_along_axes.py``), operation by operation in the record's format: inputs drawn and rounded
into the format, each literal rounded into it once, a sum added left to right (a loop, not the
backend's pairwise or blocked reduction), exp, division and products one call each, rowmax
exact. The exact value is
the same evaluation in a wider format (float64; numpy.longdouble, 64-bit significand, for
float64 records), whose own rounding is allowed for. Every instance's observed relative error
is compared with B at that instance (its sizes, its spread, the format's u and the declared
c_exp); one above B refutes the claim under the declared model, with the instance as the
counterexample. The largest observed/B ratio is the bound's tightness, and the search drives
it up with ``hypothesis.target``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp
from hypothesis import currently_in_test_context, target
from hypothesis import strategies as st

from attnproof.symbolic import FLOAT16, FLOAT64, Positive, ReduceMax
from attnproof.symbolic.kinds import error_bound as kind
from attnproof.symbolic.route import free_indices

from ..route import (
    BACKEND_FINDING,
    NO_MODEL,
    ROUNDING_MODEL,
    Array,
    ArrayModule,
    CannotDecide,
    Evidence,
    Failure,
    Passed,
    Rounding,
    Unsupported,
    find_failure,
    numeric_route,
    run_route_program,
    search_seed,
    to_numpy,
)
from ._along_axes import along_axes

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from attnproof.symbolic import Format, Theorem

    from .. import Profile
    from ..route import Backend, Where

# the claims this route checks
BoundClaim = kind.ErrorBound | kind.FirstOrderErrorBound | kind.AbsoluteErrorBound
# what the search draws: sizes, a pattern of scores, their scale, a seed
Drawn = tuple[dict[str, int], str, float, int]

# arguments of exp and log the route measures them on (NumPy's float32 log, seeds 0-19: at most
# 3.73u on 4,096 of them, 3.86u on 2^16, 4.03u on 10^6)
MODEL_SAMPLES = 2**16
INSTANCES_PER_EXAMPLE = 32
# a batch of short rows costs what a batch of long ones does when it holds as many entries: an
# error bound's violation at two keys needs its few roundings aligned, which a batch of 32
# instances shows from some seeds only
ENTRIES_PER_BATCH = 32 * 1024
MOST_INSTANCES = 1024
WIDER = {FLOAT64: np.longdouble}


@numeric_route(kind.ErrorBound, kind.FirstOrderErrorBound, kind.AbsoluteErrorBound)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    row, dtype, device = where.row, where.dtype, where.device
    model = ROUNDING_MODEL.get((row.name, dtype.name))
    if model is None:
        return Evidence(outcome=Unsupported(f"no rounding model declared for {row.name} "
                                            f"{dtype}" + NO_MODEL.get((row.name, dtype.name), "")))
    # the route of the three error bounds: the driver's lookup says so
    claim = cast(BoundClaim, theorem.claim)
    evaluation = Evaluation(theorem, row, dtype, device)
    for function, declared in (("exp", model.c_exp), ("log", model.c_log)):
        model_error = evaluation.accuracy(function, seed)
        if model_error > declared:
            # the backend breaks the model the bound is proved under: no instance can be
            # judged here, and the fault is the backend's, not the bound's
            return Evidence(outcome=Unsupported(
                f"{BACKEND_FINDING}{backend_version(row)}'s {function} in {dtype} is off by "
                f"{model_error:.2f}u, declared at most {declared}u: the rounding model is "
                f"wrong here ({model.source}); the bound is not judged under a model the "
                "backend does not meet"))
    seen = _Seen()
    searched_from = search_seed(profile, seed)

    def fails(structure: Drawn) -> bool:
        sizes, pattern, scale, draw_seed = structure
        rng = np.random.default_rng((searched_from, draw_seed))
        arrays = _draw(theorem, sizes, pattern, scale, rng, evaluation.dtype_numpy)
        ratio = evaluation.ratios(claim, model, sizes, arrays)
        assert ratio.ratio is not None  # Evaluation.ratios always sets it
        if currently_in_test_context():  # a drawn structure, not a corner run before them
            target(float(np.nanmax(np.where(np.isfinite(ratio.ratio), ratio.ratio, 0.0),
                                   initial=0.0)), label="observed error / bound")
        return seen.note(ratio, sizes, arrays)

    # the corners first, then draws that climb toward the bound (the largest observed/B is
    # its tightness); a violation is shrunk to the smallest sizes that still show it. Twice the
    # truth's examples: 4 structures under the quick profile, 8 by default, 200 thorough (each
    # structure new sizes, so a new program to compile: the search's cost scales with it)
    find_failure(_structures(theorem, dtype), fails, 2 * profile.truth.examples, searched_from,
                 _corners(theorem, dtype, every_corner=profile.every_corner), targets=True)
    return _evidence(model, seen, evaluation, searched_from)


# -- draws --------------------------------------------------------------------------------------

# "ascending": every row climbs by small steps to a total rise of ``scale``, so a running
# maximum grows at every block and every rescaling rounds (in random order it grows O(log n)
# times, and e^0 = 1 is exact), while every term still weighs (the first within e^-scale)
PATTERNS = ("gaussian", "spread", "ties", "one large", "ascending")


# Score scales: float16's exp overflows above 11 and leaves its normal range below −9.7, where
# the model (no overflow, no underflow) does not apply; the other formats reach e^±88 or more.
SCALES = {FLOAT16: (0.25, 1.0, 2.0)}
DEFAULT_SCALES = (1.0, 4.0, 16.0)


def _structures(theorem: Theorem, dtype: Format) -> SearchStrategy[Drawn]:
    """Sizes (each an end of its range, or log-uniform across it), a pattern, a scale and a
    seed. Log-uniform: a bound's count grows with n while the errors of exp and division do
    not, so a count too small shows at n = 2 or 3 and a count too small in n at hundreds; n
    uniform on [1, 512] would put seven draws in eight above 64."""
    dims = theorem.dims
    sizes = st.tuples(*(st.one_of(st.sampled_from(sorted({d.sizes.low, d.sizes.high})),
                                  _log_uniform(d.sizes.low, d.sizes.high)) for d in dims))
    return st.tuples(sizes.map(lambda s: dict(zip((d.name for d in dims), s, strict=True))),
                     st.sampled_from(PATTERNS), st.sampled_from(SCALES.get(dtype, DEFAULT_SCALES)),
                     st.integers(0, 2**31 - 1))


def _log_uniform(low: int, high: int) -> SearchStrategy[int]:
    """An integer in [low, high] whose binary magnitude is uniform: an octave [2^b, 2^(b+1)),
    then a size in it (shrinking toward the lowest octave)."""
    octaves = range(max(low, 1).bit_length() - 1, high.bit_length())
    return st.sampled_from(octaves).flatmap(
        lambda b: st.integers(max(low, 2**b), min(high, 2 ** (b + 1) - 1)))


def _corners(theorem: Theorem, dtype: Format, every_corner: bool = True) -> list[Drawn]:
    """Every size at its largest; each one at its smallest, and at the smallest with more than
    one term, the others at their largest. Where a count grows fastest (the longest row in
    blocks of one key), and where it is smallest against the errors every term carries (exp's,
    the division's): random sizes reach both rarely. Each with Gaussian scores, with tied ones
    (equal terms: every addition of a left-to-right sum rounds the same way, recursive
    summation's worst case), with the widest spread (exp's error grows with |x| on some
    backends: MLX's float32 exp, declared at 72u) and with ascending ones at every scale (a
    running maximum that rises at every block, by steps as large as the format allows: where
    the rescalings' rounding adds up, which one scale alone shows in some draws only).

    Without ``every_corner`` (the quick profile): every pattern and scale at the largest sizes,
    where the counts are largest, and at the smaller corners Gaussian scores, ascending ones at
    the smallest scale, where every term still weighs (at the largest, the first terms weigh
    e^-16 and a rescaling's error on them vanishes: blocks of one key without the rescalings'
    cost were missed from 10 seeds of 10 there, and caught from 20 of 20 at the smallest), and
    the widest spread, where the backend's exp sees its largest arguments (without it, a NumPy
    whose float32 exp overflows from 40, its limit not measured, was left undecided from seed
    0); the draws still reach every pattern, scale and size, only less often."""
    dims = theorem.dims
    scales = SCALES.get(dtype, DEFAULT_SCALES)
    largest = {d.name: d.sizes.high for d in dims}
    corners = [largest]
    for d in dims:
        for size in (d.sizes.low, d.sizes.low + 1):
            corner = {**largest, d.name: min(size, d.sizes.high)}
            if corner not in corners:
                corners.append(corner)
    scores = (("gaussian", scales[1]), ("ties", scales[1]), ("spread", scales[-1]),
              *(("ascending", scale) for scale in scales))
    fewer = (("gaussian", scales[1]), ("ascending", scales[0]), ("spread", scales[-1]))
    return [(sizes, pattern, scale, 0) for sizes in corners
            for pattern, scale in (scores if every_corner or sizes is largest else fewer)]


def batch_size(theorem: Theorem, sizes: dict[str, int]) -> int:
    """Instances in a batch at ``sizes``: ``ENTRIES_PER_BATCH`` entries of the inputs, at least
    ``INSTANCES_PER_EXAMPLE`` and at most ``MOST_INSTANCES`` instances."""
    entries = sum(math.prod(sizes[d.name] for d in tensor.dims) for tensor in theorem.tensors)
    return min(MOST_INSTANCES, max(INSTANCES_PER_EXAMPLE, ENTRIES_PER_BATCH // max(entries, 1)))


def _draw(theorem: Theorem, sizes: dict[str, int], pattern: str, scale: float,
          rng: np.random.Generator, numpy_dtype: np.dtype) -> dict[str, np.ndarray]:
    arrays = {}
    batch = batch_size(theorem, sizes)
    for tensor in theorem.tensors:
        shape = (batch, *(sizes[d.name] for d in tensor.dims))
        values = rng.standard_normal(shape) * scale
        if pattern == "spread":
            values = rng.uniform(-scale * 4, scale * 4, shape)
        elif pattern == "ties":
            values = np.broadcast_to(values[..., :1], shape).copy()
        elif pattern == "one large":
            values[..., 0] += 8 * scale
        elif pattern == "ascending":
            steps = rng.uniform(0.0, 2.0 * scale / shape[-1], shape)
            values = np.cumsum(steps, axis=-1)
        if isinstance(tensor.domain, Positive):  # a sum of exponentials: log-uniform
            low, high = np.log(tensor.domain.low), np.log(tensor.domain.high)
            values = np.exp(rng.uniform(low, high, shape))
        # inputs are numbers of the format: the model assumes no error in them
        arrays[tensor.name] = values.astype(numpy_dtype).astype(np.float64)
    return arrays


# -- evaluation as written ----------------------------------------------------------------------


@dataclass
class Bounded:
    """One bounded expression at a batch: its value as written in the format, its exact value,
    the scale its bound is relative to, and the bound at every entry."""

    computed: np.ndarray
    exact: np.ndarray
    scale: np.ndarray
    bound: np.ndarray


@dataclass
class Ratios:
    """Per instance, at its entry with the largest observed/B: the observed error, B there
    (NaN where the model gives none) and their ratio."""

    observed: np.ndarray
    bound: np.ndarray
    outside: int = 0  # instances whose exact intermediates leave the format's normal range
    ratio: np.ndarray | None = None
    beyond_exp: int = 0  # ... of them, those where an argument of exp is beyond the backend's
    # instance -> how the backend broke the model
    breaches: dict[int, str] = field(default_factory=dict)


class RangeWatch:
    """Per instance, whether some exact intermediate value lies outside the format's normal
    range (above its largest number, or nonzero below its smallest normal one), or some exact
    argument of exp lies beyond the largest at which the backend's exp is finite
    (``exp_limit``, measured by :func:`exp_domain`): the model assumes neither, so such
    instances get no bound. It keeps the arguments of exp and log too, so that an instance
    above its bound can be asked whether the backend's own exp or log broke the declared model
    there (:meth:`Evaluation.breaches`)."""

    def __init__(self, dtype: Format, batch: int, exp_limit: float = math.inf) -> None:
        self.largest, self.tiny = dtype.largest, dtype.smallest_normal
        self.exp_limit = exp_limit
        self.outside = np.zeros(batch, dtype=bool)
        self.beyond_exp = np.zeros(batch, dtype=bool)  # outside: exp's argument past its limit
        self.arguments: dict[str, list[np.ndarray]] = {"exp": [], "log": []}

    def __call__(self, value: Array) -> None:
        if not isinstance(value, np.ndarray) or value.ndim == 0:
            return
        magnitude = np.abs(value.astype(np.float64)).reshape(value.shape[0], -1)
        with np.errstate(invalid="ignore"):
            self.outside |= ((magnitude > self.largest)
                             | ((magnitude > 0) & (magnitude < self.tiny))).any(axis=1)

    def argument(self, function: str, value: Array) -> None:
        """``value``, an exact argument of exp or log, kept by instance (batch, entries)."""
        if not isinstance(value, np.ndarray) or value.ndim == 0:
            return
        flat = value.astype(np.float64).reshape(value.shape[0], -1)
        flat = np.broadcast_to(flat, (self.outside.shape[0], flat.shape[1]))
        self.arguments[function].append(flat)
        if function == "exp":
            with np.errstate(invalid="ignore"):
                beyond = (flat > self.exp_limit).any(axis=1)
            self.beyond_exp |= beyond
            self.outside |= beyond


@dataclass(frozen=True)
class ExpDomain:
    """Where a backend's exp is finite in a format, measured: ``limit`` is the largest argument
    below the first whose result is not finite (``first_infinite``), ``expected`` the largest
    number of the format below log(its largest number), where every correctly rounded exp is
    still finite. An ``early`` exp overflows before the format does: a fact about the backend,
    which the model then holds only up to ``limit``."""

    limit: float
    expected: float
    first_infinite: float | None

    @property
    def early(self) -> bool:
        return self.limit < self.expected


# the arguments exp_domain tries: evenly spread over [0, log max + 1], then bisected between the
# last finite result among them and the first that is not
DOMAIN_SAMPLES = 65536


class Evaluation:
    def __init__(self, theorem: Theorem, row: Backend, dtype: Format, device: str,
                 out: list[sp.Idx] | None = None) -> None:
        self.theorem, self.row, self.dtype = theorem, row, dtype
        self.xp = row.namespace(row.load(), dtype)
        self.device_name, self.device = device, row.devices()[device]
        self.dtype_numpy = dtype.numpy_dtype
        # without ``out``, the route's own claim: one of the error bounds
        self.out = (sorted(free_indices(cast(BoundClaim, theorem.claim).computed), key=str)
                    if out is None else out)

    def accuracy(self, function: str, seed: int | None) -> float:
        """The backend's largest error of exp or log relative to the result, in units of the
        declared u, against the wider format: exp on [−80, 10] (float16: [−15, 10]), log on
        e^[−20, 20] (the sums of exponentials lse takes); where the exact result leaves the
        format's normal range (log's zero at 1, exp's underflow) nothing is measured, and an
        exp that overflows early is :meth:`exp_domain`'s to report."""
        rng = np.random.default_rng(0 if seed is None else seed)
        low = -15.0 if self.dtype == FLOAT16 else -80.0
        x = (rng.uniform(low, 10.0, MODEL_SAMPLES) if function == "exp"
             else np.exp(rng.uniform(-9.0 if self.dtype == FLOAT16 else -20.0, 11.0,
                                     MODEL_SAMPLES)))
        errors = self.function_errors(function, x.astype(self.dtype_numpy).astype(np.float64))
        return float(np.max(errors, initial=0.0))

    def function_errors(self, function: str, x: np.ndarray) -> np.ndarray:
        """The backend's exp or log at ``x`` (numbers of the format) in this format, off from
        the exact result (in the wider format) by this many units of the declared u relative
        to it: inf where the backend's result is not finite and the exact one is, 0 where the
        exact one is outside the format's normal range (no model claims anything there)."""
        model = ROUNDING_MODEL[(self.row.name, self.dtype.name)]
        with self.row.scope(self.device):
            placed = self.row.place(self.xp, x, self.dtype.storage, self.device)
            computed = to_numpy(getattr(self.xp, function)(placed)).astype(np.float64)
        wider = WIDER.get(self.dtype, np.float64)
        with np.errstate(all="ignore"):
            exact = getattr(np, function)(x.astype(wider))
            modelled = ((np.abs(exact) > 4 * self.dtype.smallest_normal)
                        & (np.abs(exact) <= self.dtype.largest))
            error = np.abs(computed.astype(wider) - exact) / np.abs(exact) / model.u
        error = np.where(np.isfinite(computed), np.asarray(error, np.float64), np.inf)
        return np.where(modelled, error, 0.0)

    def exp_domain(self) -> ExpDomain:
        """Where this backend's exp is finite in this format (:class:`ExpDomain`), measured
        once per backend, format and device in a process."""
        return _exp_domain(self.row, self.dtype, self.device_name)

    def range_watch(self, batch: int) -> RangeWatch:
        """The watch of a batch: the format's range, and exp's as measured on this backend."""
        return RangeWatch(self.dtype, batch, self.exp_domain().limit)

    def breaches(self, watch: RangeWatch, rows: Sequence[int] | np.ndarray,
                 model: Rounding) -> dict[int, str]:
        """Of the instances ``rows`` (above their bound), those where the backend's own exp or
        log breaks the declared model at an argument the instance takes (its exact value
        rounded into the format): off by more than c_exp or c_log units of u, or not finite
        where the exact result is. Each with the sentence that names the operation, the
        argument and both results."""
        picked = np.asarray(sorted(rows), dtype=int)
        found: dict[int, str] = {}
        for function, declared in (("exp", model.c_exp), ("log", model.c_log)):
            for arguments in watch.arguments[function]:
                x = arguments[picked].astype(self.dtype_numpy).astype(np.float64)
                errors = self.function_errors(function, x.ravel()).reshape(x.shape)
                for k, row in enumerate(picked.tolist()):
                    worst = int(np.argmax(errors[k])) if errors.shape[1] else 0
                    if row not in found and errors.shape[1] and errors[k, worst] > declared:
                        found[row] = self._breach_sentence(function, float(x[k, worst]),
                                                           float(errors[k, worst]), declared)
        return found

    def _breach_sentence(self, function: str, x: float, error: float, declared: int) -> str:
        with self.row.scope(self.device):
            placed = self.row.place(self.xp, np.asarray([x]), self.dtype.storage, self.device)
            computed = float(to_numpy(getattr(self.xp, function)(placed)).astype(np.float64)[0])
        exact = float(getattr(np, function)(np.longdouble(x)))
        off = "not finite" if not math.isfinite(error) else f"off by {error:.3g}u"
        return (f"its {self.dtype} {function}({x!r}) = {computed!r} where the exact value is "
                f"{exact:.6g}: {off}, declared at most {declared}u")

    def ratios(self, claim: BoundClaim, model: Rounding, sizes: dict[str, int],
               arrays: dict[str, np.ndarray]) -> Ratios:
        with np.errstate(all="ignore"):  # overflow shows up as inf/NaN and is judged there
            return self._ratios(claim, model, sizes, arrays)

    def bounded(self, claim: BoundClaim, model: Rounding, sizes: dict[str, int],
                arrays: dict[str, np.ndarray], watch: RangeWatch) -> Bounded:
        """``claim.computed`` evaluated as written in the format and exactly (``watch`` sees
        the exact intermediates), its scale, and the claim's bound at every entry, the wider
        evaluation's own rounding allowed for."""
        computed = self.as_written(claim.computed, sizes, arrays, low=True)
        wider = WIDER.get(self.dtype, np.float64)
        exact = self.as_written(claim.computed, sizes, arrays, low=False, wider=wider,
                                watch=watch)
        if claim.relative_to == "abs-scale":
            scale = self.as_written(claim.computed, sizes, arrays, low=False, wider=wider,
                                    magnitude=True)
        elif claim.relative_to == "absolute":
            scale = np.ones_like(exact)
        else:
            scale = np.abs(exact)
        # the wider evaluation's own rounding, by the same analysis at its unit roundoff (the
        # host's long double is no format of the catalog: NumPy says what it holds)
        slack = bound_values(claim, sizes, arrays, float(np.finfo(wider).eps) / 2, 2,
                             self.theorem, self.out)
        bound = bound_values(claim, sizes, arrays, model.u, model.c_exp, self.theorem,
                             self.out, model.c_log) + slack
        return Bounded(computed, exact, scale, bound)

    def _ratios(self, claim: BoundClaim, model: Rounding, sizes: dict[str, int],
                arrays: dict[str, np.ndarray]) -> Ratios:
        watch = self.range_watch(instances(arrays))
        side = self.bounded(claim, model, sizes, arrays, watch)
        computed, exact, scale, bound = side.computed, side.exact, side.scale, side.bound
        wider = WIDER.get(self.dtype, np.float64)
        relative = np.abs(computed.astype(wider) - exact) / scale
        relative = np.where(scale == 0, np.where(computed == 0, 0.0, np.inf), relative)
        # entry by entry: the bound at one row never excuses the error at another
        per_entry = np.asarray(relative / bound, np.float64)
        batch = per_entry.shape[0]
        per_entry = np.where(np.isnan(per_entry), np.inf, per_entry).reshape(batch, -1)
        worst = per_entry.argmax(axis=1)
        pick = np.arange(batch)
        observed = np.asarray(relative, np.float64).reshape(batch, -1)[pick, worst]
        bound = np.broadcast_to(bound, relative.shape).reshape(batch, -1)[pick, worst]
        above = np.flatnonzero(~watch.outside & (per_entry[pick, worst] > 1.0))
        # an instance above its bound where the backend's own exp or log broke the model is
        # outside the model too: a finding about the backend, not a counterexample
        breaches = self.breaches(watch, above, model) if above.size else {}
        outside = watch.outside.copy()
        outside[list(breaches)] = True
        # outside the model (an intermediate overflows or underflows the format): no bound
        bound = np.where(outside, np.nan, bound)
        ratio = np.where(outside | np.isnan(bound), np.nan, per_entry[pick, worst])
        return Ratios(observed, np.asarray(bound, np.float64), int(watch.outside.sum()), ratio,
                      beyond_exp=int(watch.beyond_exp.sum()), breaches=breaches)

    def as_written(self, expr: sp.Expr, sizes: dict[str, int], arrays: dict[str, np.ndarray],
                   low: bool, wider: type[np.floating] = np.float64,
                   watch: RangeWatch | None = None, magnitude: bool = False) -> np.ndarray:
        """``expr`` walked along axes (``_along_axes``): in the record's format on the backend
        where ``low``, else exactly, in ``wider`` on NumPy, ``watch`` seeing every
        intermediate value, the abs-scale's where ``magnitude``."""
        arrays = arrays or _ONE_INSTANCE  # a claim with no inputs: one instance of constants
        if low:
            xp = self.xp
            with self.row.scope(self.device):
                placed = {k: self.row.place(xp, v, self.dtype.storage, self.device)
                          for k, v in arrays.items()}
                if self.row.stores_executables:  # one program per shape, not one dispatch
                    value = self._as_one_program(expr, sizes, placed)  # per operation
                else:
                    value = along_axes(xp, placed, sizes, self.out).eval(expr)
                # a constant side is a literal of the format: rounded into it once
                return to_numpy(value).astype(self.dtype_numpy).astype(np.float64)
        placed = {k: v.astype(wider) for k, v in arrays.items()}
        return along_axes(np, placed, sizes, self.out, watch, magnitude).eval(expr)

    def _as_one_program(self, expr: sp.Expr, sizes: dict[str, int],
                        placed: dict[str, Array]) -> Array:
        """The as-written evaluation as one program of the backend's, compiled once per
        machine (``run_route_program``)."""
        shape = tuple(sorted(sizes.items()))
        text = f"as written\n{sp.srepr(expr)}\n{shape}\n{[str(i) for i in self.out]}"
        jitted = _as_written_program(self.row.compile, self.xp, expr, shape, tuple(self.out))
        return run_route_program(f"{self.theorem.name}.as-written", text, jitted, placed,
                                 self.device)


def backend_version(row: Backend) -> str:
    """The backend's name and the version of its distribution (``MLX 0.32.4``): what a finding
    about the backend names."""
    try:
        version = metadata.version(row.package)
    except metadata.PackageNotFoundError:
        version = "(version unknown)"
    return f"{row.name} {version}"


@functools.cache
def _exp_domain(row: Backend, dtype: Format, device: str) -> ExpDomain:
    """The backend's exp on ``DOMAIN_SAMPLES`` numbers of the format evenly spread from 0 to
    one past its log-max, then bisected, number by number of the format, between the
    last finite result and the first that is not (:class:`ExpDomain`)."""
    numpy_dtype = dtype.numpy_dtype
    xp, placed_on = row.namespace(row.load(), dtype), row.devices()[device]

    def finite(x: np.ndarray) -> np.ndarray:
        with row.scope(placed_on), np.errstate(all="ignore"):
            result = xp.exp(row.place(xp, x, dtype.storage, placed_on))
            return np.isfinite(to_numpy(result).astype(np.float64))

    log_max = math.log(dtype.largest)
    grid = np.unique(np.linspace(0.0, log_max + 1, DOMAIN_SAMPLES)
                     .astype(numpy_dtype).astype(np.float64))
    expected = _largest_number_at_most(log_max, numpy_dtype)
    ok = finite(grid)
    if ok.all():
        return ExpDomain(float(grid[-1]), expected, None)
    first = int(np.argmin(ok))
    if first == 0:
        return ExpDomain(-math.inf, expected, float(grid[0]))
    low, high = (_bits(v, numpy_dtype) for v in (grid[first - 1], grid[first]))
    while high - low > 1:  # the last finite and the first non-finite, adjacent numbers
        middle = (low + high) // 2
        if finite(np.asarray([_number(middle, numpy_dtype)]))[0]:
            low = middle
        else:
            high = middle
    return ExpDomain(_number(low, numpy_dtype), expected, _number(high, numpy_dtype))


def _bits(value: float, numpy_dtype: np.dtype) -> int:
    """A positive number of the format as its bit pattern: consecutive numbers are consecutive
    integers."""
    array = np.asarray([value]).astype(numpy_dtype)
    return int(array.view(f"u{array.itemsize}")[0])


def _number(bits: int, numpy_dtype: np.dtype) -> float:
    size = np.dtype(numpy_dtype).itemsize
    return float(np.asarray([bits], dtype=f"u{size}").view(numpy_dtype).astype(np.float64)[0])


def _largest_number_at_most(value: float, numpy_dtype: np.dtype) -> float:
    rounded = float(np.asarray([value]).astype(numpy_dtype).astype(np.float64)[0])
    return rounded if rounded <= value else _number(_bits(rounded, numpy_dtype) - 1, numpy_dtype)


def instances(arrays: dict[str, np.ndarray]) -> int:
    """The instances in a batch of inputs: one where the claim has no inputs (its sides are
    constants, the same at every instance)."""
    return next(iter(arrays.values())).shape[0] if arrays else 1


# the carrier of a claim with no inputs: its one instance, in the format once placed (so a size
# or a constant is rounded into the format as with inputs); no input can have the empty name
_ONE_INSTANCE = {"": np.zeros(1)}


@functools.lru_cache(maxsize=256)
def _as_written_program(compile_with: Callable[[Callable[[dict[str, Array]], Array]],
                                                Callable[[dict[str, Array]], Array]],
                        xp: ArrayModule, expr: sp.Expr, sizes: tuple[tuple[str, int], ...],
                        out: tuple[sp.Idx, ...]) -> Callable[[dict[str, Array]], Array]:
    """The as-written evaluation traced once per expression and sizes and compiled by the
    backend (``compile_with``, its row's ``compile``: XLA's for JAX): the same operations in
    the same order as op by op (each op by op would compile on its own for every new shape).
    XLA may keep an intermediate in float32 where the format is narrower, which only removes
    roundings the model counts."""
    def run(placed: dict[str, Array]) -> Array:
        return along_axes(xp, placed, dict(sizes), list(out), traced=True).eval(expr)

    return compile_with(run)


def bound_values(claim: BoundClaim, sizes: dict[str, int], arrays: dict[str, np.ndarray],
                 unit: float, c_exp: int, theorem: Theorem, out: list[sp.Idx],
                 c_log: int = 2) -> np.ndarray:
    """B at every instance: the claim's bound with the sizes, the spreads (from the inputs,
    exactly), u and c_exp put in; NaN where count·u ≥ 1 (no rigorous bound there)."""
    symbols: dict[sp.Symbol, float] = {sp.Symbol(k, integer=True, positive=True): v
                                       for k, v in sizes.items()}
    symbols[kind.u] = unit
    symbols[kind.c_exp] = c_exp
    symbols[kind.c_log] = c_log
    batch = instances(arrays)
    if claim.relative_to == "absolute":
        return _absolute_bound_values(claim, symbols, arrays, sizes, out, theorem)
    if isinstance(claim, kind.ErrorBound):
        count, exponent = claim.count, claim.exponent
    else:
        # relative to the value: _derived returns no absolute error (it raises)
        derived = cast(kind.Relative | kind.Scaled, claim._derived(theorem))
        count, exponent = derived.count, derived.exponent
    k = float(count.xreplace(symbols))
    if k * unit >= 1:
        return np.full(batch, np.nan).reshape((batch,) + (1,) * len(out))
    x = _per_entry(exponent.xreplace(symbols), arrays, sizes, out)
    gamma = k * unit / (1 - k * unit)
    if isinstance(claim, kind.ErrorBound):
        # (1 + γ)·e^X − 1 without the cancellation of 1 − 1: γ + (1 + γ)(e^X − 1)
        return gamma + (1 + gamma) * np.expm1(x)
    # first order: the claimed B plus the derived bound's remainder beyond its first-order
    # part, (1 + γ_k)e^X − 1 − (k·u + X) = (k·u)²/(1 − k·u) + (e^X − 1 − X) + γ_k(e^X − 1)
    remainder = (k * unit) ** 2 / (1 - k * unit) + (np.expm1(x) - x) + gamma * np.expm1(x)
    return _per_entry(claim.bound.xreplace(symbols), arrays, sizes, out) + remainder


def _absolute_bound_values(claim: BoundClaim, symbols: dict[sp.Symbol, float],
                           arrays: dict[str, np.ndarray], sizes: dict[str, int],
                           out: list[sp.Idx], theorem: Theorem) -> np.ndarray:
    """An absolute bound at every entry: the claimed one, or, for a first-order claim, the
    claimed one plus the derived bound's part beyond first order; NaN where a λ_k is undefined
    (2·k·u ≥ 1)."""
    if isinstance(claim, kind.AbsoluteErrorBound):
        bound = claim.bound
    else:
        # relative_to is "absolute": _derived returns an absolute error or raises
        derived = cast(kind.Absolute, claim._derived(theorem)).bound
        bound = claim.bound + derived - kind.first_order_part(derived)
    bound = bound.xreplace(symbols)
    batch = instances(arrays)
    unit = float(symbols[kind.u])
    values: dict[sp.Expr, float] = {}
    for log_error in bound.atoms(kind.LogError):
        k = float(log_error.args[0])
        if 2 * k * unit >= 1:
            return np.full((batch,) + (1,) * len(out), np.nan)
        values[log_error] = float(np.log1p(k * unit / (1 - 2 * k * unit)))  # −log(1 − γ_k)
    return _per_entry(bound.xreplace(values), arrays, sizes, out)


def _per_entry(expr: sp.Expr, arrays: dict[str, np.ndarray], sizes: dict[str, int],
               out: list[sp.Idx]) -> np.ndarray:
    """A bound at every entry, axes (batch, *out): its data terms (spreads, |m1 − m2|, ...)
    evaluated from the inputs in float64."""
    batch = instances(arrays)
    data = _data_terms(expr)
    if not data:
        return np.full((batch,) + (1,) * len(out), float(expr))
    walk = along_axes(np, arrays, sizes, out)
    names = {node: sp.Dummy("data") for node in data}
    function = sp.lambdify(list(names.values()), expr.xreplace(names), "numpy")
    values = function(*(walk.eval(node) for node in names))
    return np.asarray(values, np.float64)


def _data_terms(expr: sp.Expr) -> list[sp.Expr]:
    """The largest subexpressions that read inputs: maxima over a row, entries and |y|."""
    if isinstance(expr, (ReduceMax, sp.Indexed, sp.Abs)):
        return [expr]
    return list(dict.fromkeys(t for arg in expr.args for t in _data_terms(arg)))


# -- settling -----------------------------------------------------------------------------------


@dataclass
class _Seen:
    instances: int = 0
    no_bound: int = 0
    outside: int = 0
    beyond_exp: int = 0
    breaches: int = 0
    first_breach: str | None = None
    worst_ratio: float = 0.0
    worst_error: float = 0.0
    violation: dict[str, object] | None = None

    def note(self, ratios: Ratios, sizes: dict[str, int], arrays: dict[str, np.ndarray]) -> bool:
        """Count a batch; whether it violates the bound (its first violating instance is then
        the counterexample: the last batch noted that violates is the search's shrunk one)."""
        bounded = np.isfinite(ratios.bound)
        self.no_bound += int((~bounded).sum())
        self.outside += ratios.outside
        self.beyond_exp += ratios.beyond_exp
        self.breaches += len(ratios.breaches)
        if ratios.breaches and self.first_breach is None:
            self.first_breach = next(iter(ratios.breaches.values()))
        self.instances += int(bounded.sum())
        assert ratios.ratio is not None  # Evaluation.ratios always sets it
        ratio = np.where(bounded, ratios.ratio, 0.0)  # a NaN result is already infinite
        if ratio.size and float(ratio.max()) > self.worst_ratio:
            self.worst_ratio = float(ratio.max())
        self.worst_error = max(self.worst_error, float(np.nanmax(
            np.where(bounded, ratios.observed, 0.0), initial=0.0)))
        bad = np.flatnonzero(ratio > 1.0)
        if bad.size:
            row = int(bad[0])
            self.violation = {
                "sizes": sizes,
                "inputs": {k: np.round(v[row], 6).tolist() for k, v in arrays.items()},
                "observed relative error": float(ratios.observed[row]),
                "bound": float(ratios.bound[row]),
            }
        return bool(bad.size)


def _evidence(model: Rounding, seen: _Seen, evaluation: Evaluation, seed: int) -> Evidence:
    dtype = evaluation.dtype
    tightness = f"largest observed/B {seen.worst_ratio:.3g}"
    loose = " (never within 10× of the bound)" if 0 < seen.worst_ratio < 0.1 else ""
    model_text = (f"u = {model.u:.3g}, c_exp = {model.c_exp}, c_log = {model.c_log}, exp "
                  f"finite up to {evaluation.exp_domain().limit!r} as measured "
                  f"({model.source})")
    findings = _backend_findings(seen, evaluation)
    found = Evidence(examples=1, instances=seen.instances, undecided=seen.no_bound,
                     worst_ulps=seen.worst_error / model.u if seen.worst_error else 0.0,
                     seed=seed)
    if seen.violation is not None:
        # a bound violated in any format is false under the model
        return found.concluding(Failure(seen.violation, findings + (
            f"observed error above the bound under the declared model: {tightness}; "
            f"{model_text}"), refutes=True))
    if seen.instances == 0:
        return found.concluding(CannotDecide(f"{findings}no instance where the bound is "
                                             f"defined (count·u < 1, inside the model) in "
                                             f"{dtype}"))
    overflow = seen.outside - seen.beyond_exp
    why = [f"{overflow} overflow or underflow an intermediate" if overflow else "",
           f"{seen.beyond_exp} take exp beyond where the backend's is finite"
           if seen.beyond_exp else "",
           f"{seen.breaches} where the backend's exp or log broke the declared model"
           if seen.breaches else ""]
    why.append("the others have count·u ≥ 1" if seen.no_bound > sum(
        (overflow, seen.beyond_exp, seen.breaches)) else "")
    no_bound = (f"; {seen.no_bound} instance(s) outside the model in {dtype}, undecided "
                f"({', '.join(w for w in why if w)})" if seen.no_bound else "")
    return found.concluding(Passed(f"{findings}{tightness}{loose} over {seen.instances} "
                                   f"instances{no_bound}; {model_text}"))


def _backend_findings(seen: _Seen, evaluation: Evaluation) -> str:
    """What the search found about the backend itself, as a record's reason begins
    (``BACKEND_FINDING``, one each): an exp that overflows before the format does, and
    instances where its exp or log broke the declared model; empty where it found nothing."""
    domain, dtype = evaluation.exp_domain(), evaluation.dtype
    found = []
    if domain.early and domain.first_infinite is not None:
        found.append(
            f"{backend_version(evaluation.row)}'s {dtype} exp is not finite from x = "
            f"{domain.first_infinite!r} (e^x = {math.exp(domain.first_infinite):.3g}, below "
            f"{dtype}'s largest number {dtype.largest:.3g}); the model holds for "
            f"arguments up to {domain.limit!r}, and {seen.beyond_exp} instance(s) past it are "
            "outside the model, as overflow is")
    if seen.first_breach is not None:
        found.append(f"{breach_heading(evaluation.row)}{seen.first_breach}; {seen.breaches} "
                     "instance(s) where it did are set aside as outside the model")
    return "".join(f"{BACKEND_FINDING}{finding}; " for finding in found)


def breach_heading(row: Backend) -> str:
    return f"{backend_version(row)} broke its declared rounding model: "
