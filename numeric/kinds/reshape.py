"""The numeric route of reshape claims: every view is built with the backend's own reshape,
transpose and concatenate, then both sides (index expressions over inputs and views) are
compiled and compared (``_sides``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp

from attnproof.symbolic import FLOAT64, Reshape, Tensor
from attnproof.symbolic.kinds.reshape import FlatDim, View, parts_of, plain_dims
from attnproof.symbolic.route import ordered_free_indices

from ..route import Array, ArrayModule, Evidence, compile_expression, numeric_route, truth_row
from . import _sides as sides

if TYPE_CHECKING:
    from attnproof.symbolic import Defined, Dim, Format, Theorem

    from .. import Compiled, Profile
    from ..route import Backend, Where

# both sides at one size as one function of the arrays
Both = Callable[[dict[str, Array]], tuple[Array, Array]]


@numeric_route(Reshape)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
    # the route of Reshape: the driver's lookup says so
    layout = _Layout(theorem, cast(Reshape, theorem.claim))
    target = _evaluator(layout, row, dtype, device, mode)
    reference = _evaluator(layout, truth_row(), FLOAT64, "cpu", "eager")
    methods = sorted({v.method for v in layout.views})
    plain = {d.name: d for t in theorem.tensors for d in plain_dims(t.dims)}  # views' sizes

    def evaluate(sizes: dict[str, int], rng: np.random.Generator) -> sides.Batch:
        all_sizes = layout.all_sizes({name: sizes[name] for name in plain})
        drawn = sides.draw_inputs(theorem, theorem.tensors, layout.shapes(all_sizes), rng,
                                  sides.BATCH)
        placed = target.place(drawn)
        rounded = sides.host(placed)  # the float64 reference sees the same rounded inputs
        lhs, rhs = target.sides(placed, all_sizes)
        lhs64, rhs64 = reference.sides(reference.place(rounded), all_sizes)
        scale = reference.scale(rounded, all_sizes)
        return sides.Batch(lhs, rhs, lhs64, rhs64, scale)

    def describe_row(sizes: dict[str, int], batch: sides.Batch,
                     row_index: int) -> dict[str, object]:
        found: dict[str, object] = {"sizes": {k: str(v) for k, v in sizes.items() if k in plain}}
        found.update(sides.worst_entry(batch, row_index, [str(i) for i in layout.out]))
        return found

    description = (f"views built with {row.name}'s {' and '.join(methods)}; both sides "
                   "compared entry by entry")
    return sides.search_batches(theorem, where, profile, seed, evaluate, describe_row,
                                description, dims=list(plain.values()))


class _Layout:
    """The claim's sides over inputs and views, and the sizes and shapes of everything."""

    def __init__(self, theorem: Theorem, claim: Reshape) -> None:
        self.theorem, self.claim = theorem, claim
        self.out = ordered_free_indices(claim.lhs, claim.rhs)
        self.views = list(claim.views)
        self.lhs, self.rhs = (self._split_entries(side) for side in (claim.lhs, claim.rhs))
        self.view_inputs = tuple(Tensor(v.name, v.dims) for v in self.views)
        self.inputs = (*theorem.inputs, *self.view_inputs)

    def _split_entries(self, expr: sp.Expr) -> sp.Expr:
        """An entry at a flat position written h·D + c (which the compiler does not index
        with) becomes the entry (h, c) of a view with that flat axis split by reshape."""
        arrays: dict[str, Tensor | View] = ({t.name: t for t in self.theorem.tensors}
                                            | {v.name: v for v in self.views})
        replaced = {}
        for entry in expr.atoms(sp.Indexed):
            array = arrays.get(str(entry.base.label))
            if array is None or all(isinstance(i, (sp.Idx, sp.Symbol)) for i in entry.indices):
                continue
            dims: list[Dim] = []
            indices: list[sp.Expr] = []
            for dim, index in zip(array.dims, entry.indices, strict=True):
                parts = parts_of(index, dim) if isinstance(dim, FlatDim) else None
                # parts only of a flat dimension's index
                dims += list(cast(FlatDim, dim).factors) if parts else [dim]
                indices += list(parts) if parts else [index]
            view = self._split_view(array, tuple(dims))
            replaced[entry] = view[tuple(indices)]
        return expr.xreplace(replaced)

    def _split_view(self, array: Tensor | View, dims: tuple[Dim, ...]) -> View:
        """The view of ``array`` with its flat axes split into ``dims``: the one made before,
        else a new one under a name no input, definition or view of the claim has (a user's
        own view may be called X_split and hold other axes)."""
        for view in self.views:
            if view.source is array and tuple(view.dims) == dims:
                return view
        taken = ({v.name for v in self.views} | {x.name for x in self.theorem.inputs}
                 | {d.name for d in self.theorem.definitions})
        name = f"{array.name}_split"
        while name in taken:
            name += "_"
        view = View(name, array, dims)
        self.views.append(view)
        return view

    def all_sizes(self, plain: dict[str, int]) -> dict[str, int]:
        sizes = dict(plain)
        for dims in [t.dims for t in self.theorem.tensors] + [v.dims for v in self.views]:
            for d in dims:
                if isinstance(d, FlatDim):
                    sizes[d.name] = math.prod(plain[f.name] for f in d.factors)
        return sizes

    def shapes(self, sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
        return {t.name: tuple(sizes[d.name] for d in t.dims) for t in self.theorem.tensors}

    def compiled(self, expr: sp.Expr, target: str, abs_scale: bool = False) -> Compiled:
        return compile_expression(expr, self.out, inputs=self.inputs,
                                  definitions=self.theorem.definitions, abs_scale=abs_scale,
                                  target=target)


class _evaluator:
    """The sides on one backend, dtype and device, with the views built by that backend."""

    def __init__(self, layout: _Layout, row: Backend, dtype: Format, device: str,
                 mode: str) -> None:
        self.layout, self.row, self.dtype = layout, row, dtype
        self.module = row.load()
        self.xp = row.namespace(self.module, dtype)
        self.device = row.devices()[device]
        self.jit = mode == "jit"
        self.lhs = layout.compiled(layout.lhs, row.target)
        self.rhs = layout.compiled(layout.rhs, row.target)
        self._functions: dict[tuple[tuple[str, int], ...], Both] = {}

    def place(self, arrays: dict[str, np.ndarray | int]) -> dict[str, Array]:
        with self.row.scope(self.device):
            return {k: v if isinstance(v, int) else self.row.place(self.xp, v, self.dtype.storage,
                                                                     self.device)
                    for k, v in arrays.items()}

    def sides(self, arrays: dict[str, Array],
              sizes: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        key = tuple(sorted(sizes.items()))
        if key not in self._functions:
            function = self._both(sizes)
            self._functions[key] = self.row.compile(function) if self.jit else function
        with self.row.scope(self.device):
            lhs, rhs = self._functions[key](arrays)
        return sides.to_host(lhs), sides.to_host(rhs)

    def scale(self, arrays: dict[str, np.ndarray | int], sizes: dict[str, int]) -> np.ndarray:
        """The larger abs-scale of the two sides, in NumPy float64."""
        full = self._with_views(np, arrays, {**sizes, "batch": sides.BATCH})
        values = [self.layout.compiled(side, "numpy", abs_scale=True)(
            np, full, {**sizes, "batch": sides.BATCH})
                  for side in (self.layout.lhs, self.layout.rhs)]
        return np.maximum(*values)

    def _both(self, sizes: dict[str, int]) -> Both:
        xp, lhs, rhs = self.xp, self.lhs, self.rhs
        sizes = {**sizes, "batch": sides.BATCH}

        def both(arrays: dict[str, Array]) -> tuple[Array, Array]:
            full = self._with_views(xp, arrays, sizes)
            return lhs(xp, full, sizes), rhs(xp, full, sizes)

        return both

    def _with_views(self, xp: ArrayModule, arrays: dict[str, Array],
                    sizes: dict[str, int]) -> dict[str, Array]:
        full = dict(arrays)
        for view in self.layout.views:
            full[view.name] = build_view(xp, view, self._source(xp, view, full, sizes), sizes)
        return full

    def _source(self, xp: ArrayModule, view: View, full: dict[str, Array],
                sizes: dict[str, int]) -> Array:
        name = view.source.name
        if name in full:
            return full[name]
        # not an input nor a view built before it: a definition
        definition = cast("Defined", view.source)
        compiled = compile_expression(definition[definition.indices], definition.indices,
                                      inputs=self.layout.inputs,
                                      definitions=self.layout.theorem.definitions,
                                      target=self.row.target if xp is not np else "numpy")
        full[name] = compiled(xp, full, sizes)
        return full[name]


def build_view(xp: ArrayModule, view: View, source: Array, sizes: dict[str, int]) -> Array:
    """``view`` of the batched array ``source`` (leading batch axis), with ``xp``'s own
    reshape, transpose and concatenate."""
    batch = source.shape[0]
    source_plain = [d.name for d in plain_dims(view.source_dims)]
    atoms = xp.reshape(source, (batch, *(sizes[n] for n in source_plain)))
    if view.method == "concatenate":
        return _concatenated(xp, view, atoms, source_plain, sizes, batch)
    target_plain = [d.name for d in plain_dims(view.dims)]
    order = (0, *(1 + source_plain.index(n) for n in target_plain))
    moved = xp.transpose(atoms, list(order))
    return xp.reshape(moved, (batch, *(sizes[d.name] for d in view.dims)))


def _concatenated(xp: ArrayModule, view: View, atoms: Array, source_plain: list[str],
                  sizes: dict[str, int], batch: int) -> Array:
    """Concat(slice_0, …, slice_{A−1}) along the flat axis, one slice per value of its first
    factor A, each slice laid out as the view with the rest of the flat axis in its place."""
    (position, flat_dim), = [(k, d) for k, d in enumerate(view.dims) if isinstance(d, FlatDim)]
    first, rest = flat_dim.factors[0], flat_dim.factors[1:]
    axis = 1 + source_plain.index(first.name)
    kept = [n for n in source_plain if n != first.name]
    target_plain = [n for n in (d.name for d in plain_dims(view.dims)) if n != first.name]
    order = (0, *(1 + kept.index(n) for n in target_plain))
    shape = [sizes[d.name] for d in view.dims]
    shape[position] = math.prod(sizes[d.name] for d in rest)
    slices = []
    for value in range(sizes[first.name]):
        picked = atoms[(slice(None),) * axis + (value,)]
        slices.append(xp.reshape(xp.transpose(picked, list(order)), (batch, *shape)))
    return xp.concatenate(slices, axis=1 + position)

