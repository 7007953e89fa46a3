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

import functools
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import mpmath
import sympy as sp

from ..route import (
    EXACT_EVALUATION,
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    ClaimKind,
    Indicator,
    Integer,
    Mask,
    Positive,
    ProofResult,
    Real,
    ReduceMax,
    ReduceMin,
    Simplex,
    TheoremError,
    expand_vocabulary,
    ordered_free_indices,
    raised_latex,
)
from . import _ieee_arithmetic as ieee
from ._ieee_arithmetic import FORMATS, INF, Enclosure

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from sympy.printing.latex import LatexPrinter

    from ..route import AnyConfiguration, Domain, Theorem
    from ._ieee_arithmetic import Arithmetic, DecidingArithmetic, Env, Format, InputKey

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
                "finite": (-fmt.largest, fmt.largest)}[self.name]

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
        return [c for c in found if c[1] in self.formats]

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


class Where(sp.Function):
    """``Where(mask, x, fill)``: ``x`` where the 0/1 ``mask`` is 1, else ``fill``, as
    ``jnp.where(mask, x, fill)`` selects: no arithmetic, so a fill of −∞ or −1e9 enters the
    formula as written (an unevaluated node: SymPy never folds it into what surrounds it)."""

    nargs = 3

    def _latex(self, printer: LatexPrinter, exp: str | None = None) -> str:
        mask, x = (printer._print(a) for a in self.args[:2])
        fill = _float_latex(self.args[2]) or printer._print(self.args[2])
        return raised_latex(rf"\operatorname{{where}}\left({mask}, {x}, {fill}\right)", exp)


def _float_latex(value: sp.Expr) -> str | None:
    """A large float literal as the code writes it, −1e9 as −10^{9} rather than −1000000000.0."""
    if not isinstance(value, sp.Float) or value == 0:
        return None
    exponent = int(mpmath.floor(mpmath.log10(abs(as_mpf(value)))))
    mantissa = float(value) / 10.0 ** exponent
    if abs(exponent) < 4 or mantissa != round(mantissa):
        return None
    sign = "-" if mantissa < 0 else ""
    head = "" if abs(mantissa) == 1 else rf"{abs(int(mantissa))} \cdot "
    return rf"{sign}{head}10^{{{exponent}}}"


def where(mask: sp.Expr, x: sp.Expr, fill: object) -> Where:
    """jnp.where(mask, x, fill) for a 0/1 mask entry (the documents' masking code)."""
    return Where(mask, x, sp.sympify(fill))


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


def is_negated_maximum(term: sp.Expr) -> bool:
    return (isinstance(term, sp.Mul) and len(term.args) == 2 and term.args[0] == -1
            and isinstance(term.args[1], (sp.Max, ReduceMax)))


def addition_groups(terms: Iterable[sp.Expr]) -> list[list[sp.Expr]]:
    """The order a sum is evaluated in, on both routes: x − max(…) first when it is written,
    then the other terms left to right."""
    terms = list(terms)
    maxima = [t for t in terms if is_negated_maximum(t)]
    others = [t for t in terms if not is_negated_maximum(t)]
    if maxima and others:
        return [[others[0], maxima[0]], *([t] for t in others[1:] + maxima[1:])]
    return [[t] for t in terms]


def fraction_parts(term: sp.Mul) -> tuple[list[sp.Expr], list[sp.Expr]]:
    """Numerator and denominator factors of a product, in order: x/y is one division."""
    numerator, denominator = [], []
    for factor in term.args:
        if (isinstance(factor, sp.Pow) and factor.exp.is_Integer and factor.exp < 0):
            denominator.append(factor.base ** -factor.exp if factor.exp != -1 else factor.base)
        else:
            numerator.append(factor)
    return numerator, denominator


def integer_value(expr: sp.Expr, env: dict, sizes: dict) -> int:
    """An index bound or index value: exact, from the loop variables and the sizes."""
    if isinstance(expr, (int, sp.Integer)):
        return int(expr)
    label = expr.label if isinstance(expr, sp.Idx) else expr
    if label in env:
        return int(env[label])
    value = _exact(sp.sympify(expr), env, sizes)
    if not value.is_Integer:
        raise TheoremError(f"IEEE value: {expr} is not an integer here ({value})")
    return int(value)


def _exact(expr: sp.Expr, env: dict, sizes: dict) -> sp.Expr:
    """``expr`` with indices, loop variables and sizes replaced by their integers."""
    dims = {sp.Symbol(n, integer=True, positive=True): v for n, v in sizes.items()}
    expr = expr.xreplace({i: i.label for i in expr.atoms(sp.Idx)})
    return sp.sympify(expr.xreplace(env).xreplace(dims))  # a size alone becomes a Python int


def loop_key(variable: sp.Basic) -> sp.Symbol:
    """Loop variables are keyed by their label: an index and its label name one value."""
    return variable.label if isinstance(variable, sp.Idx) else variable


def condition_holds(condition: sp.Basic, env: Env, sizes: dict[str, int],
                    fixed: Mapping[InputKey, sp.Expr]) -> bool:
    """A where()'s condition, decided exactly from fixed inputs and index values."""
    if condition in (sp.true, True):
        return True
    replaced = condition.replace(
        lambda e: isinstance(e, sp.Indexed),
        lambda e: fixed[(str(e.base), tuple(integer_value(i, env, sizes) for i in e.indices))])
    replaced = replaced.xreplace({s: fixed[s.name] for s in replaced.free_symbols
                                  if getattr(s, "name", None) in fixed})
    replaced = _exact(replaced, env, sizes)
    if replaced not in (sp.true, sp.false):
        raise TheoremError(f"IEEE value: the condition {condition} is not decided by fixed "
                           f"inputs and indices ({replaced})")
    return replaced == sp.true


def mask_keeps(mask: sp.Expr, env: Env, sizes: dict[str, int],
               fixed: Mapping[InputKey, sp.Expr]) -> bool:
    """Whether a where()'s 0/1 mask entry is 1, read from the fixed inputs."""
    if isinstance(mask, sp.Indexed):
        key = (str(mask.base), tuple(integer_value(i, env, sizes) for i in mask.indices))
        return fixed[key] == 1
    return condition_holds(sp.Eq(mask, 1), env, sizes, fixed)


def index_env(expr: sp.Expr, sizes: dict) -> Iterator[Env]:
    """Every assignment of the free indices of ``expr`` at ``sizes``."""
    indices = ordered_free_indices(expr)
    ranges = [range(integer_value(i.upper, {}, sizes) + 1) for i in indices]
    for values in itertools.product(*ranges):
        yield {i.label: sp.Integer(v) for i, v in zip(indices, values, strict=True)}


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


# -- the one "as written" evaluator ------------------------------------------------------------

# a relation's name, as an arithmetic that decides conditions compares it
RELATIONS = {sp.Eq: "==", sp.Ne: "!=", sp.Le: "<=", sp.Lt: "<", sp.Ge: ">=", sp.Gt: ">"}


# a value of an arithmetic: an ``Enclosure``, or an array of any backend (NumPy, JAX, MLX, ...):
# no one type covers them
Value = Any
# the arithmetic an evaluator computes with
A = TypeVar("A", bound="Arithmetic[Any]")
# a rule: (the evaluator, the node, the loop values) -> the node's value; the evaluator is Any
# because a subclass's rules take the subclass (``AlongAxes``)
Rule = Callable[[Any, sp.Basic, "Env"], Value]


class AsWritten(Generic[A]):
    """The written formula evaluated node by node, by the rules of :attr:`RULES` (looked up in
    that order), with an ``arithmetic``: the symbolic route's enclosures of every value a format
    can produce (:class:`EnclosureArithmetic`), or a backend's arrays in a format (the numeric
    route's). Both routes evaluate the same operations in the same order: a sum's x − max(…)
    first where it is written, then its terms left to right; x/y one division; x^n as n − 1
    products; a literal rounded into the format; indices and loop values exact; a where() or
    a Piecewise decided by the fixed inputs and the indices. A subexpression is evaluated once
    per value of the indices it depends on. The error bounds walk the same rules a whole axis
    at a time (``AlongAxes``, ``numeric/kinds/_along_axes.py``).

    An arithmetic gives ``literal(number)``, ``exact(integer)`` (an index, a loop value, the
    empty sum's 0 and product's 1), ``size(n)``, ``input(key)`` (an input's name, or
    ``(tensor, indices)`` for one of its entries), ``add``, ``subtract_maximum`` (x − max(…)),
    ``negate``, ``multiply``, ``divide``, ``sqrt``, ``exp``, ``log`` and
    ``maximum(operands, expr, env)``.

    An arithmetic over drawn values (a limit's value over rows of scores,
    ``numeric/kinds/_row_values.py``) sets ``decides_conditions``: a Piecewise or an Indicator
    is then decided per value, its relations through ``compare(relation, a, b)``, ``both``,
    ``either``, ``negation`` and ``select(holds, a, b)``. An arithmetic may also give
    ``minimum``, ``absolute`` and ``power`` (the arrays' arithmetics give the first two, the
    rows' all three); one without them has no rule for their nodes.
    """

    def __init__(self, arithmetic: A, sizes: dict[str, int],
                 fixed: Mapping[InputKey, sp.Expr]) -> None:
        self.arithmetic, self.sizes, self.fixed = arithmetic, sizes, fixed
        # a node's value, by the node and what tells its evaluations apart
        self.known: dict[tuple[object, ...], Value] = {}

    def eval(self, expr: sp.Expr, env: Env) -> Value:
        key = (expr, loop_values(env, expr))
        if key not in self.known:
            self.known[key] = self.evaluate(expr, env)
        return self.known[key]

    def evaluate(self, expr: sp.Expr, env: Env) -> Value:
        arithmetic = self.arithmetic
        if expr.is_Number or expr in (sp.oo, -sp.oo, sp.nan, sp.zoo):
            return arithmetic.literal(sp.nan if expr is sp.zoo else expr)
        if isinstance(expr, sp.Idx):
            return arithmetic.exact(integer_value(expr, env, self.sizes))
        if isinstance(expr, sp.Symbol):
            if expr in env:
                return arithmetic.exact(int(env[expr]))
            if expr.name in self.sizes:
                return arithmetic.size(self.sizes[expr.name])
            return arithmetic.input(expr.name)
        if isinstance(expr, sp.Indexed):
            return arithmetic.input((str(expr.base), tuple(integer_value(i, env, self.sizes)
                                                           for i in expr.indices)))
        for node, rule in self.RULES:
            if isinstance(expr, node):
                return rule(self, expr, env)
        raise TheoremError(f"no rule evaluates {type(expr).__name__} as written ({expr})")

    def add(self, expr: sp.Add, env: Env) -> Value:
        total: Value | None = None
        for group in addition_groups(expr.args):
            value = self.eval(group[0], env)
            if len(group) == 2:
                value = self.arithmetic.subtract_maximum(value, self.eval(group[1], env))
            total = value if total is None else self.arithmetic.add(total, value)
        assert total is not None  # a sum has terms
        return total

    def multiply(self, expr: sp.Mul, env: Env) -> Value:
        numerator, denominator = fraction_parts(expr)
        if numerator[:1] == [sp.S.NegativeOne] and len(numerator) == 2 and not denominator:
            return self.arithmetic.negate(self.eval(numerator[1], env))
        top = self.product(numerator, env)
        if not denominator:
            return top
        return self.arithmetic.divide(top, self.product(denominator, env))

    def product(self, factors: list[sp.Expr], env: Env) -> Value:
        value: Value | None = None
        for factor in factors:
            item = self.eval(factor, env)
            value = item if value is None else self.arithmetic.multiply(value, item)
        return value if value is not None else self.arithmetic.exact(1)

    def power(self, expr: sp.Pow, env: Env) -> Value:
        base, exponent = expr.args
        if exponent == sp.Rational(1, 2):
            return self.arithmetic.sqrt(self.eval(base, env))
        if exponent == -sp.Rational(1, 2):  # 1/√x: a root and a division
            return self.arithmetic.divide(self.arithmetic.exact(1),
                                          self.arithmetic.sqrt(self.eval(base, env)))
        if exponent.is_Integer and exponent > 0:
            return self.product([base] * int(exponent), env)
        if exponent.is_Integer and exponent < 0:
            return self.arithmetic.divide(self.arithmetic.exact(1),
                                          self.product([base] * -int(exponent), env))
        return self.operation("power", expr)(self.eval(base, env), self.eval(exponent, env))

    def fold(self, expr: sp.Sum | sp.Product, env: Env,
             operation: Callable[[Value, Value], Value], empty: int) -> Value:
        # over several indices, the first innermost (SymPy's order): the last one loops here
        *inner, (variable, lower, upper) = expr.limits
        function = type(expr)(expr.function, *inner) if inner else expr.function
        total: Value | None = None
        for v in range(integer_value(lower, env, self.sizes),
                       integer_value(upper, env, self.sizes) + 1):
            item = self.eval(function, {**env, loop_key(variable): sp.Integer(v)})
            total = item if total is None else operation(total, item)
        return total if total is not None else self.arithmetic.exact(empty)

    def maximum(self, expr: sp.Max | ReduceMax, env: Env) -> Value:
        operands = [self.eval(o, e) for o, e in max_operands(expr, env, self.sizes)]
        return self.arithmetic.maximum(operands, expr, env)

    def where(self, expr: Where, env: Env) -> Value:
        mask, x, fill = expr.args
        return self.eval(x if mask_keeps(mask, env, self.sizes, self.fixed) else fill, env)

    def piecewise(self, expr: sp.Piecewise, env: Env) -> Value:
        return self.branches(expr.args, env)

    def indicator(self, expr: Indicator, env: Env) -> Value:
        return self.branches(((sp.S.One, expr.args[0]), (sp.S.Zero, sp.true)), env)

    def branches(self, pairs: Sequence[tuple[sp.Expr, sp.Basic]], env: Env) -> Value:
        """The first branch whose condition holds (NaN where none does): decided by the fixed
        inputs and the indices, or, for an arithmetic that decides conditions, per value."""
        if not getattr(self.arithmetic, "decides_conditions", False):
            for branch, condition in pairs:
                if condition_holds(condition, env, self.sizes, self.fixed):
                    return self.eval(branch, env)
            return self.arithmetic.literal(sp.nan)
        deciding = self._deciding()
        result = deciding.literal(sp.nan)
        for branch, condition in reversed(pairs):  # so that the first that holds is kept
            result = deciding.select(self.condition(condition, env), self.eval(branch, env),
                                     result)
        return result

    def _deciding(self) -> DecidingArithmetic[Any]:
        """The arithmetic, where it sets ``decides_conditions`` (so it gives ``compare``,
        ``both``, ``either``, ``negation`` and ``select``, the contract above)."""
        return cast("DecidingArithmetic[Any]", self.arithmetic)

    def condition(self, condition: sp.Basic, env: Env) -> object:
        """A condition's truth per value, its relations compared through the arithmetic."""
        deciding = self._deciding()
        if condition in (sp.true, sp.false):
            return condition == sp.true
        if isinstance(condition, (sp.And, sp.Or)):
            combine = deciding.both if isinstance(condition, sp.And) else deciding.either
            parts = [self.condition(part, env) for part in condition.args]
            result = parts[0]
            for part in parts[1:]:
                result = combine(result, part)
            return result
        if isinstance(condition, sp.Not):
            return deciding.negation(self.condition(condition.args[0], env))
        if type(condition) not in RELATIONS:
            raise TheoremError(f"no rule decides the condition {condition} as written")
        return deciding.compare(RELATIONS[type(condition)], self.eval(condition.lhs, env),
                                self.eval(condition.rhs, env))

    def minimum(self, expr: sp.Min | ReduceMin, env: Env) -> Value:
        operands = [self.eval(o, e) for o, e in max_operands(expr, env, self.sizes)]
        return self.operation("minimum", expr)(operands)

    def absolute(self, expr: sp.Abs, env: Env) -> Value:
        return self.operation("absolute", expr)(self.eval(expr.args[0], env))

    def operation(self, name: str, expr: sp.Expr) -> Callable[..., Value]:
        """The arithmetic's ``name``, which only some arithmetics give."""
        found = getattr(self.arithmetic, name, None)
        if found is None:
            raise TheoremError(f"no rule evaluates {type(expr).__name__} as written here ({expr}):"
                               f" this arithmetic has no {name}")
        return found

    RULES: ClassVar[tuple[tuple[type, Rule], ...]] = (
        (sp.Add, add),
        (sp.Mul, multiply),
        (sp.Pow, power),
        (sp.exp, lambda self, e, env: self.arithmetic.exp(self.eval(e.args[0], env))),
        (sp.log, lambda self, e, env: self.arithmetic.log(self.eval(e.args[0], env))),
        (sp.Sum, lambda self, e, env: self.fold(e, env, self.arithmetic.add, 0)),
        (sp.Product, lambda self, e, env: self.fold(e, env, self.arithmetic.multiply, 1)),
        (sp.Max, maximum),
        (ReduceMax, maximum),
        (sp.Min, minimum),
        (ReduceMin, minimum),
        (sp.Abs, absolute),
        (Where, where),
        (sp.Piecewise, piecewise),
        (Indicator, indicator),
    )


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


def loop_values(env: Env, expr: sp.Basic) -> frozenset[tuple[sp.Symbol, sp.Integer]]:
    """The loop values ``expr`` depends on: what tells apart two of its evaluations."""
    free = _free_labels(expr)
    return frozenset((k, v) for k, v in env.items() if k in free)


@functools.lru_cache(maxsize=65536)
def _free_labels(expr: sp.Basic) -> frozenset[sp.Symbol]:
    return frozenset(getattr(s, "label", s) for s in expr.free_symbols)


def max_operands(expr: sp.Max | sp.Min | ReduceMax | ReduceMin, env: Env,
                 sizes: dict[str, int]) -> list[tuple[sp.Expr, Env]]:
    """The (operand, loop values) pairs a maximum (or a minimum) is taken over."""
    if isinstance(expr, (ReduceMax, ReduceMin)):
        (variable, lower, upper), = expr.limits
        return [(expr.function, {**env, loop_key(variable): sp.Integer(v)})
                for v in range(integer_value(lower, env, sizes),
                               integer_value(upper, env, sizes) + 1)]
    return [(arg, env) for arg in expr.args]


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


__all__ = ["IEEEValue", "Between", "Near", "Where", "where"]
