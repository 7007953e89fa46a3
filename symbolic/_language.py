"""The statement language: named dimensions, indices, tensors, scalars and defined tensors.

Everything here is plain SymPy underneath. An index is a SymPy ``Idx`` whose range is the
dimension it runs over, so the range of any index can be read off the index itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

import sympy as sp

from ._domains import Domain, Real, Sizes
from ._errors import TheoremError

# A name is an identifier, optionally primed (``m'``): the compiler maps it to a Python
# identifier and quotes it as a literal, so nothing in a name can become code. Quotes other
# than a trailing prime, backslashes, spaces and control characters never get that far.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*'*")


def check_name(name: object, what: str) -> str:
    """``name`` if it is a valid name for a ``what`` (dimension, tensor, ...), else raise."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise TheoremError(
            f"{what} name {name!r} is not an identifier (letters, digits and _, "
            "optionally followed by primes ')"
        )
    return name


class NotAValue(TheoremError, TypeError):
    """A declaration (a dimension, tensor or scalar) used where a value is meant."""


class _Declaration:
    """What dimensions, tensors and scalars share: they declare what a statement uses and are
    not values themselves, so SymPy and arithmetic get a sentence saying what to write instead
    (``T.symbol``, ``S[i, j]``), not SymPy's bare "cannot sympify"."""

    def _instead(self) -> str:
        raise NotImplementedError

    def _sympy_(self) -> NoReturn:
        raise NotAValue(self._instead())

    def _not_a_value(self, *_: object) -> NoReturn:
        raise NotAValue(self._instead())

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _not_a_value
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = _not_a_value


@dataclass(frozen=True)
class Dim(_Declaration):
    """A named dimension, symbolic in proofs and drawn from ``sizes`` in numeric checks."""

    name: str
    sizes: Sizes = field(default_factory=lambda: Sizes(1, 8))
    latex: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "dimension")

    @property
    def symbol(self) -> sp.Symbol:
        return sp.Symbol(self.name, integer=True, positive=True)

    def index(self, name: str) -> sp.Idx:
        """An index running over this dimension, e.g. ``n_k.index("j")``."""
        return sp.Idx(sp.Symbol(check_name(name, "index"), integer=True), self.symbol)

    def indices(self, names: str) -> tuple[sp.Idx, ...]:
        return tuple(self.index(name) for name in names.split())

    def _instead(self) -> str:
        return (f"dimension {self.name!r} is a declaration, not a value: write "
                f"{self.name}.symbol for its size, or an index of it ({self.name}.index(\"i\"))")


@dataclass(frozen=True, eq=False)
class Tensor(_Declaration):
    """An input array over named dimensions, with the domain its entries are drawn from."""

    name: str
    dims: tuple[Dim, ...]
    domain: Domain = field(default_factory=Real)

    def __post_init__(self) -> None:
        check_name(self.name, "tensor")
        object.__setattr__(self, "dims", tuple(self.dims))

    @property
    def base(self) -> sp.IndexedBase:
        shape = tuple(dim.symbol for dim in self.dims)
        return sp.IndexedBase(self.name, shape=shape, **self.domain.sympy_assumptions())

    def __getitem__(self, indices: sp.Expr | tuple[sp.Expr, ...]) -> sp.Indexed:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != len(self.dims):
            raise IndexCountError(
                f"tensor {self.name} has {len(self.dims)} axes {self.axis_names}, "
                f"indexed with {len(indices)}: {indices}"
            )
        return self.base[indices]

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(dim.name for dim in self.dims)

    def _instead(self) -> str:
        indices = ", ".join("i" if n == 0 else f"i{n}" for n in range(len(self.dims)))
        return (f"tensor {self.name!r} is a declaration, not a value: write its entries, "
                f"indexed ({self.name}[{indices}])")


@dataclass(frozen=True, eq=False)
class Scalar(_Declaration):
    """A real parameter such as a temperature, with the domain it is drawn from."""

    name: str
    domain: Domain = field(default_factory=Real)
    latex: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "scalar")

    @property
    def symbol(self) -> sp.Symbol:
        return sp.Symbol(self.name, **self.domain.sympy_assumptions())

    def _instead(self) -> str:
        return (f"scalar {self.name!r} is a declaration, not a value: write {self.name}.symbol "
                "in an expression")


@dataclass(frozen=True, eq=False)
class Defined:
    """A named tensor defined by an index expression, e.g. ``A[i, j] = softmax_j(S[i, j])``.

    Statements refer to it by name (``A[i, k]``) so reports read like the source; the
    provers expand it, and the compiler evaluates it once and reuses the array.
    """

    name: str
    indices: tuple[sp.Idx, ...]
    body: sp.Expr
    latex: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "defined tensor")
        object.__setattr__(self, "indices", tuple(self.indices))
        object.__setattr__(self, "body", as_expression(self.body, f"definition of {self.name}"))

    @property
    def base(self) -> sp.IndexedBase:
        shape = tuple(index.upper + 1 for index in self.indices)
        return sp.IndexedBase(self.name, shape=shape, real=True)

    def __getitem__(self, indices: sp.Expr | tuple[sp.Expr, ...]) -> sp.Indexed:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != len(self.indices):
            raise IndexCountError(
                f"{self.name} takes {len(self.indices)} indices, got {len(indices)}: {indices}")
        return self.base[indices]

    def at(self, indices: tuple[sp.Expr, ...]) -> sp.Expr:
        """The body with the definition's indices replaced by ``indices``, capture-free."""
        body = rename_bound_indices(self.body)
        return body.xreplace(dict(zip(self.indices, indices, strict=True)))


class IndexCountError(TheoremError, IndexError):
    """A tensor indexed with the wrong number of indices."""


def as_expression(value: object, what: str) -> sp.Basic:
    """``value`` as a SymPy object; a string is never parsed (parsing can run code)."""
    if isinstance(value, sp.Basic):
        from ._vocabulary import indicators_for_piecewise

        return indicators_for_piecewise(value)
    if value is None:
        raise TheoremError(f"{what} is None; write it with SymPy objects")
    if isinstance(value, str):
        raise TheoremError(
            f"{what} is the string {value[:60]!r}; strings are never parsed: write it with "
            "SymPy objects and the declared tensors"
        )
    try:
        return sp.sympify(value, strict=True)
    except sp.SympifyError:
        raise TheoremError(f"{what} is a {type(value).__name__}, not a SymPy expression") from None


def rename_bound_indices(expr: sp.Expr) -> sp.Expr:
    """Give every summation index in ``expr`` a fresh name, so substitution cannot capture."""
    from sympy.concrete.expr_with_limits import ExprWithLimits

    def rename(node: sp.Basic) -> sp.Basic | None:
        if not isinstance(node, ExprWithLimits):
            return None
        function = rename_bound_indices(node.function)
        limits = []
        for variable, lower, upper in node.limits:
            new = sp.Dummy(f"{variable.name.rstrip('0123456789')}", integer=True)
            function = function.xreplace({variable: new})
            limits.append((new, lower, upper))
        return node.func(function, *limits)

    return _replace_top_down(expr, rename)


def _replace_top_down(expr: sp.Basic, rule: Callable[[sp.Basic], sp.Basic | None]
                      ) -> sp.Basic:
    replaced = rule(expr)
    if replaced is not None:
        return replaced
    if not expr.args:
        return expr
    return expr.func(*(_replace_top_down(arg, rule) for arg in expr.args))
