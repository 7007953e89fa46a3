"""The numeric route of permutation claims: each instance draws its own permutations (the
identity, a swap, the reversal and uniform ones in turn), every permuted input is gathered with
the backend's own ``take_along_axis``, and both sides are compiled and compared (``_sides``).

The compiler indexes only with plain indices, so an entry ``K[pi[j], a]`` becomes ``K_pi[j, a]``
of the gathered array, and a definition used at a permuted index (``O[pi[i], c]``) is written
out there, so that its inputs are gathered instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp

from attnproof.symbolic import FLOAT64, Defined, Permuted, Tensor
from attnproof.symbolic.kinds.permutation import permutations_of
from attnproof.symbolic.route import ordered_free_indices

from ..route import Array, ArrayModule, Evidence, compile_expression, numeric_route, truth_row
from . import _sides as sides

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Scalar, Theorem

    from .. import Compiled, Profile
    from ..route import Backend, Where

# both sides of a size's claim as one function of the arrays and the permutations' indices
Both = Callable[[dict[str, Array], dict[str, Array]], tuple[Array, Array]]

PATTERNS = ("identity", "swap", "reversal", "uniform")


@numeric_route(Permuted)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
    plan = _Gathered(theorem)
    target = _Evaluator(plan, row, dtype, device, mode)
    reference = _Evaluator(plan, truth_row(), FLOAT64, "cpu", "eager")
    drawn_orders: dict[tuple[tuple[str, int], ...], dict[str, np.ndarray]] = {}

    def evaluate(sizes: dict[str, int], rng: np.random.Generator) -> sides.Batch:
        shapes = {t.name: tuple(sizes[d.name] for d in t.dims) for t in plan.values}
        drawn = sides.draw_inputs(theorem, plan.values, shapes, rng, sides.BATCH)
        orders = {p.name: draw_permutations(sizes[p.dim.name], sides.BATCH, rng)
                  for p in plan.permutations}
        drawn_orders[tuple(sorted(sizes.items()))] = orders
        placed = target.place(drawn)
        rounded = sides.host(placed)
        lhs, rhs = target.sides(placed, orders, sizes)
        lhs64, rhs64 = reference.sides(reference.place(rounded), orders, sizes)
        scale = reference.scale(rounded, orders, sizes)
        return sides.Batch(lhs, rhs, lhs64, rhs64, scale)

    def describe_row(sizes: dict[str, int], batch: sides.Batch,
                     row_index: int) -> dict[str, object]:
        orders = drawn_orders[tuple(sorted(sizes.items()))]
        found: dict[str, object] = {"sizes": {k: str(v) for k, v in sizes.items()},
                 "permutations": {name: "(" + ", ".join(map(str, order[row_index])) + ")"
                                  for name, order in orders.items()}}
        found.update(sides.worst_entry(batch, row_index, [str(i) for i in plan.out]))
        return found

    description = (f"permuted inputs gathered with {row.name}'s take_along_axis; each instance "
                   "draws its permutations (identity, swap, reversal, uniform in turn); sides "
                   "compared entry by entry")
    return sides.search_batches(theorem, where, profile, seed, evaluate, describe_row,
                                description)


def draw_permutations(n: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """One permutation of range(n) per instance, the patterns of ``PATTERNS`` in turn."""
    orders = np.tile(np.arange(n), (batch, 1))
    for row in range(batch):
        pattern = PATTERNS[row % len(PATTERNS)]
        if pattern == "swap" and n >= 2:
            a, b = rng.choice(n, size=2, replace=False)
            orders[row, [a, b]] = orders[row, [b, a]]
        elif pattern == "reversal":
            orders[row] = orders[row, ::-1]
        elif pattern == "uniform":
            orders[row] = rng.permutation(n)
    return orders


class _Gathered:
    """The claim with every permuted entry read from a gathered copy of its input."""

    def __init__(self, theorem: Theorem) -> None:
        self.theorem = theorem
        self.permutations = permutations_of(theorem)
        self.values = [t for t in theorem.tensors if t not in self.permutations]
        self.by_permutation = {p.name: p for p in self.permutations}
        self.definitions = {d.name: d for d in theorem.definitions}
        self.gathers: dict[str, tuple[str, int, str]] = {}  # name -> (source, axis, permutation)
        self.tensors = {t.name: t for t in self.values}
        claim = cast(Permuted, theorem.claim)  # the route of Permuted: the driver's lookup
        self.out = ordered_free_indices(claim.lhs, claim.rhs)
        self.lhs, self.rhs = self.rewrite(claim.lhs), self.rewrite(claim.rhs)
        self.rewritten = tuple(Defined(d.name, d.indices, self.rewrite(d.body), d.latex)
                               for d in theorem.definitions)
        self.inputs: tuple[Scalar | Tensor, ...] = (*theorem.scalars, *self.tensors.values())
        leftover = [x for e in (self.lhs, self.rhs, *(d.body for d in self.rewritten))
                    for x in e.atoms(sp.Indexed) if str(x.base.label) in self.by_permutation]
        if leftover:
            raise NotImplementedError(f"a permutation used other than inside an index: "
                                      f"{leftover[0]}")

    def rewrite(self, expr: sp.Expr) -> sp.Expr:
        while True:
            changed = self._inline_permuted_definitions(expr)
            changed = self._gather_permuted_inputs(changed)
            if changed == expr:
                return expr
            expr = changed

    def _inline_permuted_definitions(self, expr: sp.Expr) -> sp.Expr:
        found = {x: self.definitions[str(x.base.label)].at(x.indices)
                 for x in expr.atoms(sp.Indexed)
                 if str(x.base.label) in self.definitions
                 and not all(isinstance(i, (sp.Idx, sp.Symbol)) for i in x.indices)}
        return expr.xreplace(found)

    def _gather_permuted_inputs(self, expr: sp.Expr) -> sp.Expr:
        replaced = {}
        for entry in expr.atoms(sp.Indexed):
            name = str(entry.base.label)
            if name not in self.tensors:
                continue
            for axis, index in enumerate(entry.indices):
                if isinstance(index, sp.Indexed) and str(index.base.label) in self.by_permutation:
                    gathered = self._gathered(name, axis, str(index.base.label))
                    indices = list(entry.indices)
                    indices[axis] = index.indices[0]
                    replaced[entry] = gathered[tuple(indices)]
                    break
        return expr.xreplace(replaced)

    def _gathered(self, source: str, axis: int, permutation: str) -> Tensor:
        name = f"{source}_{permutation}{axis}"
        while name in self.tensors and self.gathers.get(name) != (source, axis, permutation):
            name += "_"
        if name not in self.tensors:
            self.tensors[name] = Tensor(name, self.tensors[source].dims)
            self.gathers[name] = (source, axis, permutation)
        return self.tensors[name]


class _Evaluator:
    """Both sides on one backend, dtype and device, permuted inputs gathered there."""

    def __init__(self, plan: _Gathered, row: Backend, dtype: Format, device: str,
                 mode: str) -> None:
        self.plan, self.row, self.dtype = plan, row, dtype
        self.xp = row.namespace(row.load(), dtype)
        self.device = row.devices()[device]
        self.jit = mode == "jit"
        compile_ = self._compiler(row.target)
        self.lhs, self.rhs = compile_(plan.lhs), compile_(plan.rhs)
        self._functions: dict[tuple[tuple[str, int], ...], Both] = {}

    def _compiler(self, target: str, abs_scale: bool = False) -> Callable[[sp.Expr], Compiled]:
        plan = self.plan
        return lambda expr: compile_expression(expr, plan.out, inputs=plan.inputs,
                                               definitions=plan.rewritten,
                                               abs_scale=abs_scale, target=target)

    def place(self, arrays: dict[str, np.ndarray | int]) -> dict[str, Array]:
        with self.row.scope(self.device):
            return {k: v if isinstance(v, int) else self.row.place(self.xp, v, self.dtype.storage,
                                                                     self.device)
                    for k, v in arrays.items()}

    def sides(self, arrays: dict[str, Array], orders: dict[str, np.ndarray],
              sizes: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        key = tuple(sorted(sizes.items()))
        if key not in self._functions:
            function = self._both({**sizes, "batch": sides.BATCH})
            self._functions[key] = self.row.compile(function) if self.jit else function
        with self.row.scope(self.device):
            indices = {k: self._indices(v) for k, v in orders.items()}
            lhs, rhs = self._functions[key](arrays, indices)
        return sides.to_host(lhs), sides.to_host(rhs)

    def _indices(self, order: np.ndarray) -> Array:
        return getattr(self.xp, self.row.index_array)(order)

    def scale(self, arrays: dict[str, np.ndarray | int], orders: dict[str, np.ndarray],
              sizes: dict[str, int]) -> np.ndarray:
        sizes = {**sizes, "batch": sides.BATCH}
        full = gather_all(np, self.plan, arrays, orders)
        compile_ = self._compiler("numpy", abs_scale=True)
        return np.maximum(compile_(self.plan.lhs)(np, full, sizes),
                          compile_(self.plan.rhs)(np, full, sizes))

    def _both(self, sizes: dict[str, int]) -> Both:
        xp, lhs, rhs, plan = self.xp, self.lhs, self.rhs, self.plan

        def both(arrays: dict[str, Array], orders: dict[str, Array]) -> tuple[Array, Array]:
            full = gather_all(xp, plan, arrays, orders)
            return lhs(xp, full, sizes), rhs(xp, full, sizes)

        return both


def gather_all(xp: ArrayModule, plan: _Gathered, arrays: dict[str, Array],
               orders: dict[str, Array]) -> dict[str, Array]:
    """Every gathered input, in the order its sources become available."""
    full = dict(arrays)
    pending = dict(plan.gathers)
    while pending:
        for name, (source, axis, permutation) in list(pending.items()):
            if source in full:
                full[name] = gather(xp, full[source], orders[permutation], axis)
                del pending[name]
    return full


def gather(xp: ArrayModule, array: Array, order: Array, axis: int) -> Array:
    """``array`` (leading batch axis) with entry k of ``axis`` replaced by entry order[b, k],
    per batch row b."""
    where = 1 + axis
    shape = [order.shape[0]] + [1] * (array.ndim - 1)
    shape[where] = order.shape[1]
    index = xp.broadcast_to(xp.reshape(order, tuple(shape)), tuple(array.shape))
    return xp.take_along_axis(array, index, axis=where)
