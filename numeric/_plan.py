"""The plan of a numeric check: a theorem's compiled sides, the runner that evaluates them on one
backend, and the claimed point (``Theorem.at``) its inputs are moved to."""

from __future__ import annotations

import contextlib
import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy as sp

from attnproof.symbolic import Theorem
from attnproof.symbolic._theorem import ordered_free_indices

from . import _executables as executables
from . import _strategies as strategies
from . import _time_log as time_log
from ._backends import Array, ArrayModule, Backend, to_numpy, truth_row
from ._compiler import Compiled, compile_expression, index_key
from ._devices import out_of_memory
from ._tolerance import REFERENCE_DTYPE

if TYPE_CHECKING:
    from attnproof.symbolic import Format
    from attnproof.symbolic._kind import TwoSided

    from ._strategies import Structure


@dataclass(frozen=True, eq=False)
class Plan:
    """Compiled sides of a theorem's claim for one compiler target, in the order of its free
    indices ``out``; ``bounds`` (NumPy) give each entry's abs-scale and each row's largest
    exponent."""

    theorem: Theorem
    out: tuple
    sides: dict  # name -> Compiled, evaluated in every dtype
    # per side, NumPy float64 only: (abs-scale, largest exponent per row); the entry's scale is
    # the maximum over sides
    bounds: tuple
    primal: Compiled | None  # Compiled primal of a derivative claim
    wrt: sp.Expr | None

    @property
    def lhs_names(self) -> tuple[str, ...]:
        return tuple(n for n in ("implementation", "autodiff", "sympy", "lhs") if self._has(n))

    def _has(self, name: str) -> bool:
        if name == "implementation":
            return self.theorem.implementation is not None
        if name == "autodiff":
            return self.primal is not None and self.theorem.implementation is None
        return name in self.sides


@functools.lru_cache(maxsize=256)
def plan_for(theorem: Theorem, target: str = "numpy") -> Plan:
    claim = cast("TwoSided", theorem.claim)  # only a claim of two sides is planned
    lhs, rhs = sp.sympify(claim.lhs), sp.sympify(claim.rhs)
    derivative = isinstance(lhs, sp.Derivative)
    out = _derivative_order(lhs, rhs) if derivative else theorem.free_indices
    compile_ = functools.partial(compile_expression, out=out, inputs=theorem.inputs,
                                 definitions=theorem.definitions)
    # a derivative nested inside the claim is compiled as SymPy differentiates it
    lhs_expr = theorem.expand(lhs) if lhs.has(sp.Derivative) else lhs
    rhs = theorem.expand(rhs) if rhs.has(sp.Derivative) else rhs
    expressions = {"rhs": rhs}
    if theorem.implementation is None:
        expressions["sympy" if derivative else "lhs"] = lhs_expr
    sides = {name: compile_(e, target=target) for name, e in expressions.items()}
    bounds = tuple(compile_(e, magnitudes=True) for e in expressions.values())
    primal, wrt = (_primal(theorem, lhs, target) if derivative else (None, None))
    return Plan(theorem, tuple(out), sides, bounds, primal, wrt)


def _primal(theorem: Theorem, lhs: sp.Derivative, target: str) -> tuple[Compiled, sp.Expr]:
    """The compiled function a derivative claim differentiates, and the variable it is taken in."""
    (wrt, count), = lhs.variable_count
    if count != 1:
        raise NotImplementedError("derivatives of order above one are not checked")
    primal = compile_expression(lhs.expr, ordered_free_indices(lhs.expr), inputs=theorem.inputs,
                                definitions=theorem.definitions, target=target)
    return primal, wrt


def _derivative_order(lhs: sp.Derivative, rhs: sp.Expr) -> tuple:
    """The primal's free indices, then the indices of the entry differentiated against."""
    order = list(ordered_free_indices(lhs.expr))
    for variable, _ in lhs.variable_count:
        for index in getattr(variable, "indices", ()):
            if isinstance(index, sp.Idx) and index not in order:
                order.append(index)
    order += [i for i in ordered_free_indices(rhs) if i not in order]
    return tuple(order)


def wrt_name(plan: Plan) -> str:
    return str(plan.wrt.base.label) if isinstance(plan.wrt, sp.Indexed) else str(plan.wrt)


def is_reference(row: Backend, dtype: Format) -> bool:
    """Whether a record decides truth in float64 itself (NumPy or JAX float64)."""
    return row.reference and dtype == REFERENCE_DTYPE


# -- the runner: evaluation on one backend --------------------------------------------------


class Runner:
    """Evaluates a plan's sides on one backend and device, in any dtype, one batch at a time."""

    def __init__(self, plan: Plan, row: Backend, device: str, mode: str) -> None:
        self.plan, self.row, self.mode, self.device_name = plan, row, mode, device
        self.module = row.load()
        self.device = row.devices()[device]
        self._compiled: dict[tuple, Callable[[dict], dict]] = {}

    def reference_for(self, dtype: Format) -> Runner:
        """The runner whose float64 values this record is measured against: itself where it
        decides truth, NumPy's otherwise (cheap, and independent of the backend checked)."""
        if is_reference(self.row, dtype):
            return self
        return runner_for(self.plan.theorem, truth_row(), "cpu", "eager")

    def evaluate(self, arrays: dict, sizes: dict, dtype: Format, with_scale: bool) -> dict:
        with time_log.phase("evaluation"):
            return self._evaluate(arrays, sizes, dtype, with_scale)

    def _evaluate(self, arrays: dict, sizes: dict, dtype: Format, with_scale: bool) -> dict:
        xp = self.row.namespace(self.module, dtype)
        with self.row.scope(self.device):
            placed = {k: (self.row.place(xp, v, dtype.storage, self.device)
                          if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
            statics = tuple(sorted((k, v) for k, v in placed.items() if not hasattr(v, "shape")))
            traced = {k: v for k, v in placed.items() if hasattr(v, "shape")}
            # the compiled program is the same with or without the float64 scale (NumPy's,
            # computed beside it), so one compilation serves both
            key = (tuple(sorted(sizes.items())), statics, dtype)
            with np.errstate(all="ignore"), self._attributed(dtype, sizes):
                if key not in self._compiled:
                    self._compiled[key] = self._build(xp, sizes, dict(statics), traced)
                # overflow shows up as inf/nan and is judged there
                values = {k: to_numpy(v) for k, v in self._compiled[key](traced).items()}
        if with_scale:
            values.update(self._float64_only(arrays, sizes))
        return values

    def evaluate_flushed(self, arrays: dict, sizes: dict, tiny: float) -> dict:
        """The sides in float64 with every exponential below ``tiny`` flushed to zero: what
        the values would be if a format whose smallest normal number is ``tiny`` (and that
        flushes below it, as XLA and MLX do on CPUs) lost those exponentials entirely. Eager,
        on this runner's backend (the NumPy reference)."""
        xp = _FlushedExponentials(self.row.namespace(self.module, REFERENCE_DTYPE), tiny)
        with np.errstate(all="ignore"):
            values = self._sides(xp, arrays, {**sizes})
        return {k: to_numpy(v) for k, v in values.items()}

    def _attributed(self, dtype: Format, sizes: dict) -> contextlib.AbstractContextManager[None]:
        return time_log.attributed(self.plan.theorem.name, self.row.name, dtype.name,
                                   self.mode, sizes)

    def _float64_only(self, arrays: dict, sizes: dict) -> dict:
        """Abs-scale and exponent magnitudes, always NumPy float64: they are error bounds."""
        plan = self.plan
        with np.errstate(all="ignore"):
            scales, exponents = zip(*(compiled(np, arrays, sizes) for compiled in plan.bounds),
                                    strict=True)
        scale = functools.reduce(np.maximum, scales)
        return {"scale": scale, "exponent_scale": functools.reduce(np.maximum, exponents),
                "largest": scale.reshape(scale.shape[0], -1).max(axis=1, initial=0.0)}

    def _build(self, xp: ArrayModule, sizes: dict, statics: dict,
               traced: dict) -> Callable[[dict], dict]:
        def all_sides(traced: dict) -> dict:
            return self._sides(xp, {**traced, **statics}, sizes)

        if self.mode != "jit":
            return all_sides
        program = self.row.compile(all_sides)
        if not self.row.stores_executables or self._program is None:
            return program
        call = executables.call_key(sizes, statics, traced, self.device)
        return executables.load_or_compile(self.plan.theorem.name, self._program, call,
                                           program, traced)

    @functools.cached_property
    def _program(self) -> str | None:
        """What this runner's programs are made of, as a digest; None when user code is part of
        them (an ``implementation=``): no text pins that down."""
        plan = self.plan
        if plan.theorem.implementation is not None:
            return None
        parts = [f"{name}:{compiled.source}" for name, compiled in sorted(plan.sides.items())]
        if plan.primal is not None and self.row.autodiff:
            parts += [f"primal:{plan.primal.source}", f"wrt:{wrt_name(plan)}"]
        parts.append(f"out:{[str(i) for i in plan.out]}")
        return executables.program_digest(parts)

    def _sides(self, xp: ArrayModule, arrays: dict, sizes: dict) -> dict:
        plan = self.plan
        values = {name: compiled(xp, arrays, sizes) for name, compiled in plan.sides.items()}
        if plan.theorem.implementation is not None:
            values["implementation"] = checked_implementation(plan, xp, arrays, values["rhs"])
        elif plan.primal is not None and self.row.autodiff:
            values["autodiff"] = self._autodiff(xp, arrays, sizes)
        return values

    def _autodiff(self, xp: ArrayModule, arrays: dict, sizes: dict) -> Array:
        plan = self.plan
        compiled, differentiate = plan.primal, self.row.jacobian
        # ``_sides`` differentiates only a derivative claim's primal, on a backend with autodiff
        assert compiled is not None and differentiate is not None

        def primal(values: dict, batch: int) -> Array:
            return compiled(xp, values, {**sizes, "batch": batch})

        jacobian = differentiate(primal, wrt_name(plan))(arrays)
        wrt_indices = getattr(plan.wrt, "indices", ())
        axes = [index_key(i) for i in compiled.out] + [index_key(i) for i in wrt_indices]
        return _rearrange(xp, jacobian, axes, [index_key(i) for i in plan.out])


class _FlushedExponentials:
    """A NumPy namespace whose ``exp`` flushes results below ``tiny`` to zero."""

    def __init__(self, module: ArrayModule, tiny: float) -> None:
        self._module, self._tiny = module, tiny

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def exp(self, x: Array, *args: Any, **kwargs: Any) -> Array:
        value = self._module.exp(x, *args, **kwargs)
        return self._module.where(self._module.abs(value) < self._tiny, 0.0, value)


class ImplementationError(RuntimeError):
    """A theorem's ``implementation=`` returned something other than the claim's shape;
    ``expected`` and ``got`` are both shapes (``got`` None when it returned no array)."""

    def __init__(self, message: str, expected: tuple = (), got: tuple | None = None) -> None:
        super().__init__(message)
        self.expected, self.got = expected, got


class ImplementationRaised(RuntimeError):
    """A theorem's ``implementation=`` raised ``error``; ``where`` is the innermost line of the
    implementation's own file the exception passed through (empty when none did)."""

    def __init__(self, theorem: Theorem, error: Exception) -> None:
        self.error = error
        self.where = _innermost_line(error, theorem.implementation)
        self.exception = f"{type(error).__name__}: {error}".strip()
        at = f" at {self.where}" if self.where else ""
        super().__init__(f"theorem {theorem.name!r}: implementation "
                         f"{getattr(theorem.implementation, '__name__', '')} raised "
                         f"{self.exception}{at}")


def _innermost_line(error: Exception, function: Callable | None) -> str:
    code = getattr(function, "__code__", None)
    if code is None:
        return ""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename == code.co_filename]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def checked_implementation(plan: Plan, xp: ArrayModule, arrays: dict, rhs: Array) -> Array:
    """The implementation's value, or an error that blames it, naming both shapes (shapes are
    static, so this check also holds while tracing under jit); an exception it raises is
    ``ImplementationRaised``, a fact about the code at these inputs."""
    theorem = plan.theorem
    implementation = theorem.implementation
    assert implementation is not None  # ``_sides`` calls this for a theorem that has one
    try:
        value = implementation(xp, **arrays)
    except Exception as error:  # whatever the user's code raises is a finding about it
        if out_of_memory(error):  # the machine's limit, not the code's
            raise
        raise ImplementationRaised(theorem, error) from error
    expected = tuple(rhs.shape)
    axes = ", ".join(["batch", *(str(index.upper + 1) for index in plan.out)])
    shape = getattr(value, "shape", None)
    if shape is None or tuple(shape) != expected:
        got = f"shape {tuple(shape)}" if shape is not None else f"a {type(value).__name__}"
        raise ImplementationError(
            f"theorem {theorem.name!r}: implementation "
            f"{getattr(theorem.implementation, '__name__', '')} returned {got}; "
            f"expected an array of shape {expected} ({axes})",
            expected, tuple(int(n) for n in shape) if shape is not None else None)
    return value


@functools.lru_cache(maxsize=256)
def runner_for(theorem: Theorem, row: Backend, device: str, mode: str) -> Runner:
    """One runner per configuration, so its compiled programs serve every dtype and record."""
    return Runner(plan_for(theorem, row.target), row, device, mode)


def _rearrange(xp: ArrayModule, array: Array, axes: list, out: list) -> Array:
    """Axes labelled ``axes`` (batch first, unlabelled) to ``out``, repeated labels as diagonals."""
    letters = {a: "abcdefghijklmnopqrstuvwxy"[n] for n, a in enumerate(dict.fromkeys(axes + out))}
    spec = "z" + "".join(letters[a] for a in axes) + "->z" + "".join(letters[a] for a in out)
    return xp.einsum(spec, array)


# -- the claimed point -------------------------------------------------------------------------


@dataclass
class Evaluated:
    """A batch moved to the claimed point, and its float64 reference values and error scales;
    ``valid`` marks the rows the claim's ``at`` hook kept (None: every row)."""

    inputs: dict
    valid: np.ndarray | None
    sizes: dict
    reference: dict


def at_claimed_point(theorem: Theorem, arrays: dict) -> tuple[dict, np.ndarray | None]:
    """Move the drawn inputs to where the claim is asserted (``Theorem.at``), host-side."""
    if theorem.at is None:
        return arrays, None
    moved = dict(theorem.at(np, **arrays))
    valid = moved.pop("valid", None)
    return {**arrays, **moved}, valid


def evaluate_reference(runner: Runner, structure: Structure, batch: int,
                       arrays: dict | None = None) -> Evaluated:
    """Fill a batch for ``structure`` (unless ``arrays`` are given), move it to the claimed
    point and evaluate it in float64 on ``runner``, with the abs-scale."""
    theorem = runner.plan.theorem
    arrays = arrays if arrays is not None else strategies.fill_batch(theorem, structure, batch)
    arrays, valid = at_claimed_point(theorem, arrays)
    sizes = {**structure.size_map, "batch": batch}
    reference = runner.evaluate(arrays, sizes, REFERENCE_DTYPE, with_scale=True)
    return Evaluated(arrays, valid, sizes, reference)
