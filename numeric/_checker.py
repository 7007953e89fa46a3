"""The numeric checker: one record per (theorem, backend, dtype, device, mode).

Truth is decided in float64 on a reference backend (NumPy or JAX), per entry, against the
abs-scale (``_tolerance``). Any other configuration (a lower precision, or MLX, whose float64 is
not trusted) checks each side's stability against the float64 reference, and then lhs against
rhs within the format: beyond the format's rounding bound the claim is refuted there; a claim
false in float64 that stays within it is "not-decisive". A derivative claim compares up to three
derivations (the backend's autodiff of the compiled primal, the compiled SymPy derivative, the
closed form); finite differences break a tie between them.
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
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from attnproof.symbolic import AtLeast, Rounds, Theorem
from attnproof.symbolic._catalog import theorem_file_argument
from attnproof.symbolic._theorem import ordered_free_indices

from . import _strategies as strategies
from ._backends import Backend, backend, device_kind, to_numpy, unavailable_reason
from ._compiler import compile_expression, index_key
from ._ground_truth import finite_difference, ground_truth_error
from ._tolerance import (
    REFERENCE_DTYPE,
    STABILITY_ULPS,
    TRUTH_ULPS,
    bits,
    error_ulps,
    finfo,
    format_truth_ulps,
    representable,
    shortfall_ulps,
)

# "not-decisive": false in float64, but this format cannot tell the error from its rounding
STATUSES = ("passed", "failed", "not-decisive", "skipped", "error")


@dataclass
class NumericRecord:
    """The outcome of checking one theorem on one backend, dtype, device and mode.

    ``status`` is one of :data:`STATUSES`. ``max_error_ulps`` / ``max_error_bits``: the worst
    lhs-rhs error in float64 on a reference backend, else the worst error of a side against
    float64 or, in a failed record, of the comparison that failed it; in ulps of the dtype (of
    float32 for MLX float64). ``ground_truth_ulps``: the worst float64 error against a
    50-digit mpmath evaluation on small instances, on records that decide truth (None
    elsewhere, or if the claim has no exact form).
    """

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
    ground_truth_ulps: float | None = None

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
    """Compiled sides of a theorem's claim for one compiler target, in the order of its free
    indices ``out``; ``exponents`` (NumPy) give each row's largest exponent, for format ranges."""

    theorem: Theorem
    out: tuple
    sides: dict  # name -> Compiled, evaluated in every dtype
    scales: tuple  # abs-scale Compiled objects; the entry's scale is their maximum
    exponents: tuple  # magnitude Compiled objects, NumPy target, float64 only
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
def plan_for(theorem: Theorem, target: str = "numpy") -> Plan:
    claim = theorem.claim
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
    scales = tuple(compile_(e, abs_scale=True) for e in expressions.values())
    exponents = tuple(compile_(e, magnitudes=True) for e in expressions.values())
    primal, wrt = None, None
    if derivative:
        (wrt, count), = lhs.variable_count
        if count != 1:
            raise NotImplementedError("derivatives of order above one are not checked")
        primal = compile_expression(lhs.expr, ordered_free_indices(lhs.expr),
                                    inputs=theorem.inputs, definitions=theorem.definitions,
                                    target=target)
    return Plan(theorem, tuple(out), sides, scales, exponents, primal, wrt)


def _derivative_order(lhs: sp.Derivative, rhs) -> tuple:
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


# -- evaluation on one backend ------------------------------------------------------------


class Runner:
    """Evaluates a plan's sides on one backend and device, in any dtype, one batch at a time."""

    def __init__(self, plan: Plan, row: Backend, device: str, mode: str):
        self.plan, self.row, self.mode, self.device_name = plan, row, mode, device
        self.module = row.load()
        self.device = row.devices()[device]
        self._compiled: dict = {}

    def reference_for(self, dtype: str) -> Runner:
        """The runner whose float64 values this record is measured against: itself where it
        decides truth, NumPy's otherwise (cheap, and independent of the backend checked)."""
        if is_reference(self.row, dtype):
            return self
        return runner_for(self.plan.theorem, backend("numpy"), "cpu", "eager")

    def evaluate(self, arrays: dict, sizes: dict, dtype: str, with_scale: bool) -> dict:
        xp = self.row.namespace(self.module, dtype)
        with self.row.scope(self.device):
            placed = {k: (self.row.place(xp, v, dtype, self.device)
                          if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
            statics = tuple(sorted((k, v) for k, v in placed.items() if not hasattr(v, "shape")))
            key = (tuple(sorted(sizes.items())), statics, with_scale, dtype)
            if key not in self._compiled:
                self._compiled[key] = self._build(xp, sizes, dict(statics), with_scale)
            traced = {k: v for k, v in placed.items() if hasattr(v, "shape")}
            with np.errstate(all="ignore"):  # overflow shows up as inf/nan and is judged there
                values = {k: to_numpy(v) for k, v in self._compiled[key](traced).items()}
        if with_scale:
            values.update(self._float64_only(arrays, sizes))
        return values

    def _float64_only(self, arrays: dict, sizes: dict) -> dict:
        """Abs-scale and exponent magnitudes, always NumPy float64: they are error bounds."""
        plan = self.plan
        with np.errstate(all="ignore"):
            scales = [compiled(np, arrays, sizes) for compiled in plan.scales]
            exponents = [compiled(np, arrays, sizes) for compiled in plan.exponents]
        scale = functools.reduce(np.maximum, scales)
        return {"scale": scale, "exponent_scale": functools.reduce(np.maximum, exponents),
                "largest": scale.reshape(scale.shape[0], -1).max(axis=1, initial=0.0)}

    def _build(self, xp, sizes: dict, statics: dict, with_scale: bool):
        def all_sides(traced):
            return self._sides(xp, {**traced, **statics}, sizes)

        if self.mode == "jit":
            return self.row.compile(all_sides)
        return all_sides

    def _sides(self, xp, arrays: dict, sizes: dict) -> dict:
        plan = self.plan
        values = {name: compiled(xp, arrays, sizes) for name, compiled in plan.sides.items()}
        if plan.theorem.implementation is not None:
            values["implementation"] = plan.theorem.implementation(xp, **arrays)
        elif plan.primal is not None and self.row.autodiff:
            values["autodiff"] = self._autodiff(xp, arrays, sizes)
        return values

    def _autodiff(self, xp, arrays: dict, sizes: dict):
        plan = self.plan

        def primal(values, batch):
            return plan.primal(xp, values, {**sizes, "batch": batch})

        jacobian = self.row.jacobian(primal, wrt_name(plan))(arrays)
        wrt_indices = getattr(plan.wrt, "indices", ())
        axes = [index_key(i) for i in plan.primal.out] + [index_key(i) for i in wrt_indices]
        return _rearrange(xp, jacobian, axes, [index_key(i) for i in plan.out])


@functools.lru_cache(maxsize=256)
def runner_for(theorem: Theorem, row: Backend, device: str, mode: str) -> Runner:
    """One runner per configuration, so its compiled programs serve every dtype and record."""
    return Runner(plan_for(theorem, row.target), row, device, mode)


def _rearrange(xp, array, axes: list, out: list):
    """Axes labelled ``axes`` (batch first, unlabelled) to ``out``, repeated labels as diagonals."""
    letters = {a: "abcdefghijklmnopqrstuvwxy"[n] for n, a in enumerate(dict.fromkeys(axes + out))}
    spec = "z" + "".join(letters[a] for a in axes) + "->z" + "".join(letters[a] for a in out)
    return xp.einsum(spec, array)


# -- deciding one batch ------------------------------------------------------------------


@dataclass
class Outcome:
    """Per-batch verdict; ``errors`` maps a comparison to per-entry ulps, ``limits`` to its limit.

    Comparison names say what was compared: ``lhs vs rhs`` (float64 truth), ``lhs in float16``
    (stability of one side), ``lhs vs rhs in float16`` (truth in that format).
    """

    worst: float
    failing_row: int | None
    comparison: str | None
    reference: dict
    low: dict | None
    errors: dict
    limits: dict
    invisible: float = 0.0  # float64 truth error a format could not see (not decisive)
    format_ratio: float = 0.0  # largest format-truth error over its limit, for targeting
    instances: int = 0
    inputs: dict | None = None  # the batch as evaluated (moved by ``Theorem.at``)
    valid: np.ndarray | None = None


def is_reference(row: Backend, dtype: str) -> bool:
    """Whether a record decides truth in float64 itself (NumPy or JAX float64)."""
    return row.reference and dtype == REFERENCE_DTYPE


def decide(runner: Runner, structure, batch: int, dtype: str, arrays=None) -> Outcome:
    theorem = runner.plan.theorem
    arrays = arrays if arrays is not None else strategies.fill_batch(theorem, structure, batch)
    arrays, valid = _at_claimed_point(theorem, arrays)
    sizes = {**structure.size_map, "batch": batch}
    reference = runner.reference_for(dtype).evaluate(arrays, sizes, REFERENCE_DTYPE,
                                                     with_scale=True)
    scale = np.nan_to_num(reference["scale"], nan=0.0)
    truth = _truth_errors(runner.plan, reference, scale, REFERENCE_DTYPE)
    if is_reference(runner.row, dtype):
        errors, limits, low = truth, dict.fromkeys(truth, TRUTH_ULPS), None
    else:
        measure = runner.row.measured_as(dtype)
        valid = _and(valid, representable(reference["exponent_scale"], reference["largest"],
                                          measure))
        low = runner.evaluate(arrays, sizes, dtype, with_scale=False)
        errors, limits = _format_errors(runner.plan, low, reference, scale, dtype, measure)
    errors = {k: _only_valid(v, valid) for k, v in errors.items()}
    outcome = _verdict(errors, limits, reference, low, is_reference(runner.row, dtype))
    if low is not None and outcome.failing_row is None:
        outcome.invisible = _worst({k: _only_valid(v, valid) for k, v in truth.items()},
                                   TRUTH_ULPS)
    outcome.instances = batch if valid is None else int(valid.sum())
    outcome.inputs, outcome.valid = arrays, valid
    return outcome


def _truth_errors(plan: Plan, values: dict, scale, dtype: str) -> dict:
    """Every derivation of the lhs against the rhs, and autodiff against SymPy, in ``dtype``."""
    errors = {}
    for name in plan.lhs_names:
        if name in values:
            errors[f"{name} vs rhs"] = _truth(plan.theorem, values[name], values["rhs"], scale,
                                              dtype)
    if "autodiff" in values and "sympy" in values:
        errors["autodiff vs sympy"] = error_ulps(values["autodiff"], values["sympy"], scale, dtype)
    return errors


def _format_errors(plan, low: dict, reference: dict, scale, dtype: str, measure: str):
    """Stability of each side in ``dtype`` against float64, and truth within the format."""
    errors, limits = {}, {}
    for name, value in low.items():
        errors[f"{name} in {dtype}"] = error_ulps(value, _float64_side(reference, name), scale,
                                                  measure)
        limits[f"{name} in {dtype}"] = STABILITY_ULPS
    for name, error in _truth_errors(plan, low, scale, measure).items():
        errors[f"{name} in {dtype}"] = error
        limits[f"{name} in {dtype}"] = format_truth_ulps(measure)
    return errors, limits


def _float64_side(reference: dict, name: str):
    """The float64 value a side in a lower format is measured against. NumPy, the reference
    for MLX, has no autodiff: SymPy's derivative is the same value."""
    return reference.get(name, reference.get("sympy"))


def _and(valid, more):
    return more if valid is None else valid & more


def _only_valid(errors: np.ndarray, valid) -> np.ndarray:
    if valid is None:
        return errors
    return np.where(valid.reshape((-1,) + (1,) * (errors.ndim - 1)), errors, 0.0)


def _worst(errors: dict, limit: float) -> float:
    """The largest error beyond ``limit`` (0 when every comparison is within it)."""
    worst = max((float(v.max(initial=0.0)) for v in errors.values()), default=0.0)
    return worst if worst > limit else 0.0


def _at_claimed_point(theorem, arrays: dict):
    """Move the drawn inputs to where the claim is asserted (``Theorem.at``), host-side."""
    if theorem.at is None:
        return arrays, None
    moved = dict(theorem.at(np, **arrays))
    valid = moved.pop("valid", None)
    return {**arrays, **moved}, valid


def _truth(theorem, lhs, rhs, scale, dtype):
    if isinstance(theorem.claim, AtLeast):
        return shortfall_ulps(lhs, rhs, scale, dtype)
    return error_ulps(lhs, rhs, scale, dtype)


def is_stability(comparison: str) -> bool:
    return " vs " not in comparison


def _verdict(errors, limits, reference, low, deciding_truth: bool) -> Outcome:
    per_row = {k: v.reshape(v.shape[0], -1).max(axis=1, initial=0.0) for k, v in errors.items()}
    reported = [k for k in per_row if deciding_truth or is_stability(k)]
    worst = max((float(per_row[k].max(initial=0.0)) for k in reported), default=0.0)
    ratio = max((float(per_row[k].max(initial=0.0)) / limits[k] for k in per_row
                 if not deciding_truth and not is_stability(k)), default=0.0)
    for name, rows in per_row.items():
        bad = np.flatnonzero(rows > limits[name])
        if bad.size:  # the error that refuted the claim is the record's worst, in any format
            return Outcome(max(worst, float(rows.max())), int(bad[0]), name, reference, low,
                           errors, limits, format_ratio=ratio)
    return Outcome(worst, None, None, reference, low, errors, limits, format_ratio=ratio)


# -- the record -------------------------------------------------------------------------


def check(theorem: Theorem, backend_name: str = "numpy", dtype: str = "float64",
          device: str = "cpu", mode: str | None = None,
          profile: str | None = None) -> NumericRecord:
    """Check ``theorem`` numerically on one configuration and return its record.

    A missing backend, dtype or device gives status "skipped"; an exception while compiling or
    evaluating gives "error" with the message; a refuted claim gives "failed" with a shrunk
    counterexample and a replay command (for ``expect="refuted"`` that is the expected outcome);
    a claim false in float64 that this format cannot tell from rounding gives "not-decisive".
    """
    return search(theorem, backend_name, dtype, device, mode, profile)[0]


def search(theorem: Theorem, backend_name: str = "numpy", dtype: str = "float64",
           device: str = "cpu", mode: str | None = None, profile: str | None = None,
           seed: int | None = None) -> tuple[NumericRecord, Ratios]:
    """:func:`check`, with the error ratios it saw (for ``scripts/calibrate.py``); ``seed``
    fixes Hypothesis's random source."""
    row = backend(backend_name)
    mode = mode or row.default_mode
    record = NumericRecord(row.name, dtype, device, mode, "skipped")
    ratios = Ratios()
    start = time.perf_counter()
    record.reason = _skip_reason(row, dtype, device, mode)
    if isinstance(theorem.claim, Rounds):
        record.reason = "worked numbers have nothing to draw; they are evaluated exactly"
    if record.reason is None:
        try:
            ratios = _search(theorem, runner_for(theorem, row, device, mode), dtype,
                             strategies.profile(profile), record, seed=seed)
        except Exception as error:  # any failure of compiling or evaluating is reported
            record.status, record.reason = "error", f"{type(error).__name__}: {error}"
    record.seconds = round(time.perf_counter() - start, 4)
    return record, ratios


@dataclass
class Ratios:
    """Largest error / limit seen: over every limited comparison (what a true claim needed),
    and over the truth comparisons this record decides with (what a false claim produced)."""

    needed: float = 0.0
    truth: float = 0.0


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


def effort_for(runner: Runner, dtype: str, chosen) -> strategies.Effort:
    """The profile's effort for this record: full where truth is decided in the default mode,
    fewer larger batches elsewhere (each new shape is a compilation on a jitting backend)."""
    if runner.mode != runner.row.default_mode:
        return chosen.other_modes
    if is_reference(runner.row, dtype):
        return chosen.truth
    return chosen.half_formats if finfo(dtype).bits <= 16 else chosen.formats


def _search(theorem, runner: Runner, dtype: str, chosen, record: NumericRecord,
            seed: int | None = None) -> Ratios:
    state = {"worst": 0.0, "failure": None, "invisible": 0.0, "small": None}
    ratios = Ratios()
    effort = effort_for(runner, dtype, chosen)

    @settings(max_examples=effort.examples, deadline=None,
              derandomize=chosen.derandomize and seed is None, database=None,
              report_multiple_bugs=False, print_blob=False, phases=_SEARCH_PHASES,
              suppress_health_check=list(HealthCheck))
    @given(strategies.from_theorem(theorem, chosen))
    def search(structure):
        outcome = decide(runner, structure, effort.batch, dtype)
        record.examples += 1
        record.instances += outcome.instances
        if max(structure.size_map.values(), default=0) <= GROUND_TRUTH_MAX_SIZE:
            state["small"] = state["small"] or (structure, outcome)
        state["worst"] = max(state["worst"], outcome.worst)
        state["invisible"] = max(state["invisible"], outcome.invisible)
        _note_ratios(ratios, outcome)
        target(min(outcome.worst, 1e300), label="worst error (ulps)")
        if not is_reference(runner.row, dtype):
            target(min(outcome.format_ratio, 1e300), label="lhs-rhs in format / its limit")
        if outcome.failing_row is not None:
            state["failure"] = (structure, outcome)
            raise _Refuted(outcome.comparison)

    if seed is not None:
        search = hypothesis_seed(seed)(search)
    with contextlib.suppress(_Refuted):
        search()
    record.max_error_ulps = state["worst"]
    record.max_error_bits = bits(state["worst"])
    if is_reference(runner.row, dtype):  # elsewhere it would measure NumPy, not this record
        record.ground_truth_ulps = ground_truth_error(runner,
                                                      *(state["small"] or (_any(theorem),)))
    if record.ground_truth_ulps is not None and record.ground_truth_ulps > TRUTH_ULPS:
        record.status = "error"
        record.reason = (f"float64 strays {record.ground_truth_ulps:.3g} ulps from the 50-digit "
                         "evaluation of the same statement: the compiled code is wrong")
        return ratios
    if state["failure"] is None:
        _settle_without_failure(runner, dtype, record, state["invisible"])
        return ratios
    structure, outcome = state["failure"]
    record.status = "failed"
    record.counterexample = _counterexample(runner, structure, outcome, dtype, chosen)
    record.replay = replay_command(theorem, runner, dtype, structure, chosen)
    record.reason = f"{outcome.comparison} exceeds the tolerance"
    _break_tie(runner, record)
    return ratios


# Sizes up to this are evaluated exactly (mpmath loops over every sum) from a searched batch.
GROUND_TRUTH_MAX_SIZE = 4


def _any(theorem) -> strategies.Structure:
    integers = tuple((s.name, s.domain.low) for s in strategies.integer_scalars(theorem))
    return strategies.Structure((), integers, 0)


def _note_ratios(ratios: Ratios, outcome: Outcome) -> None:
    for name, error in outcome.errors.items():
        ratio = float(error.max(initial=0.0)) / outcome.limits[name]
        ratios.needed = max(ratios.needed, ratio)
        if not is_stability(name):
            ratios.truth = max(ratios.truth, ratio)


def _settle_without_failure(runner: Runner, dtype: str, record: NumericRecord,
                            invisible: float) -> None:
    if record.instances == 0:
        record.status = "not-decisive"
        record.reason = f"no drawn instance can be evaluated in {dtype} (range or rounding)"
        return
    if invisible > 0:
        record.status = "not-decisive"
        record.reason = (f"false in float64 (lhs vs rhs up to {invisible:.3g} ulps) but within "
                         f"{dtype}'s rounding bound of "
                         f"{format_truth_ulps(runner.row.measured_as(dtype)):g} ulps: "
                         "this format cannot decide the claim")
        return
    record.status = "passed"
    derivative_without_autodiff = runner.plan.primal is not None and not runner.row.autodiff
    measured = runner.row.measured_as(dtype)
    notes = [runner.row.notes] if derivative_without_autodiff else []
    if measured != dtype:
        notes.append(f"{dtype} measured with {measured}'s epsilon ({runner.row.name} computes "
                     f"exp in {measured})")
    record.reason = "; ".join(notes) or None


def _break_tie(runner: Runner, record: NumericRecord) -> None:
    """When a derivation disagrees with the closed form, finite differences say which is wrong:
    if they side with the closed form, the fault is ours (compiler or autodiff), not the claim."""
    example = record.counterexample
    verdict = example.get("finite_difference") if example else None
    if verdict is None:
        return
    if example["comparison"] == "autodiff vs sympy":
        record.status = "error"
        record.reason = (f"autodiff and SymPy's derivative disagree (finite differences side "
                         f"with: {verdict['agrees_with']}): a derivation is wrong, not the claim")
    elif verdict["agrees_with"] == "rhs":
        record.status = "error"
        record.reason = (f"{example['comparison']}: finite differences agree with the closed "
                         "form, so the derivation is wrong, not the claim")


# -- counterexamples --------------------------------------------------------------------


def _counterexample(runner: Runner, structure, outcome: Outcome, dtype: str, chosen) -> dict:
    theorem = runner.plan.theorem
    arrays = strategies.fill_batch(theorem, structure, effort_for(runner, dtype, chosen).batch)
    row = outcome.failing_row
    instance = strategies.instance_at(arrays, row)
    instance, outcome = _simplify(runner, structure, arrays, instance, outcome, dtype, chosen)
    return _describe(runner, structure, instance, outcome, dtype)


def _simplify(runner, structure, arrays, instance, outcome, dtype, chosen):
    """Shrink the failing row toward round values while it keeps failing (Hypothesis ``find``)."""
    theorem, row = runner.plan.theorem, outcome.failing_row
    count = strategies.entry_count(theorem, instance)

    def outcome_for(keep):
        candidate = strategies.simplified(theorem, instance, keep)
        batch = {k: _put_row(v, row, candidate[k]) for k, v in arrays.items()}
        return candidate, decide(runner, structure, effort_for(runner, dtype, chosen).batch, dtype,
                                   arrays=batch)

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
        worst = error.reshape(error.shape[0], -1).max(axis=1)
        rows |= set(np.flatnonzero(worst > outcome.limits[name]))
    return rows


def _put_row(values, row: int, replacement):
    if not isinstance(values, np.ndarray):
        return values
    values = values.copy()
    values[row] = replacement
    return values


def _describe(runner: Runner, structure, instance: dict, outcome: Outcome, dtype: str) -> dict:
    plan, row = runner.plan, outcome.failing_row
    if plan.theorem.at is not None:  # show the point the claim was evaluated at, not the draw
        instance = strategies.instance_at(outcome.inputs, row)
    error = outcome.errors[outcome.comparison][row]
    entry = np.unravel_index(int(np.argmax(error)), error.shape) if error.ndim else ()
    left, right = _compared(outcome, row, entry)
    found = {
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
    if outcome.low is None and plan.primal is not None and "implementation" not in found[
            "comparison"]:
        found["finite_difference"] = finite_difference_verdict(
            plan, instance, structure, found["entry"], outcome, row, entry)
    return found


def finite_difference_verdict(plan, instance, structure, labels, outcome, row, entry) -> dict:
    """The central difference at the failing entry, and which compared value lies within its
    uncertainty."""
    difference = finite_difference(plan, instance, labels, structure.size_map)
    left, right = outcome.comparison.split(" vs ")
    agrees = [side for side, name in (("lhs", left), ("rhs", right))
              if abs(difference.estimate - float(outcome.reference[name][row][entry]))
              <= difference.uncertainty]
    verdict = "both" if len(agrees) == 2 else (agrees[0] if agrees else "neither")
    return {"value": _round(difference.estimate), "step": _round(difference.step),
            "uncertainty": _round(difference.uncertainty), "agrees_with": verdict}


def _compared(outcome: Outcome, row: int, entry):
    """The two values a comparison set against each other at one entry."""
    name = outcome.comparison
    if is_stability(name):
        side = name.split(" in ")[0]
        exact = _float64_side(outcome.reference, side)
        return _round(outcome.low[side][row][entry]), _round(exact[row][entry])
    left, right = name.split(" in ")[0].split(" vs ")
    values = outcome.reference if " in " not in name else outcome.low
    return _round(values[left][row][entry]), _round(values[right][row][entry])


def _round(value):
    if isinstance(value, (int, np.integer)):
        return int(value)
    array = np.asarray(value, dtype=np.float64)
    rounded = np.vectorize(lambda x: float(f"{x:.6g}") if math.isfinite(x) else str(x),
                           otypes=[object])(array) if array.size else array
    return rounded.tolist() if isinstance(rounded, np.ndarray) else rounded


def replay_command(theorem, runner: Runner, dtype: str, structure, chosen) -> str:
    sizes = ",".join(f"{k}={v}" for k, v in structure.sizes)
    parts = ["attnproof", "replay", theorem.name, "--backend", runner.row.name,
             "--dtype", dtype, "--device", runner.device_name, "--mode", runner.mode,
             "--seed", str(structure.seed),
             "--batch", str(effort_for(runner, dtype, chosen).batch), "--sizes", sizes]
    if structure.integers:
        parts += ["--integers", ",".join(f"{k}={v}" for k, v in structure.integers)]
    extra = theorem_file_argument(theorem.origin)
    if extra:
        parts += ["--theorems", extra]
    return shlex.join(parts)

