"""The numeric route of cost claims: run the algorithm on instrumented NumPy arrays and count.

Every array the implementation creates is a ``Counted`` array (a NumPy subclass): a new buffer
is recorded when it is allocated and released when CPython frees it (a weakref finaliser, which
reference counting runs at once), so the peak of the entries held at once is measured, not
estimated; a matrix product adds m·k·n multiply-adds and a sum of k terms adds k. Inputs are
not counted. The measured count is compared exactly with the claimed formula (an exact claim)
or with the count of the declared steps (an order claim: the steps must be what the code does),
and an order claim is then checked along a ladder of growing sizes: the measured count over the
formula must not grow by the factor a further power of the size would give.
"""

from __future__ import annotations

import math
import random
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt
import sympy as sp

from attnproof.symbolic import Cost, Integer

from ..route import (
    Evidence,
    Failure,
    Passed,
    find_failure,
    numeric_route,
    search_seed,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Theorem

    from .. import Profile
    from ..route import Where

# one size assignment's measured count, and a ladder's rows (size, measured, formula there)
Measured = tuple[dict[str, int], int]
Rung = tuple[int, int, sp.Expr]
# the worst growth along a ladder: the growing size, the other sizes, the rows, the exponent
Growth = tuple[sp.Symbol, dict[str, int], list[Rung], float]
# a shape as NumPy's creation functions take it
Shape = int | tuple[int, ...]

# growing sizes 1, 2, 4, ..., 2**LADDER_STEPS for an order claim
LADDER_STEPS = 8
# count/formula growing by 2**THRESHOLD or more over the last doubling of a growing size fails an
# order: a count one power of the size above the formula doubles it (2**1); a logarithmic factor
# or a power below THRESHOLD is left to the symbolic route, which decides it exactly
THRESHOLD = 0.5
# size assignments per record (the ladders first, then random sizes over each size's whole range)
ASSIGNMENTS = 120


class Counter:
    """Entries held (live, peak) and multiply-adds done while an implementation runs."""

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        self.multiply_adds = 0

    def allocated(self, array: np.ndarray) -> None:
        self.live += array.size
        self.peak = max(self.peak, self.live)
        weakref.finalize(array, self.released, array.size)

    def released(self, entries: int) -> None:
        self.live -= entries


_ACTIVE: list[Counter] = []


class Counted(np.ndarray):
    """An array whose new buffers and products the active ``Counter`` sees."""

    def __array_finalize__(self, obj: object) -> None:
        if _ACTIVE and self.flags.owndata:  # a copy, astype, ...: a new buffer
            _ACTIVE[-1].allocated(self)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [np.asarray(x) if isinstance(x, Counted) else x for x in inputs]
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, Counted) else x for x in out)
        _count_operations(ufunc, method, plain, kwargs)
        result = getattr(ufunc, method)(*plain, **kwargs)
        if out is not None:  # written in place: no new buffer
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func: Callable[..., Any], types: object, args: Any,
                           kwargs: Any) -> Any:
        if func is np.einsum and _ACTIVE:
            _ACTIVE[-1].multiply_adds += _einsum_multiply_adds(*_unwrap(args))
        result = func(*_unwrap(args), **_unwrap(kwargs))
        return _wrap(result)


def _unwrap(value: Any) -> Any:  # any argument of a NumPy function
    if isinstance(value, Counted):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def _wrap(result: Any) -> Any:  # any result of a NumPy function
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if not isinstance(result, np.ndarray) or isinstance(result, Counted):
        return result
    if _ACTIVE and result.flags.owndata:
        _ACTIVE[-1].allocated(result)
    return result.view(Counted)


def _count_operations(ufunc: np.ufunc, method: str, inputs: list[Any],
                      kwargs: dict[str, Any]) -> None:
    if not _ACTIVE:
        return
    counter = _ACTIVE[-1]
    if ufunc is np.matmul and method == "__call__":
        left, right = np.asarray(inputs[0]), np.asarray(inputs[1])
        left = left[None, :] if left.ndim == 1 else left  # a vector is a 1×k (k×1) matrix
        right = right[:, None] if right.ndim == 1 else right
        batch = np.broadcast_shapes(left.shape[:-2], right.shape[:-2])
        rows, inner, columns = left.shape[-2], left.shape[-1], right.shape[-1]
        counter.multiply_adds += math.prod(batch) * rows * inner * columns
    elif ufunc is np.add and method == "reduce":
        counter.multiply_adds += np.asarray(inputs[0]).size


def _einsum_multiply_adds(spec: str, *operands: np.ndarray) -> int:
    """Multiply-adds of a two-operand contraction: the product of every index's range (a
    broadcast ``...`` counts its batch); one operand is a copy or a sum, counted as its size."""
    inputs = spec.replace(" ", "").split("->")[0].split(",")
    sizes: dict[str, int] = {}
    batch: tuple[int, ...] = ()
    for letters, operand in zip(inputs, operands, strict=True):
        shape = np.shape(operand)
        if "..." in letters:
            before, after = letters.split("...")
            batch = np.broadcast_shapes(batch, shape[len(before):len(shape) - len(after)])
            shape = shape[:len(before)] + shape[len(shape) - len(after):]
            letters = before + after
        sizes.update(zip(letters, shape, strict=True))
    return math.prod(batch) * math.prod(sizes.values())


class CountingNumpy:
    """NumPy for an implementation: creation functions return counted arrays; the rest is
    NumPy, which defers to ``Counted`` for every array the implementation holds."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype

    def __getattr__(self, name: str) -> Any:  # NumPy's own function of that name
        return getattr(np, name)

    def _created(self, function: Callable[..., np.ndarray], shape: Shape, *args: object,
                 dtype: npt.DTypeLike | None = None) -> np.ndarray:
        return _wrap(function(shape, *args, dtype=dtype or self.dtype))

    def zeros(self, shape: Shape, dtype: npt.DTypeLike | None = None) -> np.ndarray:
        return self._created(np.zeros, shape, dtype=dtype)

    def ones(self, shape: Shape, dtype: npt.DTypeLike | None = None) -> np.ndarray:
        return self._created(np.ones, shape, dtype=dtype)

    def empty(self, shape: Shape, dtype: npt.DTypeLike | None = None) -> np.ndarray:
        return self._created(np.empty, shape, dtype=dtype)

    def full(self, shape: Shape, value: object,
             dtype: npt.DTypeLike | None = None) -> np.ndarray:
        return self._created(np.full, shape, value, dtype=dtype)


def measure(implementation: Callable[..., object], inputs: dict[str, np.ndarray],
            scalars: dict[str, int], dtype: np.dtype) -> Counter:
    """Run ``implementation`` on counted copies of ``inputs``; the counter of what it did."""
    arrays = {name: np.asarray(value).astype(dtype).view(Counted)
              for name, value in inputs.items()}
    counter = Counter()
    _ACTIVE.append(counter)
    try:
        result = implementation(CountingNumpy(dtype), **arrays, **scalars)
        del result  # the output is held at the peak like any other buffer, then released
    finally:
        _ACTIVE.pop()
    return counter


# -- the route ---------------------------------------------------------------------------------


@numeric_route(Cost)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    """Every size assignment (the ladders, then sizes over each range), one case each, through
    the driver's search in order: the first whose count differs from the formula fails; an
    order claim is then judged on the growth along each whole ladder."""
    dtype = where.dtype
    claim = cast(Cost, theorem.claim)  # the route of Cost: the driver's lookup says so
    array_dtype = dtype.numpy_dtype
    searched_from = search_seed(profile, seed)
    generator = random.Random(searched_from)
    assignments = _assignments(claim, _size_ranges(theorem), generator)
    measured_what = "peak entries held at once" if claim.counted == "entries" else "multiply-adds"
    target = claim.formula if claim.order == "exact" else claim.count()
    values = np.random.default_rng(generator.randrange(2**32))
    results: list[Measured] = []
    mismatch: list[Failure] = []

    def differs(sizes: dict[str, int]) -> bool:
        # Cost.numeric_configurations keeps no configuration for a claim without one
        assert claim.implementation is not None
        counter = measure(claim.implementation, _inputs(theorem, sizes, values),
                          _scalars(theorem, sizes), array_dtype)
        measured = counter.peak if claim.counted == "entries" else counter.multiply_adds
        expected = int(target.subs({sp.Symbol(k, integer=True, positive=True): v
                                    for k, v in sizes.items()}))
        results.append((sizes, measured))
        if measured != expected:
            mismatch[:] = [_failure(sizes, measured, expected, target, measured_what)]
        return bool(mismatch)

    find_failure(None, differs, 0, searched_from, explicit=assignments)
    seen = Evidence(examples=len(results), instances=len(results), seed=searched_from)
    if mismatch:
        return seen.concluding(mismatch[0])
    if claim.order != "exact":
        growth = _worst_growth(claim, results)
        if growth is not None:
            return seen.concluding(_growth_failure(claim, growth, measured_what))
    compared = "the formula" if claim.order == "exact" else "the declared steps' count"
    return seen.concluding(Passed(
        f"{measured_what} measured on instrumented NumPy {dtype} arrays at {len(results)} size "
        f"assignments, each equal to {compared} exactly" + _growth_text(claim, results)))


def _size_ranges(theorem: Theorem) -> dict[str, tuple[int, int]]:
    ranges = {d.name: (d.sizes.low, d.sizes.high) for d in theorem.dims}
    for scalar in theorem.scalars:
        if isinstance(scalar.domain, Integer):
            ranges[scalar.name] = (scalar.domain.low, scalar.domain.high)
    return ranges


def _assignments(claim: Cost, ranges: dict[str, tuple[int, int]],
                 generator: random.Random) -> list[dict[str, int]]:
    """For each growing size a ladder 1, 2, 4, ... with the others at random values, then
    random sizes over each range (its ends included)."""
    found = []
    for symbol in claim.growing_symbols():
        others = {k: generator.randint(*r) for k, r in ranges.items()}
        found += [{**others, symbol.name: 2**k} for k in range(LADDER_STEPS + 1)]
    while len(found) < ASSIGNMENTS:
        found.append({k: generator.choice((low, high, generator.randint(low, high)))
                      for k, (low, high) in ranges.items()})
    return found


def _inputs(theorem: Theorem, sizes: dict[str, int],
            values: np.random.Generator) -> dict[str, np.ndarray]:
    return {t.name: values.standard_normal(tuple(sizes[d.name] for d in t.dims))
            for t in theorem.tensors}


def _scalars(theorem: Theorem, sizes: dict[str, int]) -> dict[str, int]:
    return {s.name: sizes[s.name] for s in theorem.scalars if s.name in sizes}


def _failure(sizes: dict[str, int], measured: int, expected: int, target: sp.Expr,
             what: str) -> Failure:
    return Failure({"sizes": _text(sizes), "measured": str(measured),
                    "expected": str(expected), "formula": str(target)},
                   f"{what} measured on instrumented NumPy: {measured} at {_text(sizes)}, "
                   f"but {target} gives {expected}")


def _ladders(claim: Cost, results: list[Measured]
             ) -> Iterator[tuple[sp.Symbol, dict[str, int], list[Rung]]]:
    """(growing size, [(size, measured, formula)]) along each ladder."""
    for number, symbol in enumerate(claim.growing_symbols()):
        ladder = results[number * (LADDER_STEPS + 1):(number + 1) * (LADDER_STEPS + 1)]
        rows = [(sizes[symbol.name], measured,
                 claim.formula.subs({sp.Symbol(k, integer=True, positive=True): v
                                     for k, v in sizes.items()}))
                for sizes, measured in ladder]
        yield symbol, ladder[0][0], rows


def _worst_growth(claim: Cost, results: list[Measured]) -> Growth | None:
    """The first ladder over whose last doubling count/formula grows by 2**THRESHOLD or more
    (or, for Theta, shrinks so)."""
    for symbol, sizes, rows in _ladders(claim, results):
        (_, before, f_before), (_, last, f_last) = rows[-2], rows[-1]
        exponent = math.log2((last / float(f_last)) / (before / float(f_before)))
        if exponent >= THRESHOLD or (claim.order == "Theta" and exponent <= -THRESHOLD):
            return symbol, sizes, rows, exponent
    return None


def _growth_failure(claim: Cost, growth: Growth, what: str) -> Failure:
    symbol, sizes, rows, exponent = growth
    return Failure({
        "growing": str(symbol),
        "other sizes": _text({k: v for k, v in sizes.items() if k != symbol.name}),
        "measured/claimed": "; ".join(f"{symbol}={n}: {m}/{f}" for n, m, f in rows[-3:]),
        "exponent over the last doubling": f"{exponent:.3f}",
    }, (f"{what} over {claim.formula} grows like {symbol}^{exponent:.2f} over the last doubling "
        f"of {symbol} (order {claim.order} allows < {THRESHOLD})"))


def _growth_text(claim: Cost, results: list[Measured]) -> str:
    if claim.order == "exact":
        return ""
    parts = []
    for symbol, _, rows in _ladders(claim, results):
        (n0, m0, f0), (n1, m1, f1) = rows[-2], rows[-1]
        exponent = math.log2((m1 / float(f1)) / (m0 / float(f0)))
        parts.append(f"{symbol} = {n0} → {n1}: count/formula {m0}/{f0} → {m1}/{f1}, "
                     f"exponent {exponent:.3f}")
    return (f"; along each growing size ({'; '.join(parts)}), below the {THRESHOLD} a further "
            "power would reach")


def _text(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
