"""Cost and memory claims: an operation count or a memory size as an exact formula or an order.

A claim about what an algorithm costs ("standard attention needs O(n²) memory for A", "the key
sums cost O(nd²)") is stated against the algorithm's declared structure: its ``steps``, each a
materialised intermediate with its dimensions and, for a contraction, the ranges each entry sums
over. The count follows from the structure alone:

- ``counted="entries"``: the entries held at the algorithm's peak, the sum over the steps (the
  intermediates held at once) of the product of each step's dimensions;
- ``counted="multiply-adds"``: the sum over the steps of (entries × product of the summed
  ranges): a product of an m×k and a k×n matrix counts m·k·n, a sum of k terms counts k;
- ``counted="io"``: slow-memory traffic in a two-level memory model with a fast memory of
  ``fast_memory`` entries (M): each step runs ``repeat`` times, reading the blocks ``reads`` from
  slow memory and writing ``writes`` back, holding the blocks ``fast`` in fast memory while it
  runs; the count is Σ repeat × (entries read + entries written). Every step must fit: its
  fast blocks hold at most M entries, checked exactly at sizes up to a bound (a step that does
  not fit refutes the claim: the algorithm as declared cannot run).

The symbolic route compares that count with the claimed formula exactly (``order="exact"``: equal
as expressions, so for all sizes), or by the limit of count/formula as each ``growing`` size goes
to infinity with the other sizes fixed (``order="O"``: the limit is finite; ``order="Theta"``:
finite and positive). The exact refutation gives the smallest sizes where an exact formula is
wrong, or the ratio at growing sizes where an order fails. The numeric route
(``numeric/kinds/cost.py``) runs an instrumented implementation and counts what it allocates or
multiplies, exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    REFUTED,
    ClaimKind,
    Dim,
    Integer,
    ProofResult,
    Scalar,
    TheoremError,
    as_expression,
)

if TYPE_CHECKING:
    from ..route import AnyConfiguration, Theorem

COUNTED = ("entries", "multiply-adds", "io")
ORDERS = ("exact", "O", "Theta")
EXACT_METHOD = ("exact count from the declared steps (entries = product of the dimensions, "
                "multiply-adds = entries × product of the summed ranges, or their sum over the "
                "computed entries where the ranges depend on the entry), equal to the formula "
                "as an expression: all sizes")
# sizes up to this are enumerated by the exact refutation of an exact formula
REFUTATION_LARGEST = 6
# the fast memory sizes M the fit of each step is checked at
FIT_LARGEST_MEMORY = 64
# the growing size at which the refutation of an order prints count/formula
RATIO_SIZES = (10, 100, 1000, 10**6)


def as_size(value: object) -> sp.Expr:
    """A step's dimension as a SymPy expression: a ``Dim`` or ``Scalar`` is its symbol."""
    if isinstance(value, (Dim, Scalar)):
        return value.symbol
    return as_expression(value, "a step's dimension")


@dataclass(frozen=True)
class Step:
    """A materialised intermediate of an algorithm: its name, its dimensions (``Dim``,
    ``Scalar`` or expressions such as ``sp.Min(B, n)``), and the ranges each entry sums over
    (empty for an element-wise step).

    ``entries``, where given, says which entries are computed and lets the summed ranges depend
    on the entry: limits ``(i, low, high)`` as in ``sp.Sum`` (an inner one may depend on an outer
    index), with ``over`` written in those indices. A triangular solve computes x_i from the i
    entries before it: ``Step("x", (n,), over=(i,), entries=((i, 0, n.symbol - 1),))`` counts
    Σ_{i<n} i = n(n − 1)/2 multiply-adds; a product of two lower-triangular matrices computes
    the entries k ≤ i, each a sum over k ≤ j ≤ i: ``entries=((i, 0, n − 1), (k, 0, i))``,
    ``over=(i − k + 1,)``. The memory a step holds is still the product of its dimensions."""

    name: str
    dims: tuple = ()
    over: tuple = ()
    entries: tuple = ()
    # the IO model (counted="io"): blocks read from and written to slow memory per run, the
    # blocks held in fast memory while it runs, and how many times it runs
    reads: tuple = ()
    writes: tuple = ()
    fast: tuple = ()
    repeat: object = 1

    def __post_init__(self) -> None:
        for name in ("dims", "over"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "entries", tuple(tuple(limit) for limit in self.entries))
        for name in ("reads", "writes", "fast"):
            object.__setattr__(self, name, tuple(tuple(block) for block in getattr(self, name)))

    def entries_held(self) -> sp.Expr:
        """The entries the step holds: the product of its dimensions."""
        return sp.Mul(*(as_size(d) for d in self.dims))

    def multiply_adds(self) -> sp.Expr:
        summed = sp.Mul(*(as_size(r) for r in self.over))
        if not self.entries:
            return self.entries_held() * summed
        limits = [tuple(as_expression(v, "a step's entry limit") for v in limit)
                  for limit in self.entries]
        # outermost first, as written; SymPy's Sum takes the innermost limit first
        return sp.factor(sp.Sum(summed, *reversed(limits)).doit())

    def traffic(self) -> sp.Expr:
        """Entries moved between slow and fast memory over every run of the step."""
        moved = sp.Add(*(_block(b) for b in (*self.reads, *self.writes)))
        return as_size(self.repeat) * moved

    def held(self) -> sp.Expr:
        """Entries the step holds in fast memory while it runs."""
        return sp.Add(*(_block(b) for b in self.fast))


def _block(dims: tuple) -> sp.Expr:
    return sp.Mul(*(as_size(d) for d in dims))


@dataclass(frozen=True)
class Cost(ClaimKind):
    """A count of an algorithm (``steps``) claimed to be ``formula`` exactly, or of its order.

    Args:
        formula: the claimed count, in the sizes (dimensions and integer scalars).
        steps: the algorithm's materialised intermediates (``Step``); for ``"entries"`` those it
            holds at its peak, for ``"multiply-adds"`` every one it computes.
        counted: ``"entries"`` (memory) or ``"multiply-adds"`` (operations).
        order: ``"exact"``, ``"O"`` (at most a constant times the formula) or ``"Theta"``.
        growing: for an order, the sizes that go to infinity (each in turn, the others fixed).
        implementation: ``f(xp, **arrays, **scalars)`` running the algorithm, for the numeric
            route: it counts what the run allocates (entries held at once) or multiplies.
    """

    formula: sp.Expr
    steps: tuple[Step, ...]
    counted: str = "entries"
    order: str = "exact"
    growing: tuple = ()
    implementation: Callable | None = None
    fast_memory: object = None  # M, for counted="io"

    kind = "cost"
    numeric_draws = ('no values: the instrumented implementation is run at a ladder of sizes, and '
                     'its entries and multiply-adds counted')
    measures_rounding = False  # counts are compared exactly
    # counting needs arrays that report their creation and release (a NumPy subclass can);
    # JAX's XLA and MLX's lazy graphs decide buffers themselves, so a count there would measure
    # the compiler, not the algorithm
    numeric_needs = frozenset({"counted arrays"})

    def __post_init__(self) -> None:
        object.__setattr__(self, "formula", as_expression(self.formula, "Cost: the formula"))
        object.__setattr__(self, "steps", tuple(self.steps))
        growing = self.growing if isinstance(self.growing, tuple) else (self.growing,)
        object.__setattr__(self, "growing", growing)

    @property
    def relation(self) -> str:
        return {"exact": "=", "O": r"\in O", "Theta": r"\in \Theta"}.get(self.order, "=")

    # -- the statement ------------------------------------------------------------------------

    def count(self) -> sp.Expr:
        """The count the declared steps give."""
        if self.counted == "entries":
            return sp.Add(*(s.entries_held() for s in self.steps))
        if self.counted == "io":
            return sp.Add(*(s.traffic() for s in self.steps))
        return sp.Add(*(s.multiply_adds() for s in self.steps))

    def growing_symbols(self) -> tuple[sp.Symbol, ...]:
        return tuple(as_size(x) for x in self.growing)

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("formula", self.formula), ("count", self.count()))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        what = {"entries": r"\#\text{entries}", "io": r"\#\text{slow-memory reads and writes}"
                }.get(self.counted, r"\#\text{multiply-adds}")
        count = rf"{what} = {latex(self.count())}"
        if self.order == "exact":
            return f"{count} = {latex(self.formula)}"
        growing = ", ".join(latex(x) for x in self.growing_symbols())
        order = "O" if self.order == "O" else r"\Theta"
        return (rf"{count} \in {order}\left({latex(self.formula)}\right) \quad "
                rf"({growing} \to \infty)")

    def numeric_configurations(self, found: list[AnyConfiguration]
                               ) -> list[AnyConfiguration]:
        """Where it has an implementation to run, and counts what a run can count: ``found``
        holds only backends whose arrays can be counted (``numeric_needs``)."""
        if self.implementation is None or self.counted == "io":
            return []  # no run counts slow-memory traffic: the IO model is symbolic
        return found

    def validate(self, theorem: Theorem, where: str) -> None:
        if self.counted not in COUNTED:
            raise TheoremError(f"{where}: Cost counted must be one of {COUNTED}, "
                               f"got {self.counted!r}")
        if self.order not in ORDERS:
            raise TheoremError(f"{where}: Cost order must be one of {ORDERS}, got {self.order!r}")
        if not self.steps or not all(isinstance(s, Step) for s in self.steps):
            raise TheoremError(f"{where}: Cost steps must be one or more Step(...)")
        if self.counted == "io" and self.fast_memory is None:
            raise TheoremError(f"{where}: an IO count needs the fast memory's size "
                               "(fast_memory=M)")
        if self.order != "exact" and not self.growing:
            raise TheoremError(f"{where}: an order claim (O, Theta) names the sizes that grow "
                               "(growing=n)")
        sizes = {s.name for s in self.count().free_symbols | self.formula.free_symbols}
        for symbol in self.growing_symbols():
            if not isinstance(symbol, sp.Symbol) or symbol.name not in sizes:
                raise TheoremError(f"{where}: growing size {symbol} is not a size of the "
                                   "formula or the steps")
        for step in self.steps:
            for value in (*step.dims, *step.over):
                if isinstance(value, str):
                    raise TheoremError(f"{where}: step {step.name!r} has dimension {value!r}, "
                                       "a string; use the Dim or Scalar")

    # -- the symbolic route and the exact refutation ------------------------------------------

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        if self.counted == "io":
            overflow = self._overflowing_step(theorem)
            if overflow is not None:
                return ProofResult(REFUTED, "a declared step does not fit in fast memory",
                                   counterexample=overflow)
        result = self._prove_exact(theorem) if self.order == "exact" else self._prove_order()
        if self.counted == "io" and result.status == PROVED:
            result.method += (f"; every step fits in fast memory (checked exactly at the first "
                              f"{REFUTATION_LARGEST} values of each size and the first "
                              f"{FIT_LARGEST_MEMORY} of M, from their declared minimums)")
        return result

    def _overflowing_step(self, theorem: Theorem) -> dict | None:
        """The first step, and sizes in their declared domains, at which its fast blocks hold
        more than M entries."""
        memory = as_size(self.fast_memory)
        for step in self.steps:
            held = step.held()
            sizes = sorted(held.free_symbols - {memory}, key=lambda s: s.name)
            ranges = [_declared_range(theorem, s, REFUTATION_LARGEST) for s in sizes]
            for values in itertools.product(*ranges):
                at = dict(zip(sizes, values, strict=True))
                for m in _declared_range(theorem, memory, FIT_LARGEST_MEMORY):
                    if held.subs({**at, memory: m}) > m:
                        return {"step": step.name, "sizes": _sizes_text({**at, memory: m}),
                                "held in fast memory": str(held.subs({**at, memory: m})),
                                "fast memory": str(m)}
        return None

    def _prove_exact(self, theorem: Theorem) -> ProofResult:
        difference = sp.simplify(self.count() - self.formula)
        if difference == 0:
            return ProofResult(PROVED, EXACT_METHOD)
        counterexample = self._smallest_difference(theorem)
        if counterexample is not None:
            return ProofResult(REFUTED, f"exact count from the declared steps at sizes <= "
                               f"{REFUTATION_LARGEST}", counterexample=counterexample,
                               residual=str(difference))
        return ProofResult(NOT_PROVED, "the count and the formula differ as expressions but agree "
                           f"at every size <= {REFUTATION_LARGEST}", residual=str(difference))

    def _sizes(self) -> list[sp.Symbol]:
        symbols = self.count().free_symbols | self.formula.free_symbols
        return sorted(symbols, key=lambda s: s.name)

    def _smallest_difference(self, theorem: Theorem) -> dict | None:
        """The smallest sizes, each from its declared minimum, at which count and formula
        differ."""
        sizes = self._sizes()
        lows = _declared_minimums(theorem)
        assignments = itertools.product(*(
            range(lows.get(s.name, 1), lows.get(s.name, 1) + REFUTATION_LARGEST) for s in sizes))
        for values in sorted(assignments, key=lambda v: (sum(v), v)):
            at = dict(zip(sizes, values, strict=True))
            counted, claimed = self.count().subs(at), self.formula.subs(at)
            if counted != claimed:
                return {"sizes": _sizes_text(at), "counted": str(counted),
                        "claimed": str(claimed), "count": str(self.count())}
        return None

    def _prove_order(self) -> ProofResult:
        ratio = self.count() / self.formula
        limits = {}
        for symbol in self.growing_symbols():
            limit = sp.limit(eventually(ratio, symbol), symbol, sp.oo)
            limits[symbol] = limit
            failure = self._order_fails(limit)
            if failure:
                return ProofResult(REFUTED, f"limit of count/formula as {symbol} → ∞ (other sizes "
                                   f"fixed) is {limit}: {failure}",
                                   counterexample=self._ratio_counterexample(symbol, limit))
        if all(self._order_holds(limit) for limit in limits.values()):
            shown = "; ".join(f"{s} → ∞: {limit}" for s, limit in limits.items())
            return ProofResult(PROVED, f"order by the limit of count/formula, each growing size "
                               f"→ ∞ with the other sizes fixed ({shown}); the count is exact "
                               "from the declared steps")
        return ProofResult(NOT_PROVED, "the limit of count/formula could not be decided: "
                           + "; ".join(f"{s}: {limit}" for s, limit in limits.items()))

    def _order_fails(self, limit: sp.Expr) -> str | None:
        if limit in (sp.oo, sp.zoo):
            return "the count grows faster than the formula"
        if self.order == "Theta" and limit == 0:
            return "the count grows slower than the formula (no lower bound)"
        return None

    def _order_holds(self, limit: sp.Expr) -> bool:
        if isinstance(limit, sp.Limit) or limit.has(sp.oo, sp.zoo, sp.nan):
            return False
        if self.order == "O":
            return bool(limit.is_finite)
        return bool(limit.is_finite and limit.is_positive)

    def _ratio_counterexample(self, growing: sp.Symbol, limit: sp.Expr) -> dict:
        """count/formula at growing sizes, the other sizes at 1."""
        others = {s: 1 for s in self._sizes() if s != growing}
        ratios = []
        for size in RATIO_SIZES:
            at = {**others, growing: size}
            counted, claimed = self.count().subs(at), self.formula.subs(at)
            ratios.append(f"{growing}={size}: {counted}/{claimed} = {float(counted / claimed):.4g}")
        return {"growing": str(growing), "other sizes": _sizes_text(others) or "none",
                "count": str(self.count()), "claimed": str(self.formula),
                "count/claimed": "; ".join(ratios), "limit": str(limit)}


def _declared_range(theorem: Theorem, symbol: sp.Symbol, largest: int) -> range:
    """The values a size or integer scalar takes in its declared domain, up to ``largest``
    values from its minimum."""
    for dim in theorem.dims:
        if dim.symbol == symbol:
            return range(dim.sizes.low, min(dim.sizes.high, dim.sizes.low + largest - 1) + 1)
    for scalar in theorem.scalars:
        # a domain with a range reads both of its ends (Integer, Real, Positive have both)
        if (scalar.symbol == symbol and hasattr(scalar.domain, "low")
                and hasattr(scalar.domain, "high")):
            low, high = int(scalar.domain.low), int(scalar.domain.high)
            return range(low, min(high, low + largest - 1) + 1)
    return range(1, largest + 1)


def eventually(expr: sp.Expr, symbol: sp.Symbol) -> sp.Expr:
    """``expr`` for all large enough ``symbol``: in a ``Min`` (``Max``) an argument that goes to
    infinity with ``symbol`` is eventually larger (smaller) than one that does not depend on it,
    so it drops out; SymPy's limit cannot take ``Min(B, n)`` itself."""
    def settle(node: sp.Expr) -> sp.Expr:
        growing = [a for a in node.args if sp.limit(a, symbol, sp.oo) == sp.oo]
        fixed = [a for a in node.args if symbol not in a.free_symbols]
        if growing and fixed and len(growing) + len(fixed) == len(node.args):
            return type(node)(*(fixed if isinstance(node, sp.Min) else growing))
        return node
    return expr.replace(lambda e: isinstance(e, (sp.Min, sp.Max)), settle)


def _sizes_text(at: dict[sp.Symbol, int]) -> str:
    return ", ".join(f"{s}={v}" for s, v in sorted(at.items(), key=lambda kv: kv[0].name))


def _declared_minimums(theorem: Theorem) -> dict[str, int]:
    """Each dimension's and integer scalar's smallest declared value, by name."""
    lows = {d.name: d.sizes.low for d in theorem.dims}
    lows.update({s.name: s.domain.low for s in theorem.scalars if isinstance(s.domain, Integer)})
    return lows
