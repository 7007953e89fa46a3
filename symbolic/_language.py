"""The statement language: named dimensions, indices, tensors, scalars and defined tensors.

Everything here is plain SymPy underneath. An index is a SymPy ``Idx`` whose range is the
dimension it runs over, so the range of any index can be read off the index itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ._domains import Domain, Real, Sizes


@dataclass(frozen=True)
class Dim:
    """A named dimension, symbolic in proofs and drawn from ``sizes`` in numeric checks."""

    name: str
    sizes: Sizes = field(default_factory=lambda: Sizes(1, 8))
    latex: str | None = None

    @property
    def symbol(self) -> sp.Symbol:
        return sp.Symbol(self.name, integer=True, positive=True)

    def index(self, name: str) -> sp.Idx:
        """An index running over this dimension, e.g. ``n_k.index("j")``."""
        return sp.Idx(sp.Symbol(name, integer=True), self.symbol)

    def indices(self, names: str) -> tuple[sp.Idx, ...]:
        return tuple(self.index(name) for name in names.split())


@dataclass(frozen=True, eq=False)
class Tensor:
    """An input array over named dimensions, with the domain its entries are drawn from."""

    name: str
    dims: tuple[Dim, ...]
    domain: Domain = field(default_factory=Real)

    def __post_init__(self):
        object.__setattr__(self, "dims", tuple(self.dims))

    @property
    def base(self) -> sp.IndexedBase:
        shape = tuple(dim.symbol for dim in self.dims)
        return sp.IndexedBase(self.name, shape=shape, **self.domain.sympy_assumptions())

    def __getitem__(self, indices) -> sp.Indexed:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != len(self.dims):
            raise IndexError(
                f"tensor {self.name} has {len(self.dims)} axes {self.axis_names}, "
                f"indexed with {len(indices)}: {indices}"
            )
        return self.base[indices]

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(dim.name for dim in self.dims)


@dataclass(frozen=True, eq=False)
class Scalar:
    """A real parameter such as a temperature, with the domain it is drawn from."""

    name: str
    domain: Domain = field(default_factory=Real)
    latex: str | None = None

    @property
    def symbol(self) -> sp.Symbol:
        return sp.Symbol(self.name, **self.domain.sympy_assumptions())


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

    def __post_init__(self):
        object.__setattr__(self, "indices", tuple(self.indices))
        object.__setattr__(self, "body", sp.sympify(self.body))

    @property
    def base(self) -> sp.IndexedBase:
        shape = tuple(index.upper + 1 for index in self.indices)
        return sp.IndexedBase(self.name, shape=shape, real=True)

    def __getitem__(self, indices) -> sp.Indexed:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != len(self.indices):
            raise IndexError(f"{self.name} takes {len(self.indices)} indices, got {indices}")
        return self.base[indices]

    def at(self, indices: tuple[sp.Expr, ...]) -> sp.Expr:
        """The body with the definition's indices replaced by ``indices``, capture-free."""
        body = rename_bound_indices(self.body)
        return body.xreplace(dict(zip(self.indices, indices, strict=True)))


def rename_bound_indices(expr: sp.Expr) -> sp.Expr:
    """Give every summation index in ``expr`` a fresh name, so substitution cannot capture."""
    from sympy.concrete.expr_with_limits import ExprWithLimits

    def rename(node):
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


def _replace_top_down(expr, rule):
    replaced = rule(expr)
    if replaced is not None:
        return replaced
    if not expr.args:
        return expr
    return expr.func(*(_replace_top_down(arg, rule) for arg in expr.args))
