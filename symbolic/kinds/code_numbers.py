"""Worked numbers from code: a demo's printed values, computed from its own code.

A document that prints numbers from a small program (the theory notebook's demos) asserts that
the program's values round to what it prints. ``FromCode(compute, printed, labels, data)``
states that: ``compute(xp, **data)`` is the demo written once against a tiny array namespace
``xp`` (arrays from ``data``, the operators + − * / ** @ and ``.T``, and ``xp.sqrt``,
``xp.mean``, ``xp.sum``, ``xp.constant``); ``printed`` holds the texts the document prints
("8", "0.401"): their number of decimals is part of the claim, as for ``Rounds``.

Symbolic route (exact evaluation; never "proved", since it runs the demo's own code, and code
is checked, never proved): the same code runs on exact numbers, every float of ``data``
taken as the exact binary fraction it is (``fractions.Fraction``), square roots kept exact by
SymPy, and each value is compared at 50 digits with its printed decimal (±half a unit in the
last printed place), by the built-in worked-numbers check. ``data`` may draw from a seeded
generator (NumPy's, as the notebook does): the draws are the demo's inputs, and what is
evaluated exactly is the arithmetic after them. Agreement leaves the claim "checked", with the
exact evaluation in its method beside the backends' records. Exact refutation: a value that
does not round to its printed digits, with the value and the printed text.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, SupportsFloat

import sympy as sp

from ..route import (
    EXACT_EVALUATION,
    NOT_PROVED,
    PROVED,
    ClaimKind,
    ProofResult,
    Rounds,
    TheoremError,
    check_worked_numbers,
)

if TYPE_CHECKING:
    from ..route import Theorem

# an array namespace (NumPy, another backend's, or ``Exact``) and its arrays: several
# frameworks, and numbers, so no one type
Namespace = Any
Array = Any

# what the verdict says beside an exact evaluation that agrees: the route ran the demo's code
CODE_IS_CHECKED = "the claim runs its demo's code: checked, never proved"


@dataclass(frozen=True)
class FromCode(ClaimKind):
    """Each value ``compute(xp, **data())`` returns rounds to the text printed for it."""

    compute: Callable
    printed: tuple[str, ...]
    labels: tuple[str, ...] = ()
    data: Callable | None = None
    # the code's text: the proof cache keys a statement by its fields, and a callable alone is
    # keyed by its name, so an edited demo would otherwise keep its old verdict
    code: str = field(init=False, default="")

    kind = "worked numbers from code"
    numeric_draws = ("nothing at random: the demo's own data, as its code makes it")
    relation = r"\approx"

    def __post_init__(self) -> None:
        if not callable(self.compute) or not (self.data is None or callable(self.data)):
            raise TheoremError("FromCode: compute (and data, if given) must be functions")
        printed = tuple(str(p) for p in self.printed)
        labels = tuple(self.labels) or tuple(f"value {n + 1}" for n in range(len(printed)))
        object.__setattr__(self, "printed", printed)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "code", _source_text(self.compute, self.data))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return ()

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        values = r", \quad ".join(rf"\text{{{_tex_text(label)}}} \approx {text}"
                                  for label, text in zip(self.labels, self.printed, strict=True))
        name = _tex_text(getattr(self.compute, "__name__", "compute"))
        return rf"{values} \quad \left(\text{{from code: }}\texttt{{{name}}}\right)"

    def validate(self, theorem: Theorem, where: str) -> None:
        if not self.printed:
            raise TheoremError(f"{where}: FromCode needs at least one printed value")
        if len(self.labels) != len(self.printed):
            raise TheoremError(f"{where}: {len(self.labels)} labels for {len(self.printed)} "
                               "printed values")
        for label, text in zip(self.labels, self.printed, strict=True):
            try:
                sp.Rational(text)
            except (TypeError, ValueError, sp.SympifyError):
                raise TheoremError(f"{where}: printed value {text!r} of {label!r} is not a "
                                   "decimal number") from None
        if theorem.inputs:
            raise TheoremError(f"{where}: input {theorem.inputs[0].name} is not used: a demo "
                               "from code takes its inputs from data=")

    def draws(self) -> dict:
        """The demo's inputs, as its code makes them (float64 arrays)."""
        return self.data() if self.data is not None else {}

    def values(self, xp: Namespace) -> list:
        """The demo's values on the namespace ``xp``, one per printed text."""
        return self.evaluate(xp, {k: xp.asarray(v) for k, v in self.draws().items()})

    def evaluate(self, xp: Namespace, data: dict) -> list:
        """The demo's values from inputs already in ``xp``'s arrays."""
        found = list(self.compute(xp, **data))
        if len(found) != len(self.printed):
            raise TheoremError(f"FromCode: {getattr(self.compute, '__name__', 'compute')} "
                               f"returned {len(found)} values for {len(self.printed)} printed")
        return found

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        exact = [sp.sympify(_to_sympy(v)) for v in self.values(Exact())]
        result = check_worked_numbers(Rounds([exact], [self.printed]))
        wrong = (result.counterexample or {}).get("entries", {})
        counterexample = None
        if wrong:
            columns = [int(key.split(", ")[1].rstrip(")")) - 1 for key in wrong]
            counterexample = {self.labels[c]: text for c, text in zip(columns, wrong.values(),
                                                                       strict=True)}
            first = columns[0]
            miss = sp.N(exact[first] - sp.Rational(self.printed[first]), 6)
            counterexample["lhs_minus_rhs"] = f"{float(miss):.6g}"
        drawn = " (the seeded draws taken as exact binary fractions)" if self.data else ""
        method = (f"{EXACT_EVALUATION} of the code in rational arithmetic{drawn}: "
                  + result.method.split(": ", 1)[1].replace("entries", "values")
                  .replace("every entry rounds to the", "every value rounds to its"))
        if result.status == PROVED:  # the demo's code ran: agreement is checked, not proved
            return ProofResult(NOT_PROVED, f"{method}; {CODE_IS_CHECKED}")
        return ProofResult(result.status, method, counterexample=counterexample)


class Exact:
    """The array namespace of exact evaluation: NumPy object arrays of ``Fraction`` (NumPy is
    imported only when the demo runs, never with the language), exact square roots."""

    def asarray(self, value: object) -> Array:
        import numpy as np

        array = np.asarray(value)
        return np.vectorize(_exact_number, otypes=[object])(array) if array.ndim else \
            _exact_number(array.item())

    def constant(self, value: SupportsFloat) -> Fraction | sp.Basic:
        return _exact_number(value)

    def sqrt(self, value: Array) -> Array:
        import numpy as np

        if isinstance(value, np.ndarray):
            return np.vectorize(lambda x: sp.sqrt(_to_sympy(x)), otypes=[object])(value)
        return sp.sqrt(_to_sympy(value))

    def sum(self, value: Array) -> Array:
        import numpy as np

        items = list(np.asarray(value, dtype=object).flat)
        return sum(items[1:], items[0]) if items else 0

    def mean(self, value: Array) -> sp.Expr:
        import numpy as np

        count = np.asarray(value, dtype=object).size
        return _to_sympy(self.sum(value)) / count


def _exact_number(value: SupportsFloat) -> Fraction | sp.Basic:
    """A float is the binary fraction it stores; an integer becomes a fraction, so that 1/3
    stays a third instead of Python's float division."""
    if isinstance(value, (Fraction, sp.Basic)):
        return value
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(float(value))


def _to_sympy(value: object) -> sp.Basic:
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    return sp.sympify(value)


def _source_text(*functions: Callable | None) -> str:
    texts = []
    for function in functions:
        if function is None:
            continue
        try:
            texts.append(inspect.getsource(function))
        except (OSError, TypeError):  # defined interactively: its bytecode still identifies it
            texts.append(repr(getattr(getattr(function, "__code__", None), "co_code", function)))
    return "\n".join(texts)


def _tex_text(text: str) -> str:
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("#", r"\#") \
        .replace("%", r"\%").replace("&", r"\&").replace("$", r"\$")
