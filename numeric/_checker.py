"""The numeric checker: one record per (theorem, backend, dtype, device, mode).

Truth is decided in float64 only, per entry, against the abs-scale (``_tolerance``). A lower
precision is a stability property of each side separately: the side evaluated in that dtype
against the same side in float64. A derivative claim compares up to three derivations: the
backend's autodiff of the compiled primal, the compiled SymPy derivative, and the closed form.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import shlex
import time
from dataclasses import asdict, dataclass

import numpy as np
import sympy as sp
from hypothesis import HealthCheck, Phase, find, given, settings, target
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from symbolic import AtLeast, Rounds, Theorem
from symbolic._theorem import ordered_free_indices

from . import _strategies as strategies
from ._backends import Backend, backend, device_kind, to_numpy, unavailable_reason
from ._compiler import compile_expression, index_key
from ._tolerance import STABILITY_ULPS, TRUTH_ULPS, bits, error_ulps, shortfall_ulps

STATUSES = ("passed", "failed", "skipped", "error")


@dataclass
class NumericRecord:
    """The outcome of checking one theorem on one backend, dtype, device and mode."""

    backend: str
    dtype: str
    device: str
    mode: str
    status: str
    examples: int = 0
    instances: int = 0
    max_error_ulps: float | None = None
    max_error_bits: float | None = None
    seconds: float = 0.0
    counterexample: dict | None = None
    replay: str | None = None
    reason: str | None = None

    def to_json(self) -> dict:
        record = asdict(self)
        return json.loads(json.dumps(record, default=_jsonable))


def _jsonable(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


# -- the plan: what to evaluate for a theorem ---------------------------------------------


@dataclass(frozen=True, eq=False)
class Plan:
    """Compiled sides of a theorem's claim, in the order of its free indices ``out``."""

    theorem: Theorem
    out: tuple
    sides: dict  # name -> Compiled, evaluated in every dtype
    scales: tuple  # abs-scale Compiled objects; the entry's scale is their maximum
    primal: object | None  # Compiled primal of a derivative claim
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
def plan_for(theorem: Theorem) -> Plan:
    claim = theorem.claim
    lhs, rhs = sp.sympify(claim.lhs), sp.sympify(claim.rhs)
    derivative = isinstance(lhs, sp.Derivative)
    out = _derivative_order(lhs, rhs) if derivative else theorem.free_indices
    compile_ = functools.partial(compile_expression, out=out, inputs=theorem.inputs,
                                 definitions=theorem.definitions)
    sides = {"rhs": compile_(rhs)}
    # a derivative nested inside the claim is compiled as SymPy differentiates it
    lhs_expr = theorem.expand(lhs) if lhs.has(sp.Derivative) else lhs
    rhs = theorem.expand(rhs) if rhs.has(sp.Derivative) else rhs
    if theorem.implementation is None:
        sides["sympy" if derivative else "lhs"] = compile_(lhs_expr)
    scales = [compile_(rhs, abs_scale=True)]
    if theorem.implementation is None:
        scales.append(compile_(lhs_expr, abs_scale=True))
    primal, wrt = None, None
    if derivative:
        (wrt, count), = lhs.variable_count
        if count != 1:
            raise NotImplementedError("derivatives of order above one are not checked")
        primal_out = ordered_free_indices(lhs.expr)
        primal = compile_expression(lhs.expr, primal_out, inputs=theorem.inputs,
                                    definitions=theorem.definitions)
    return Plan(theorem, tuple(out), sides, tuple(scales), primal, wrt)


def _derivative_order(lhs: sp.Derivative, rhs) -> tuple:
    """The primal's free indices, then the indices of the entry differentiated against."""
    order = list(ordered_free_indices(lhs.expr))
    for variable, _ in lhs.variable_count:
        for index in getattr(variable, "indices", ()):
            if isinstance(index, sp.Idx) and index not in order:
                order.append(index)
    order += [i for i in ordered_free_indices(rhs) if i not in order]
    return tuple(order)


# -- evaluation on one backend ------------------------------------------------------------


class Runner:
    """Evaluates a plan's sides on one backend and device, in any dtype, one batch at a time."""

    def __init__(self, plan: Plan, row: Backend, device: str, mode: str):
        self.plan, self.row, self.mode, self.device_name = plan, row, mode, device
        self.xp = row.load()
        self.device = row.devices()[device]
        self._compiled: dict = {}

    def evaluate(self, arrays: dict, sizes: dict, dtype: str, with_scale: bool) -> dict:
        placed = {k: (self.row.place(self.xp, v, dtype, self.device) if isinstance(v, np.ndarray)
                      else v) for k, v in arrays.items()}
        statics = tuple(sorted((k, v) for k, v in placed.items() if not hasattr(v, "shape")))
        key = (tuple(sorted(sizes.items())), statics, with_scale)
        if key not in self._compiled:
            self._compiled[key] = self._build(sizes, dict(statics), with_scale)
        traced = {k: v for k, v in placed.items() if hasattr(v, "shape")}
        with np.errstate(all="ignore"):  # overflow shows up as inf/nan and is judged there
            return {k: to_numpy(v) for k, v in self._compiled[key](traced).items()}

    def _build(self, sizes: dict, statics: dict, with_scale: bool):
        def all_sides(traced):
            return self._sides({**traced, **statics}, sizes, with_scale)

        if self.mode == "jit":
            return self.row.compile(all_sides)
        return all_sides

    def _sides(self, arrays: dict, sizes: dict, with_scale: bool) -> dict:
        xp, plan = self.xp, self.plan
        values = {name: compiled(xp, arrays, sizes) for name, compiled in plan.sides.items()}
        if plan.theorem.implementation is not None:
            values["implementation"] = plan.theorem.implementation(xp, **arrays)
        elif plan.primal is not None and self.row.jacobian is not None:
            values["autodiff"] = self._autodiff(arrays, sizes)
        if with_scale:
            scales = [compiled(xp, arrays, sizes) for compiled in plan.scales]
            values["scale"] = functools.reduce(xp.maximum, scales)
        return values

    def _autodiff(self, arrays: dict, sizes: dict):
        plan = self.plan
        single = {**sizes, "batch": 1}
        name = str(plan.wrt.base.label) if isinstance(plan.wrt, sp.Indexed) else str(plan.wrt)
        jacobian = self.row.jacobian(lambda row: plan.primal(self.xp, row, single), name)(arrays)
        wrt_indices = getattr(plan.wrt, "indices", ())
        axes = [index_key(i) for i in plan.primal.out] + [index_key(i) for i in wrt_indices]
        return _rearrange(self.xp, jacobian, axes, [index_key(i) for i in plan.out])


@functools.lru_cache(maxsize=256)
def runner_for(theorem: Theorem, row: Backend, device: str, mode: str) -> Runner:
    """One runner per configuration, so its compiled programs serve every dtype and record."""
    return Runner(plan_for(theorem), row, device, mode)


def _rearrange(xp, array, axes: list, out: list):
    """Axes labelled ``axes`` (batch first, unlabelled) to ``out``, repeated labels as diagonals."""
    letters = {a: "abcdefghijklmnopqrstuvwxy"[n] for n, a in enumerate(dict.fromkeys(axes + out))}
    spec = "z" + "".join(letters[a] for a in axes) + "->z" + "".join(letters[a] for a in out)
    return xp.einsum(spec, array)


# -- deciding one batch ------------------------------------------------------------------


@dataclass
class Outcome:
    """Per-batch verdict; ``errors`` maps a comparison to per-row worst ulps."""

    worst: float
    failing_row: int | None
    comparison: str | None
    reference: dict
    low: dict | None
    errors: dict
    instances: int = 0


def decide(runner: Runner, structure, batch: int, dtype: str, arrays=None) -> Outcome:
    theorem = runner.plan.theorem
    arrays = arrays if arrays is not None else strategies.fill_batch(theorem, structure, batch)
    arrays, valid = _at_claimed_point(theorem, arrays)
    sizes = {**structure.size_map, "batch": batch}
    reference = runner.evaluate(arrays, sizes, "float64", with_scale=True)
    scale = np.nan_to_num(reference["scale"], nan=0.0)
    errors, limits = {}, {}
    for name in runner.plan.lhs_names:
        if name in reference:
            errors[f"{name} vs rhs"] = _truth(theorem, reference[name], reference["rhs"], scale)
            limits[f"{name} vs rhs"] = TRUTH_ULPS
    if "autodiff" in reference and "sympy" in reference:
        errors["autodiff vs sympy"] = error_ulps(reference["autodiff"], reference["sympy"],
                                                 scale, "float64")
        limits["autodiff vs sympy"] = TRUTH_ULPS
    low = None
    if dtype != "float64":
        low = runner.evaluate(arrays, sizes, dtype, with_scale=False)
        for name, value in low.items():
            errors[f"{name} in {dtype}"] = error_ulps(value, reference[name], scale, dtype)
            limits[f"{name} in {dtype}"] = STABILITY_ULPS
    if valid is not None:
        errors = {k: np.where(valid.reshape((-1,) + (1,) * (v.ndim - 1)), v, 0.0)
                  for k, v in errors.items()}
    outcome = _verdict(errors, limits, reference, low, dtype)
    outcome.instances = batch if valid is None else int(valid.sum())
    return outcome


def _at_claimed_point(theorem, arrays: dict):
    """Move the drawn inputs to where the claim is asserted (``Theorem.at``), host-side."""
    if theorem.at is None:
        return arrays, None
    moved = dict(theorem.at(np, **arrays))
    valid = moved.pop("valid", None)
    return {**arrays, **moved}, valid


def _truth(theorem, lhs, rhs, scale):
    if isinstance(theorem.claim, AtLeast):
        return shortfall_ulps(lhs, rhs, scale, "float64")
    return error_ulps(lhs, rhs, scale, "float64")


def _verdict(errors, limits, reference, low, dtype) -> Outcome:
    per_row = {k: v.reshape(v.shape[0], -1).max(axis=1, initial=0.0) for k, v in errors.items()}
    reported = [k for k in per_row if (" in " in k) == (dtype != "float64")]
    worst = max((float(per_row[k].max(initial=0.0)) for k in reported), default=0.0)
    for name, rows in per_row.items():
        bad = np.flatnonzero(rows > limits[name])
        if bad.size:
            return Outcome(worst, int(bad[0]), name, reference, low, errors)
    return Outcome(worst, None, None, reference, low, errors)


# -- the record -------------------------------------------------------------------------


def check(theorem: Theorem, backend_name: str = "numpy", dtype: str = "float64",
          device: str = "cpu", mode: str | None = None,
          profile: str | None = None) -> NumericRecord:
    """Check ``theorem`` numerically on one configuration and return its record.

    A missing backend, dtype or device gives status "skipped"; an exception while compiling or
    evaluating gives "error" with the message; a refuted claim gives "failed" with a shrunk
    counterexample and a replay command (for ``expect="refuted"`` that is the expected outcome).
    """
    row = backend(backend_name)
    mode = mode or row.default_mode
    record = NumericRecord(row.name, dtype, device, mode, "skipped")
    start = time.perf_counter()
    record.reason = _skip_reason(row, dtype, device, mode)
    if isinstance(theorem.claim, Rounds):
        record.reason = "worked numbers have nothing to draw; they are evaluated exactly"
    if record.reason is None:
        try:
            _search(theorem, runner_for(theorem, row, device, mode), dtype,
                    strategies.profile(profile), record)
        except Exception as error:  # any failure of compiling or evaluating is reported
            record.status, record.reason = "error", f"{type(error).__name__}: {error}"
    record.seconds = round(time.perf_counter() - start, 4)
    return record


def _skip_reason(row: Backend, dtype: str, device: str, mode: str) -> str | None:
    missing = unavailable_reason(row)
    if missing:
        return missing
    if mode not in row.modes:
        return f"{row.name} has no mode {mode!r} (modes: {', '.join(row.modes)})"
    if device not in row.devices():
        return f"{row.name} has no device {device!r} here (devices: {', '.join(row.devices())})"
    if dtype not in row.dtypes.get(device_kind(device), ()):
        return f"{row.name} does not support {dtype} on {device}"
    return None


# Every phase but "explain", which reruns a failure many times only to annotate a traceback
# nobody reads here; the counterexample is described by ``_describe`` instead.
_SEARCH_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)


class _Refuted(AssertionError):
    pass


def _search(theorem, runner: Runner, dtype: str, chosen, record: NumericRecord) -> None:
    state = {"worst": 0.0, "failure": None}

    @settings(max_examples=chosen.examples, deadline=None, derandomize=chosen.derandomize,
              database=None, report_multiple_bugs=False, print_blob=False,
              phases=_SEARCH_PHASES, suppress_health_check=list(HealthCheck))
    @given(strategies.from_theorem(theorem, chosen))
    def search(structure):
        outcome = decide(runner, structure, chosen.batch, dtype)
        record.examples += 1
        record.instances += outcome.instances
        state["worst"] = max(state["worst"], outcome.worst)
        target(min(outcome.worst, 1e300), label="worst error (ulps)")
        if outcome.failing_row is not None:
            state["failure"] = (structure, outcome)
            raise _Refuted(outcome.comparison)

    with contextlib.suppress(_Refuted):
        search()
    record.max_error_ulps = state["worst"]
    record.max_error_bits = bits(state["worst"])
    if state["failure"] is None:
        record.status = "passed"
        derivative_without_autodiff = runner.plan.primal is not None and not runner.row.autodiff
        record.reason = runner.row.notes if derivative_without_autodiff else None
        return
    record.status = "failed"
    structure, outcome = state["failure"]
    record.counterexample = _counterexample(runner, structure, outcome, dtype, chosen)
    record.replay = replay_command(theorem, runner, dtype, structure, chosen)
    record.reason = f"{outcome.comparison} exceeds the tolerance"


# -- counterexamples --------------------------------------------------------------------


def _counterexample(runner: Runner, structure, outcome: Outcome, dtype: str, chosen) -> dict:
    theorem = runner.plan.theorem
    arrays = strategies.fill_batch(theorem, structure, chosen.batch)
    row = outcome.failing_row
    instance = {k: (v[row] if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
    instance, outcome = _simplify(runner, structure, arrays, instance, outcome, dtype, chosen)
    return _describe(runner, structure, instance, outcome, dtype)


def _simplify(runner, structure, arrays, instance, outcome, dtype, chosen):
    """Shrink the failing row toward round values while it keeps failing (Hypothesis ``find``)."""
    theorem, row = runner.plan.theorem, outcome.failing_row
    count = strategies.entry_count(theorem, instance)

    def outcome_for(keep):
        candidate = strategies.simplified(theorem, instance, keep)
        batch = {k: _put_row(v, row, candidate[k]) for k, v in arrays.items()}
        return candidate, decide(runner, structure, chosen.batch, dtype, arrays=batch)

    def still_fails(keep):
        result = outcome_for(keep)[1]
        return result.failing_row is not None and row in _failing_rows(result)

    try:
        keep = find(st_flags(count), still_fails,
                    settings=settings(max_examples=chosen.shrink_examples, database=None,
                                      derandomize=True, deadline=None,
                                      phases=[Phase.generate, Phase.shrink]))
    except NoSuchExample:
        return instance, outcome
    candidate, result = outcome_for(keep)
    return candidate, result


def st_flags(count: int):
    return st.lists(st.booleans(), min_size=count, max_size=count)


def _failing_rows(outcome: Outcome) -> set[int]:
    rows = set()
    for name, error in outcome.errors.items():
        limit = STABILITY_ULPS if " in " in name else TRUTH_ULPS
        rows |= set(np.flatnonzero(error.reshape(error.shape[0], -1).max(axis=1) > limit))
    return rows


def _put_row(values, row: int, replacement):
    if not isinstance(values, np.ndarray):
        return values
    values = values.copy()
    values[row] = replacement
    return values


def _describe(runner: Runner, structure, instance: dict, outcome: Outcome, dtype: str) -> dict:
    plan, row = runner.plan, outcome.failing_row
    error = outcome.errors[outcome.comparison][row]
    entry = np.unravel_index(int(np.argmax(error)), error.shape) if error.ndim else ()
    left, right = _compared(outcome, row, entry, dtype)
    return {
        "sizes": structure.size_map,
        "integers": structure.integer_map,
        "scalars": {s.name: _round(instance[s.name]) for s in plan.theorem.scalars},
        "inputs": {t.name: _round(instance[t.name]) for t in plan.theorem.tensors},
        "entry": {str(i.label): int(v) for i, v in zip(plan.out, entry, strict=True)},
        "comparison": outcome.comparison,
        "lhs": left,
        "rhs": right,
        "error_ulps": _round(float(error[entry])),
    }


def _compared(outcome: Outcome, row: int, entry, dtype: str):
    name = outcome.comparison
    if " in " in name:
        side = name.split(" in ")[0]
        return _round(outcome.low[side][row][entry]), _round(outcome.reference[side][row][entry])
    left, right = name.split(" vs ")
    return (_round(outcome.reference[left][row][entry]),
            _round(outcome.reference[right][row][entry]))


def _round(value):
    if isinstance(value, (int, np.integer)):
        return int(value)
    array = np.asarray(value, dtype=np.float64)
    rounded = np.vectorize(lambda x: float(f"{x:.6g}") if math.isfinite(x) else str(x),
                           otypes=[object])(array) if array.size else array
    return rounded.tolist() if isinstance(rounded, np.ndarray) else rounded


def replay_command(theorem, runner: Runner, dtype: str, structure, chosen) -> str:
    sizes = ",".join(f"{k}={v}" for k, v in structure.sizes)
    parts = ["python", "-m", "numeric.replay", theorem.name, "--backend", runner.row.name,
             "--dtype", dtype, "--device", runner.device_name, "--mode", runner.mode,
             "--seed", str(structure.seed),
             "--batch", str(chosen.batch), "--sizes", sizes]
    if structure.integers:
        parts += ["--integers", ",".join(f"{k}={v}" for k, v in structure.integers)]
    if theorem.origin != "<unknown>":
        parts += ["--theorems", theorem.origin]
    return shlex.join(parts)

