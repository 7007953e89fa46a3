"""IEEE values as written: what a formula yields in a float format, ±∞ and NaN included.

``IEEEValue(value, yields, sizes=..., at=...)`` states that ``value``, evaluated exactly as
written (no stability rewrite: a literal such as −1e9 is rounded into the format, every
operation is rounded, ∞ − ∞ = 0·∞ = 0/0 = NaN, exp(−∞) = 0, log 0 = −∞), yields what
``yields`` says in each format: ``"nan"``, ``"+inf"``, ``"-inf"``, ``"zero"``, ``"finite"``,
``Between(lo, hi)`` or ``Near(x, ulps)``, one for every format or one per format.

The symbolic route is an exact case analysis: an evaluator over the extended reals with IEEE
rules (``_ieee_arithmetic``) encloses every value the format can produce, for inputs fixed by
``at`` or ranging over their whole domain, at the stated sizes. A maximum is split into cases
by which operand attains it, so that x − max(x) is known to be ≤ 0, and exactly 0 for the
operand that attains it: the argument that makes max-subtracted softmax safe. "Proved" means
the enclosure lies inside the claimed set in every stated format, at every stated size,
assuming correctly rounded operations; refuted means the exact evaluation at one point (the
stated one, or a corner of the inputs' ranges) lies outside it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import mpmath
import sympy as sp

from ..route import (
    EXACT_EVALUATION,
    FORMATS,
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    AsWritten,
    ClaimKind,
    Integer,
    Mask,
    Positive,
    ProofResult,
    Real,
    ReduceMax,
    Simplex,
    TheoremError,
    Where,
    expand_vocabulary,
    index_env,
    loop_values,
)
from . import _ieee_arithmetic as ieee
from ._ieee_arithmetic import INF, Enclosure

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..route import AnyConfiguration, Domain, Env, Format, InputKey, Theorem

SPECIAL = ("nan", "+inf", "-inf", "zero", "finite")
# Above this many cases (choices of which operand attains each maximum) an entry is undecided.
CASE_LIMIT = 4096

# a value as a theorem writes it in at=: a number, ±oo, nan, nested lists for a tensor, or a
# function of the sizes giving them; read by what it turns out to be (validate reports what
# does not fit)
Written = Any


# -- what a claim says the value is ------------------------------------------------------------


@dataclass(frozen=True)
class Between:
    """A number (not NaN) in [lo, hi]; the bounds may be ±oo."""

    lo: object
    hi: object

    def bounds(self, fmt: Format) -> tuple[mpmath.mpf, mpmath.mpf]:
        return as_mpf(self.lo), as_mpf(self.hi)

    def describe(self) -> str:
        return f"in [{self.lo}, {self.hi}]"

    def latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return rf"\in [{latex(sp.sympify(self.lo))}, {latex(sp.sympify(self.hi))}]"


@dataclass(frozen=True)
class Near:
    """A number within ``ulps`` units in the last place of the format of ``value``: the
    tolerance a finite value is compared with (libraries' exp and log are not correctly
    rounded, so a few ulps is the stated allowance)."""

    value: object
    ulps: int = 4

    def bounds(self, fmt: Format) -> tuple[mpmath.mpf, mpmath.mpf]:
        centre = as_mpf(self.value)
        slack = self.ulps * fmt.ulp(centre)
        return centre - slack, centre + slack

    def describe(self) -> str:
        return f"{self.value} within {self.ulps} ulps"

    def latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return rf"\approx {latex(sp.sympify(self.value))}"


@dataclass(frozen=True)
class Special:
    """One IEEE class: nan, +inf, -inf, zero (exactly 0) or finite."""

    name: str

    def bounds(self, fmt: Format) -> tuple[mpmath.mpf, mpmath.mpf] | None:
        return {"nan": None, "+inf": (INF, INF), "-inf": (-INF, -INF),
                "zero": (mpmath.mpf(0), mpmath.mpf(0)),
                "finite": (-mpmath.mpf(fmt.largest), mpmath.mpf(fmt.largest))}[self.name]

    def describe(self) -> str:
        return self.name

    def latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return {"nan": r"= \mathrm{NaN}", "+inf": r"= +\infty", "-inf": r"= -\infty",
                "zero": "= 0", "finite": r"\in \mathbb{R}"}[self.name]


# what a claim says the value is, in one format
Expected = Between | Near | Special


def as_mpf(value: sp.Expr | float) -> mpmath.mpf:
    """A SymPy number as an mpmath number (rationals divided at the arithmetic's working
    precision, ±∞ as ±``INF``)."""
    value = sp.sympify(value)
    if value in (sp.oo, -sp.oo):
        return INF if value == sp.oo else -INF
    return mpmath.mpf(sp.Float(value, 60)._mpf_) if not value.is_Rational else _rational(value)


def _rational(value: sp.Rational) -> mpmath.mpf:
    with mpmath.workprec(ieee.PRECISION):
        return mpmath.mpf(int(value.p)) / int(value.q)


def expectation(value: object) -> Expected:
    """An expectation from what a theorem writes: a class name, a number (≈, 4 ulps), or a
    ``Between``/``Near``."""
    if isinstance(value, (Between, Near, Special)):
        return value
    if isinstance(value, str):
        if value not in SPECIAL:
            raise TheoremError(f"IEEE value: unknown class {value!r}; one of {SPECIAL}, "
                               "Between(lo, hi) or Near(x)")
        return Special(value)
    if isinstance(value, (int, float, sp.Number)):
        return Near(value)
    raise TheoremError(f"IEEE value: cannot read the expectation {value!r}")


def satisfies(value: Enclosure, expected: Expected, fmt: Format) -> bool:
    """Every value in the enclosure is one the claim allows."""
    bounds = expected.bounds(fmt)
    if bounds is None:
        return value.is_nan
    if value.nan or value.is_nan:
        return False
    assert value.lo is not None and value.hi is not None  # not NaN: it has two ends
    return bounds[0] <= value.lo and value.hi <= bounds[1]


def violates(value: Enclosure, expected: Expected, fmt: Format) -> bool:
    """No value in the enclosure is one the claim allows."""
    bounds = expected.bounds(fmt)
    if bounds is None:
        return not value.nan
    if value.is_nan:
        return True
    assert value.lo is not None and value.hi is not None  # not NaN: it has two ends
    return value.hi < bounds[0] or value.lo > bounds[1]


# -- the claim ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class IEEEValue(ClaimKind):
    """``value`` evaluated as written in each format yields ``yields``.

    Args:
        value: the formula as written (SymPy, over the theorem's inputs; ``sp.oo`` is ∞,
            a ``sp.Piecewise`` is a ``where``, ``rowmax`` a maximum, ``softmax`` the plain
            exp/Σexp of its definition).
        yields: one expectation for every format in ``formats``, or a mapping format →
            expectation (then its keys are the formats).
        sizes: dimension name → a size or a tuple of sizes; every dimension needs one.
        at: input name → its fixed value (a number, ±oo, nan, nested lists for a tensor, or a
            function of the sizes dict returning them); inputs not fixed range over their
            domain. Masks and integers must be fixed (a ``where`` branches on them).
        formats: the formats a single expectation is claimed in.
    """

    value: sp.Expr
    yields: object
    sizes: Mapping[str, int | tuple[int, ...]] = field(default_factory=dict)
    at: Mapping[str, object] = field(default_factory=dict)
    formats: tuple[str, ...] = ("float64", "float32", "float16", "bfloat16")
    # what each at= function gives at each size: part of the statement, so a cached proof is
    # keyed by the values, not by the function's name
    patterns: tuple = field(init=False, default=(), repr=False)

    if TYPE_CHECKING:
        # set by __post_init__ (an attribute, not a field): each format's expectation
        @property
        def claimed(self) -> dict[str, Expected]: ...

    kind = "IEEE value"
    numeric_draws = ('the inputs fixed by the claim as written; any other input at the ends of its'
                     ' range, zero where allowed, then uniformly, at the stated sizes')
    relation = r"\mapsto"

    def __post_init__(self) -> None:
        if isinstance(self.yields, Mapping):
            claimed = {f: expectation(e) for f, e in self.yields.items()}
        else:
            claimed = dict.fromkeys(self.formats, expectation(self.yields))
        for name in claimed:
            if name not in FORMATS:
                raise TheoremError(f"IEEE value: unknown format {name!r}; one of "
                                   f"{tuple(FORMATS)}")
        object.__setattr__(self, "claimed", claimed)
        object.__setattr__(self, "formats", tuple(claimed))
        sizes = {n: (s,) if isinstance(s, int) else tuple(s) for n, s in dict(self.sizes).items()}
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "at", dict(self.at))
        object.__setattr__(self, "patterns", self._patterns())

    def _patterns(self) -> tuple[tuple[tuple[tuple[str, int], ...], str, str], ...]:
        found = []
        for sizes in self.size_assignments():
            for name, given in self.at.items():
                if callable(given):
                    try:
                        found.append((tuple(sizes.items()), name, repr(given(sizes))))
                    except Exception as error:  # validate() reports it with the theorem's name
                        found.append((tuple(sizes.items()), name, repr(error)))
        return tuple(found)

    # -- contract --------------------------------------------------------------------------

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("value as written", self.value),)

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        point = ", ".join([f"{latex(sp.Symbol(n))} = {_sizes_latex(s)}"
                           for n, s in self._stated_sizes().items()]
                          + [f"{latex(sp.Symbol(n))} = {_value_latex(v, latex)}"
                             for n, v in self.at.items()])
        where = rf"\Big|_{{{point}}}" if point else ""
        groups: dict[str, list[str]] = {}
        for fmt, expected in self.claimed.items():
            groups.setdefault(expected.latex(latex), []).append(fmt)
        cases = [(text, rf"\text{{in {', '.join(fmts)}}}") for text, fmts in groups.items()]
        body = rf"\operatorname{{fl}}\left({latex(self.value)}\right){where}"
        if len(cases) == 1:
            return rf"{body} {cases[0][0]} \quad {cases[0][1]}"
        rows = [f"{text} & {fmts}" for text, fmts in cases]
        return body + r" \quad \begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"

    def numeric_configurations(self, found: list[AnyConfiguration]
                               ) -> list[AnyConfiguration]:
        return [c for c in found if c.dtype in self.formats]

    def validate(self, theorem: Theorem, where: str) -> None:
        dims = {d.name for d in theorem.dims}
        for name in dims - set(self.sizes):
            raise TheoremError(f"{where}: IEEE value: dimension {name!r} has no size in sizes=")
        for name in set(self.sizes) - dims:
            raise TheoremError(f"{where}: IEEE value: sizes= names {name!r}, not a dimension")
        inputs = {x.name: x for x in theorem.inputs}
        for name in self.at:
            if name not in inputs:
                raise TheoremError(f"{where}: IEEE value: at= fixes {name!r}, not an input")
        for name, declared in inputs.items():
            if isinstance(declared.domain, (Mask, Integer)) and name not in self.at:
                raise TheoremError(f"{where}: IEEE value: {name!r} is a mask or an integer and "
                                   "must be fixed by at= (a where() branches on it)")
        unsupported = first_unsupported(written(theorem, self))
        if unsupported is not None:
            raise TheoremError(f"{where}: IEEE value: no IEEE rule for "
                               f"{type(unsupported).__name__} ({unsupported})")
        for sizes in self.size_assignments():
            try:
                fixed_values(theorem, self, sizes)
            except (TypeError, ValueError, IndexError, KeyError) as error:
                raise TheoremError(f"{where}: IEEE value: at sizes {sizes}: {error}") from None

    def _stated_sizes(self) -> dict[str, tuple[int, ...]]:
        """``sizes`` as ``__post_init__`` leaves it: every dimension's sizes as a tuple."""
        return cast("dict[str, tuple[int, ...]]", self.sizes)  # normalized in __post_init__

    def size_assignments(self) -> Iterator[dict[str, int]]:
        names = list(self.sizes)
        sizes = self._stated_sizes()
        for combination in itertools.product(*(sizes[n] for n in names)):
            yield dict(zip(names, combination, strict=True))

    # -- symbolic route --------------------------------------------------------------------

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return _prove(theorem, self)


def _sizes_latex(sizes: tuple[int, ...]) -> str:
    return str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}, \\dots, {sizes[-1]}"


def _value_latex(value: Written, latex: Callable[[sp.Expr], str]) -> str:
    if callable(value):  # a pattern given as a function of the sizes: its name says which
        return rf"\text{{{value.__name__.replace('_', ' ')}}}"
    if isinstance(value, (list, tuple)):
        return r"\left(" + ", ".join(_value_latex(v, latex) for v in value) + r"\right)"
    return latex(_number(value))


# -- inputs --------------------------------------------------------------------------------


def _number(value: sp.Expr | float) -> sp.Expr:
    """A written number as SymPy: floats keep their exact binary value, ±inf and nan theirs."""
    if isinstance(value, float):
        if value != value:
            return sp.nan
        if value in (float("inf"), float("-inf")):
            return sp.oo if value > 0 else -sp.oo
        return sp.Float(value, 17)
    value = sp.sympify(value)
    if not value.is_number:
        raise TypeError(f"{value} is not a number")
    return value


def fixed_values(theorem: Theorem, claim: IEEEValue, sizes: dict[str, int]
                 ) -> dict[InputKey, sp.Expr]:
    """The inputs ``at=`` fixes, as SymPy numbers keyed by scalar name or (tensor, entry)."""
    declared = {x.name: x for x in theorem.inputs}
    values: dict[InputKey, sp.Expr] = {}
    for name, given in claim.at.items():
        given = given(sizes) if callable(given) else given
        shape = tuple(sizes[d.name] for d in getattr(declared[name], "dims", ()))
        if not shape:
            values[name] = _number(given)
            continue
        for entry in itertools.product(*(range(n) for n in shape)):
            item: Written = given  # nested lists: indexing them is the check of their shape
            for position in entry:
                item = item[position]
            values[(name, entry)] = _number(item)
        _check_no_extra(given, shape, name)
    return values


def _check_no_extra(given: Written, shape: tuple[int, ...], name: str) -> None:
    if shape and len(given) != shape[0]:
        raise ValueError(f"{name} has {len(given)} entries along an axis of size {shape[0]}")
    if len(shape) > 1:
        for row in given:
            _check_no_extra(row, shape[1:], name)


def free_entries(theorem: Theorem, sizes: dict[str, int], fixed: Mapping[InputKey, object]
                 ) -> list[tuple[InputKey, Domain]]:
    """(key, domain) for every scalar and tensor entry ``at=`` leaves free."""
    found: list[tuple[InputKey, Domain]] = []
    for declared in theorem.inputs:
        dims = getattr(declared, "dims", ())
        if not dims:
            if declared.name not in fixed:
                found.append((declared.name, declared.domain))
            continue
        for entry in itertools.product(*(range(sizes[d.name]) for d in dims)):
            if (declared.name, entry) not in fixed:
                found.append(((declared.name, entry), declared.domain))
    return found


def domain_range(domain: Domain) -> tuple[float, float]:
    if isinstance(domain, (Real, Positive)):
        return domain.low, domain.high
    if isinstance(domain, Simplex):
        return 0.0, 1.0
    raise TheoremError(f"IEEE value: no range for a {type(domain).__name__} input")


# -- the expression as written ---------------------------------------------------------------


def written(theorem: Theorem, claim: IEEEValue) -> sp.Expr:
    """The formula with definitions and vocabulary spelled out as the documents define them
    (softmax as exp/Σexp, lse as log Σ exp): nothing is rewritten for stability."""
    return expand_vocabulary(theorem.expand_definitions(claim.value))


_LEAVES = (sp.Symbol, sp.Idx, sp.Indexed)
_NODES = (sp.Add, sp.Mul, sp.exp, sp.log, sp.Max, sp.Piecewise)


def first_unsupported(expr: sp.Basic) -> sp.Basic | None:
    """The first node of the written formula the evaluators have no IEEE rule for, or None."""
    if expr.is_Number or expr in (sp.oo, -sp.oo, sp.nan, sp.zoo) or isinstance(expr, _LEAVES):
        return None
    if isinstance(expr, (sp.Sum, sp.Product, ReduceMax)):
        parts = [expr.function]
    elif isinstance(expr, Where):
        parts = list(expr.args[1:])
    elif isinstance(expr, sp.Piecewise):
        parts = [branch for branch, _ in expr.args]
    elif isinstance(expr, sp.Pow):
        exponent = expr.args[1]
        if not (exponent == sp.Rational(1, 2) or exponent.is_Integer):
            return expr
        parts = [expr.args[0]]
    elif isinstance(expr, _NODES):
        parts = list(expr.args)
    else:
        return expr
    for part in parts:
        found = first_unsupported(part)
        if found is not None:
            return found
    return None


# -- the symbolic route's arithmetic -----------------------------------------------------------


# which operand attains each maximum met so far, by the maximum's key
Choices = dict[tuple[object, object], int]


class _NeedChoice(Exception):
    def __init__(self, key: tuple[object, object], count: int) -> None:
        self.key, self.count = key, count


class _Infeasible(Exception):
    pass


class EnclosureArithmetic:
    """Enclosures in ``fmt``, every operation correctly rounded, for one case of the case
    analysis: each maximum met so far is attained by a chosen operand (``choices``)."""

    # the inputs are ranges: a condition is decided by the fixed inputs and the indices
    decides_conditions = False

    def __init__(self, fmt: Format, inputs: Mapping[InputKey, Enclosure],
                 choices: Choices) -> None:
        self.fmt, self.inputs, self.choices = fmt, inputs, choices

    def round(self, value: Enclosure) -> Enclosure:
        return ieee.rounded(value, self.fmt)

    def literal(self, expr: sp.Expr) -> Enclosure:
        if expr in (sp.nan, sp.zoo):
            return ieee.NAN
        value = self.round(ieee.point(as_mpf(expr)))
        return ieee.Enclosure(value.lo, value.hi, source=("literal", str(value.lo)))

    def exact(self, value: int) -> Enclosure:
        return ieee.point(int(value))

    def size(self, value: int) -> Enclosure:
        return self.round(ieee.point(value))

    def input(self, key: InputKey) -> Enclosure:
        return self.inputs[key]

    def add(self, a: Enclosure, b: Enclosure) -> Enclosure:
        return self.round(ieee.add(a, b))

    def subtract_maximum(self, x: Enclosure, minus_max: Enclosure) -> Enclosure:
        """x − max(…): exactly x − x when x attains the maximum in this case, ≤ 0 when x is
        one of its operands (rounding to nearest keeps a nonpositive number nonpositive)."""
        attained, operands = minus_max.maximum or (None, ())
        known = x.identity is not None  # minus_max is −max(…): addition_groups pairs only those
        if known and x.identity == attained:
            return ieee.difference_with_itself(x)
        value = self.round(ieee.add(x, minus_max))
        if known and x.identity in operands and not value.is_nan:
            assert value.lo is not None and value.hi is not None  # not NaN: it has two ends
            value = ieee.Enclosure(min(value.lo, mpmath.mpf(0)), min(value.hi, mpmath.mpf(0)),
                                   value.nan)
        return value

    def negate(self, value: Enclosure) -> Enclosure:
        return ieee.negate(value)

    def multiply(self, a: Enclosure, b: Enclosure) -> Enclosure:
        return self.round(ieee.multiply(a, b))

    def divide(self, a: Enclosure, b: Enclosure) -> Enclosure:
        return self.round(ieee.divide(a, b))

    def sqrt(self, value: Enclosure) -> Enclosure:
        return self.round(ieee.sqrt(value))

    def exp(self, value: Enclosure) -> Enclosure:
        return self.round(ieee.exp(value))

    def log(self, value: Enclosure) -> Enclosure:
        return self.round(ieee.log(value))

    def maximum(self, operands: list[Enclosure], expr: sp.Expr, env: Env) -> Enclosure:
        if any(o.is_nan for o in operands):
            return ieee.NAN
        identities = tuple(o.identity for o in operands)
        # one maximum, however often it is written (each expansion renames its bound index):
        # named by its operands when they are all known
        key = (("max", identities) if None not in identities
               else (expr, loop_values(env, expr)))
        if len(operands) == 1:
            chosen = 0
        elif key in self.choices:
            chosen = self.choices[key]
        else:
            raise _NeedChoice(key, len(operands))
        attained = operands[chosen]
        assert attained.lo is not None and attained.hi is not None  # not NaN: it has two ends
        floor = max(o.lo for o in operands if o.lo is not None)  # every one: none is NaN
        if floor > attained.hi:
            raise _Infeasible
        return ieee.Enclosure(max(attained.lo, floor), attained.hi,
                              any(o.nan for o in operands), attained.source,
                              (attained.identity, identities), attained.negated)


def enclose(expr: sp.Expr, env: Env, fmt: Format, sizes: dict[str, int],
            inputs: Mapping[InputKey, Enclosure], fixed: Mapping[InputKey, sp.Expr]
            ) -> Enclosure | None:
    """Every value ``expr`` can take in ``fmt``: the union over the cases of which operand
    attains each maximum (None: more cases than ``CASE_LIMIT``)."""
    pending: list[Choices] = [{}]
    result, cases = None, 0
    while pending:
        choices = pending.pop()
        cases += 1
        if cases > CASE_LIMIT:
            return None
        try:
            arithmetic = EnclosureArithmetic(fmt, inputs, choices)
            value = AsWritten(arithmetic, sizes, fixed).eval(expr, env)
        except _NeedChoice as need:
            pending.extend({**choices, need.key: c} for c in range(need.count))
            continue
        except _Infeasible:
            continue
        result = value if result is None else ieee.union(result, value)
    return result


# -- the proof ---------------------------------------------------------------------------------


def input_enclosures(theorem: Theorem, fmt: Format, sizes: dict[str, int],
                     fixed: Mapping[InputKey, sp.Expr], corner: Corner | None = None
                     ) -> dict[InputKey, Enclosure]:
    """Inputs in ``fmt``: fixed ones rounded from their written value, free ones their whole
    range (or, with ``corner``, the point that corner picks)."""
    values = {key: ieee.Enclosure(*_point_bounds(ieee.rounded(_enclosure_of(v), fmt)),
                                  source=key)
              for key, v in fixed.items()}
    for number, (key, domain) in enumerate(free_entries(theorem, sizes, fixed)):
        low, high = domain_range(domain)
        if corner is not None:
            low = high = corner(number, low, high)
        value = ieee.rounded(ieee.interval(low, high), fmt)
        values[key] = ieee.Enclosure(value.lo, value.hi, source=key)
    return values


def _enclosure_of(value: sp.Expr) -> Enclosure:
    return ieee.NAN if value is sp.nan else ieee.point(as_mpf(value))


def _point_bounds(value: Enclosure) -> tuple[mpmath.mpf | None, mpmath.mpf | None, bool]:
    return (value.lo, value.hi, value.nan)


# a point of a free input's range: (the input's number, its low end, its high end) -> the value
Corner = Callable[[int, float, float], float]
CORNERS: dict[str, Corner] = {
    "every input at the low end": lambda n, lo, hi: lo,
    "every input at the high end": lambda n, lo, hi: hi,
    "alternating ends": lambda n, lo, hi: lo if n % 2 else hi,
    "zeros where allowed": lambda n, lo, hi: min(max(0.0, lo), hi),
}


def _prove(theorem: Theorem, claim: IEEEValue) -> ProofResult:
    expr = written(theorem, claim)
    undecided = []
    checked = 0
    any_free = False
    for fmt_name, expected in claim.claimed.items():
        fmt = FORMATS[fmt_name]
        for sizes in claim.size_assignments():
            fixed = fixed_values(theorem, claim, sizes)
            free = free_entries(theorem, sizes, fixed)
            any_free = any_free or bool(free)
            inputs = input_enclosures(theorem, fmt, sizes, fixed)
            for env in index_env(expr, sizes):
                value = enclose(expr, env, fmt, sizes, inputs, fixed)
                checked += 1
                if value is not None and satisfies(value, expected, fmt):
                    continue
                found = _refute(theorem, expr, env, fmt, expected, sizes, fixed, free, value)
                if found is not None:
                    return ProofResult(REFUTED, _method(claim, any_free or bool(free),
                                                        "exact IEEE evaluation"),
                                       counterexample=found)
                undecided.append(f"{fmt_name} at {sizes}, {indices_text(env)}: "
                                 f"{value.describe() if value else 'too many cases'}")
    if undecided:
        return ProofResult(NOT_PROVED, _method(claim, any_free, "IEEE case analysis") +
                           f"; undecided: {'; '.join(undecided[:3])}")
    method = _method(claim, any_free, "IEEE case analysis") + f" ({checked} evaluations)"
    largest = _common_bound(claim)
    if largest:
        return ProofResult(PROVED_BOUNDED, method, max_size=largest)
    # fixed sizes: what was shown is an evaluation at them, not a statement about every size
    return ProofResult(PROVED, f"{EXACT_EVALUATION} at the stated sizes: {method}")


def _common_bound(claim: IEEEValue) -> int | None:
    """k when every dimension takes every size 1, …, k (k > 1): "sizes ≤ k" says just that."""
    ranges = {tuple(sorted(s)) for s in claim._stated_sizes().values()}
    if len(ranges) != 1:
        return None
    (sizes,) = ranges
    return sizes[-1] if len(sizes) > 1 and sizes == tuple(range(1, sizes[-1] + 1)) else None


def _method(claim: IEEEValue, free: bool, what: str) -> str:
    sizes = ", ".join(f"{n} ∈ {{{', '.join(map(str, s))}}}"
                      for n, s in claim._stated_sizes().items())
    over = ("every input in its range, split by which operand attains each maximum"
            if free else "the stated point")
    return (f"{what} in {', '.join(claim.formats)} at {sizes or 'the stated values'}, over "
            f"{over} (literals rounded into the format, operations correctly rounded, "
            "∞ − ∞ = 0·∞ = 0/0 = NaN)")


def indices_text(env: Env) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items()) or "the value"


def _refute(theorem: Theorem, expr: sp.Expr, env: Env, fmt: Format, expected: Expected,
            sizes: dict[str, int], fixed: Mapping[InputKey, sp.Expr],
            free: list[tuple[InputKey, Domain]], value: Enclosure | None
            ) -> dict[str, object] | None:
    """A point at which the exact IEEE evaluation lies outside the claim: the stated point
    itself, or a corner of the free inputs' ranges."""
    candidates: list[tuple[str | None, Corner | None]] = (
        [(None, None)] if not free else list(CORNERS.items()))
    for label, corner in candidates:
        inputs = input_enclosures(theorem, fmt, sizes, fixed, corner)
        point_value = value if corner is None else enclose(expr, env, fmt, sizes, inputs, fixed)
        if point_value is not None and violates(point_value, expected, fmt):
            return counterexample(fmt, sizes, env, inputs, point_value, expected, label)
    return None


def counterexample(fmt: Format, sizes: dict[str, int], env: Env,
                   inputs: Mapping[InputKey, Enclosure], value: Enclosure, expected: Expected,
                   label: str | None) -> dict[str, object]:
    shown = {entry_name(k): v.describe() for k, v in list(inputs.items())[:12]}
    found: dict[str, object] = {
        "format": fmt.name, "sizes": dict(sizes), "indices": indices_text(env), "values": shown,
        "lhs": value.describe(), "rhs": expected.describe()}
    if label:
        found["inputs"] = label
    return found


def entry_name(key: InputKey) -> str:
    if isinstance(key, tuple):
        return f"{key[0]}[{', '.join(map(str, key[1]))}]"
    return str(key)


__all__ = ["IEEEValue", "Between", "Near"]
