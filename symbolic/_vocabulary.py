"""Vocabulary of attention: softmax with inverse temperature, log-sum-exp, entropy, KL, rowsum,
the plane rotations of rotary positions, indicators, and where() as ``jnp.where`` selects.

``Softmax`` and ``LogSumExp`` are SymPy nodes: they print as the tutorial writes them, expand to
exp/log/Sum for the provers (``expand_vocabulary``), and the numeric compiler gives them their
max-shifted stable spelling. Entropy, KL and rowsum are plain sums of these and need no node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import mpmath
import sympy as sp
from sympy.concrete.expr_with_intlimits import ExprWithIntLimits
from sympy.concrete.expr_with_limits import ExprWithLimits
from sympy.printing.precedence import PRECEDENCE

from ._errors import TheoremError

if TYPE_CHECKING:
    from sympy.printing.latex import LatexPrinter


def raised_latex(text: str, exp: str | None, parenthesized: bool = False) -> str:
    """A node's LaTeX raised to ``exp``, the printed exponent SymPy's printer passes to a
    function's ``_latex`` when it is the base of a power (p², p^β). A subscripted node is put in
    parentheses first: softmax_j(x)^2 would read as the square of x's softmax only by luck."""
    if exp is None:
        return text
    if parenthesized:
        text = rf"\left({text}\right)"
    return rf"{text}^{{{exp}}}"


class Softmax(sp.Function):
    """``Softmax(x, j, beta, lower, upper[, mask])``: entry ``j`` of softmax over ``j`` of
    ``beta * x``, where a mask (0 or 1 per entry, written at the same ``j``) is given.

    ``j`` stays free: the node *is* the ``j``-th weight, and ``x`` is written at that same ``j``.
    The range of ``j`` is carried explicitly because ``j`` may be renamed to a bound dummy.
    A masked entry weighs 0, and so does every entry of a fully masked row.
    """

    nargs = (5, 6)
    is_real = True
    is_nonnegative = True

    def _eval_is_positive(self) -> bool | None:
        return True if self.mask == 1 else None

    @property
    def logits(self) -> sp.Expr:
        return self.args[0]

    @property
    def index(self) -> sp.Expr:
        return self.args[1]

    @property
    def beta(self) -> sp.Expr:
        return self.args[2]

    @property
    def bounds(self) -> tuple[sp.Expr, sp.Expr]:
        return self.args[3], self.args[4]

    @property
    def mask(self) -> sp.Expr:
        return self.args[5] if len(self.args) == 6 else sp.S.One

    def expand_node(self) -> sp.Expr:
        bound = sp.Dummy("k", integer=True)

        def at_bound(expr: sp.Expr) -> sp.Expr:
            return expr.xreplace({self.index: bound})

        numerator = self.mask * sp.exp(self.beta * self.logits)
        total = sp.Sum(at_bound(numerator), (bound, *self.bounds))
        if self.mask == 1:
            return numerator / total
        # the weights of a fully masked row are 0/(0 + 1) = 0, with no case split
        return numerator / (total + AllMasked(1 - at_bound(self.mask), (bound, *self.bounds)))

    def _latex(self, printer: LatexPrinter, exp: str | None = None) -> str:
        # β multiplies the logits: a sum (β + Δβ) or a sum of logits needs its parentheses
        beta = "" if self.beta == 1 else printer.parenthesize(self.beta, PRECEDENCE["Mul"]) + " "
        inner = (printer._print(self.logits) if self.beta == 1
                 else printer.parenthesize(self.logits, PRECEDENCE["Mul"]))
        index = printer._print(self.index)
        mask = "" if self.mask == 1 else r" \,\middle|\, " + printer._print(self.mask)
        text = rf"\operatorname{{softmax}}_{{{index}}}\left({beta}{inner}{mask}\right)"
        return raised_latex(text, exp, parenthesized=True)


class AllMasked(sp.Product):
    """``AllMasked(1 - m_k, (k, lo, hi))`` = Π_k (1 − m_k) for a 0/1 mask m: 1 when every entry
    of the row is masked, else 0. It is only ever added to the masked sum Σ_k m_k exp(x_k),
    which is 0 exactly when it is 1, so it may be scaled freely (the numeric side's max-shift
    relies on that) without changing a masked softmax."""


class LogSumExp(ExprWithIntLimits):
    """``LogSumExp(x, (k, lo, hi))``: log of the sum over ``k`` of ``exp(x)``, a smooth maximum."""

    __slots__ = ()

    def _eval_is_real(self) -> bool:
        return True

    def __new__(cls, function: sp.Expr, *limits: tuple[sp.Expr, ...],
                **assumptions: bool) -> sp.Expr:
        return ExprWithLimits.__new__(cls, function, *limits, **assumptions)

    def expand_node(self) -> sp.Expr:
        return sp.log(sp.Sum(sp.exp(self.function), *self.limits))

    def _latex(self, printer: LatexPrinter) -> str:
        (index, _, _), = self.limits
        return (
            rf"\operatorname{{lse}}_{{{printer._print(index)}}}"
            rf"\left({printer._print(self.function)}\right)"
        )


class ReduceMax(ExprWithIntLimits):
    """``ReduceMax(x, (k, lo, hi))``: the maximum over ``k`` of ``x``.

    The provers treat it as an opaque real: identities that hold for every reference point
    (the online-softmax merge holds for any m, not only the maximum) are proved for it too.
    """

    __slots__ = ()

    def _eval_is_real(self) -> bool:
        return True

    def __new__(cls, function: sp.Expr, *limits: tuple[sp.Expr, ...],
                **assumptions: bool) -> sp.Expr:
        return ExprWithLimits.__new__(cls, function, *limits, **assumptions)

    def doit(self, **hints: Any) -> sp.Expr:
        (index, lower, upper), = self.limits
        if not (lower.is_Integer and upper.is_Integer):
            return self
        return sp.Max(*(self.function.xreplace({index: v}) for v in range(lower, upper + 1)))

    def _latex(self, printer: LatexPrinter) -> str:
        (index, _, _), = self.limits
        return rf"\max_{{{printer._print(index)}}} {printer.parenthesize(self.function, 60)}"


class ReduceMin(ExprWithIntLimits):
    """``ReduceMin(x, (k, lo, hi))``: the minimum over ``k`` of ``x`` (−max over ``k`` of −x).

    The provers read it as −``ReduceMax``(−x) (``expand_node``), an opaque real; written out
    over a concrete range it is SymPy's ``Min``.
    """

    __slots__ = ()

    def _eval_is_real(self) -> bool:
        return True

    def __new__(cls, function: sp.Expr, *limits: tuple[sp.Expr, ...],
                **assumptions: bool) -> sp.Expr:
        return ExprWithLimits.__new__(cls, function, *limits, **assumptions)

    def expand_node(self) -> sp.Expr:
        """−max(−x): the provers see one spelling of a minimum, so facts about maxima (an
        entry is at most its row's maximum) serve minima too."""
        return -ReduceMax(-self.function, *self.limits)

    def doit(self, **hints: Any) -> sp.Expr:
        (index, lower, upper), = self.limits
        if not (lower.is_Integer and upper.is_Integer):
            return self
        return sp.Min(*(self.function.xreplace({index: v}) for v in range(lower, upper + 1)))

    def _latex(self, printer: LatexPrinter) -> str:
        (index, _, _), = self.limits
        return rf"\min_{{{printer._print(index)}}} {printer.parenthesize(self.function, 60)}"


class OnlineSoftmax(ExprWithIntLimits):
    """``OnlineSoftmax((score, value, block), (j, lo, hi))``: Σ_j softmax_j(score)·value, the
    attention output of one row, *as the block-wise (flash) algorithm computes it*: the keys in
    blocks of ``block``, a running maximum m_t, the running sum ℓ_t = e^(m_(t−1) − m_t)·ℓ_(t−1)
    + Σ_(j in block t) e^(score_j − m_t) and the running output O_t likewise, divided once at
    the end (the tutorial's §10.1.2). Its exact value is the closed form (``closed_form``); the
    node exists so that an error analysis can see the order of the operations."""

    __slots__ = ()

    def __new__(cls, function: sp.Expr, *limits: tuple[sp.Expr, ...],
                **assumptions: bool) -> sp.Expr:
        return ExprWithLimits.__new__(cls, function, *limits, **assumptions)

    @property
    def score(self) -> sp.Expr:
        return self.function[0]

    @property
    def value(self) -> sp.Expr:
        return self.function[1]

    @property
    def block(self) -> sp.Expr:
        return self.function[2]

    def closed_form(self) -> sp.Expr:
        (index, lower, upper), = self.limits
        maximum = ReduceMax(self.score, (index, lower, upper))
        weight = sp.exp(self.score - maximum)
        return (sp.Sum(weight * self.value, (index, lower, upper))
                / sp.Sum(weight, (index, lower, upper)))

    def _latex(self, printer: LatexPrinter) -> str:
        (index, _, _), = self.limits
        return (rf"\operatorname{{online}}_{{{printer._print(index)},\,"
                rf"b = {printer._print(self.block)}}}\left[\operatorname{{softmax}}\left("
                rf"{printer._print(self.score)}\right) \cdot {printer._print(self.value)}"
                r"\right]")


class _Sized(Protocol):
    """A dimension or a scalar (``Dim``, ``Scalar``: symbolic/_language.py imports this module)."""

    @property
    def symbol(self) -> sp.Symbol: ...


def online_softmax(score: sp.Expr, value: sp.Expr, over: sp.Idx,
                   block: _Sized | sp.Expr | int) -> OnlineSoftmax:
    """Σ_over softmax(score)·value computed block-wise, ``block`` keys at a time, by the online
    algorithm (running maximum, rescaled sum and output, one division at the end)."""
    block = block.symbol if hasattr(block, "symbol") else sp.sympify(block)
    return OnlineSoftmax(sp.Tuple(score, value, block), (over, over.lower, over.upper))


class Rotation(sp.Function):
    """``Rotation(angle, row, column)``: entry (row, column) of the plane rotation by ``angle``,
    [[cos, −sin], [sin, cos]], its indices running over a dimension of size 2.

    At concrete entries it is that entry; otherwise it expands to
    cos(angle) δ(row, column) + (row − column) sin(angle), which is the same matrix for indices
    in {0, 1} and the spelling the numeric compiler evaluates.
    """

    nargs = 3
    is_real = True

    @classmethod
    def eval(cls, angle: sp.Expr, row: sp.Expr, column: sp.Expr) -> sp.Expr | None:
        if not (row.is_Integer and column.is_Integer):
            return None
        if {int(row), int(column)} - {0, 1}:
            raise TheoremError(f"rotation entry ({row}, {column}): a plane rotation has entries "
                               "(0|1, 0|1) only; declare its axes with Sizes(2, 2)")
        if row == column:
            return sp.cos(angle)
        return (row - column) * sp.sin(angle)

    @property
    def angle(self) -> sp.Expr:
        return self.args[0]

    def expand_node(self) -> sp.Expr:
        angle, row, column = self.args
        return sp.cos(angle) * sp.KroneckerDelta(row, column) + (row - column) * sp.sin(angle)

    def _latex(self, printer: LatexPrinter, exp: str | None = None) -> str:
        row, column = (printer._print(a) for a in self.args[1:])
        text = rf"R\left({printer._print(self.angle)}\right)_{{{row} {column}}}"
        return raised_latex(text, exp, parenthesized=True)


class Indicator(sp.Function):
    """``Indicator(condition)``: 1 where the condition on indices holds, else 0 (Iverson's
    bracket [j ≤ i]). A node of its own rather than SymPy's Piecewise, whose folding under
    nested sums moves a bound index's condition out of its sum."""

    nargs = 1
    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, condition: sp.Basic) -> sp.Integer | None:
        if condition == sp.true:
            return sp.S.One
        if condition == sp.false:
            return sp.S.Zero
        return None

    @property
    def condition(self) -> sp.Basic:
        return self.args[0]

    def _latex(self, printer: LatexPrinter, exp: str | None = None) -> str:
        return raised_latex(rf"\left[{printer._print(self.condition)}\right]", exp)


def indicator(condition: sp.Basic) -> Indicator:
    """1 where ``condition`` (a comparison of indices, sizes and integer scalars: ``j <= i``,
    ``sp.Eq(sp.Mod(j, k), 0)``, combined with ``&``, ``|``, ``~``) holds, else 0: causal,
    local, strided and block masks as expressions of indices."""
    return Indicator(condition)


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
    exponent = int(mpmath.floor(mpmath.log10(abs(mpmath.mpf(value._mpf_)))))
    mantissa = float(value) / 10.0 ** exponent
    if abs(exponent) < 4 or mantissa != round(mantissa):
        return None
    sign = "-" if mantissa < 0 else ""
    head = "" if abs(mantissa) == 1 else rf"{abs(int(mantissa))} \cdot "
    return rf"{sign}{head}10^{{{exponent}}}"


def where(mask: sp.Expr, x: sp.Expr, fill: object) -> Where:
    """jnp.where(mask, x, fill) for a 0/1 mask entry (the documents' masking code)."""
    return Where(mask, x, sp.sympify(fill))



def indicators_for_piecewise(expr: sp.Basic) -> sp.Basic:
    """``expr`` with every condition written as indicators:

    * every Piecewise as a sum of indicators times its pieces:
      Piecewise((f, c), (g, True)) = [c] f + [¬c] g (the pieces are finite reals);
    * every Kronecker delta between two integer expressions neither of which is an index
      (δ(0, j mod k), δ(⌊i/B⌋, ⌊j/B⌋)) as the indicator of their equality, [a = b]: no sum can
      eliminate it by substitution, and the indicator's rules (a row that keeps an entry, the
      compiled equality test) apply to it. A delta on an index, δ(j, e), stays a delta."""
    if not isinstance(expr, sp.Basic) or not (
            expr.has(sp.Piecewise) or any(map(_is_a_condition, expr.atoms(sp.KroneckerDelta)))):
        return expr
    if isinstance(expr, sp.Piecewise):
        total, earlier = sp.S.Zero, sp.false
        for value, condition in expr.args:
            applies = sp.And(condition, sp.Not(earlier))
            total += Indicator(applies) * indicators_for_piecewise(value)
            earlier = sp.Or(earlier, condition)
        return total
    if isinstance(expr, sp.KroneckerDelta) and _is_a_condition(expr):
        return Indicator(sp.Eq(*expr.args[:2]))
    return expr.func(*(indicators_for_piecewise(arg) for arg in expr.args))


def _is_a_condition(delta: sp.KroneckerDelta) -> bool:
    """A delta that no substitution of an index can eliminate: neither side is an index."""
    return not any(isinstance(a, (sp.Idx, sp.Symbol)) for a in delta.args[:2])


def rotation(angle: sp.Expr, row: sp.Idx, column: sp.Idx) -> Rotation:
    """Entry (``row``, ``column``) of the 2×2 rotation by ``angle``; both indices run over a
    dimension declared with ``Sizes(2, 2)`` (the two coordinates of one rotary pair)."""
    return Rotation(sp.sympify(angle), row, column)


def rotate_half(x: sp.Expr, over: sp.Idx) -> sp.Expr:
    """rotate_half of rotary embeddings on one pair: (x₀, x₁) ↦ (−x₁, x₀), for ``x`` written at
    the pair index ``over``: the rotation by π/2 applied to the pair."""
    # the coordinate it reads from, c_r for a pair index c (no prime: code is generated from it)
    bound = sp.Idx(sp.Dummy(f"{over.label}_r", integer=True), (over.lower, over.upper))
    return sp.Sum(Rotation(sp.pi / 2, over, bound) * x.xreplace({over: bound}),
                  (bound, over.lower, over.upper))


def softmax(logits: sp.Expr, over: sp.Idx, beta: sp.Expr = sp.S.One) -> Softmax:
    """Softmax over index ``over`` at inverse temperature ``beta`` (the tutorial's (11), (16))."""
    return Softmax(logits, over, sp.sympify(beta), over.lower, over.upper)


def masked_softmax(logits: sp.Expr, mask: sp.Expr, over: sp.Idx,
                   beta: sp.Expr = sp.S.One) -> Softmax:
    """Softmax over ``over`` keeping only the entries where ``mask`` (0 or 1, written at the same
    index, e.g. ``M[i, j]``) is 1: the tutorial's S + (1 − M)(−∞) of (57), with zero weights
    for a fully masked row."""
    # a Piecewise mask becomes indicators now: a sum built around the node would fold a
    # Piecewise out of it, leaving an unmasked softmax behind
    mask = indicators_for_piecewise(sp.sympify(mask))
    return Softmax(logits, over, sp.sympify(beta), over.lower, over.upper, mask)


def fully_masked(mask: sp.Expr, over: sp.Idx) -> AllMasked:
    """Π over ``over`` of (1 − ``mask``): 1 when a 0/1 mask keeps no entry of the row, else 0."""
    return AllMasked(1 - indicators_for_piecewise(sp.sympify(mask)), (over, over.lower, over.upper))


def lse(function: sp.Expr, over: sp.Idx) -> LogSumExp:
    """Log-sum-exp over ``over``: log of the sum of exp(function)."""
    return LogSumExp(function, (over, over.lower, over.upper))


def rowmax(function: sp.Expr, over: sp.Idx) -> ReduceMax:
    """Maximum over ``over``, the running maximum m of online softmax (67)."""
    return ReduceMax(function, (over, over.lower, over.upper))


def rowmin(function: sp.Expr, over: sp.Idx) -> ReduceMin:
    """Minimum over ``over``, beside ``rowmax`` (the two ends of a row: max − min is its spread)."""
    return ReduceMin(function, (over, over.lower, over.upper))


def rowsum(function: sp.Expr, over: sp.Idx) -> sp.Sum:
    return sp.Sum(function, (over, over.lower, over.upper))


def entropy(p: sp.Expr, over: sp.Idx) -> sp.Expr:
    """Shannon entropy −Σ p log p over ``over`` (the tutorial's (20))."""
    return -rowsum(p * sp.log(p), over)


def kl(p: sp.Expr, q: sp.Expr, over: sp.Idx) -> sp.Expr:
    """Kullback–Leibler divergence KL(p‖q) = Σ p (log p − log q) over ``over``."""
    return rowsum(p * (sp.log(p) - sp.log(q)), over)


def expectation(p: sp.Expr, value: sp.Expr, over: sp.Idx) -> sp.Expr:
    """⟨value⟩ under weights p over ``over``."""
    return rowsum(p * value, over)


def expand_vocabulary(expr: sp.Expr) -> sp.Expr:
    """Replace every vocabulary node by its exp/log/Sum definition, innermost first."""
    if not isinstance(expr, sp.Basic) or not expr.args:
        return expr
    rebuilt = expr.func(*(expand_vocabulary(arg) for arg in expr.args))
    if isinstance(rebuilt, (Softmax, LogSumExp, Rotation, ReduceMin)):
        return rebuilt.expand_node()
    return rebuilt
