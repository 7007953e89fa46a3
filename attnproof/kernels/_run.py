"""Run a kernel on one case and judge it: flash-attention's rule, per output, against the float64
truth, with the kernel's conventions observed rather than assumed."""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, SupportsInt, cast

import numpy as np
import numpy.typing as npt

# the conformance rule's limits live beside the numeric checker's, in the tolerance module
from attnproof.numeric import CELL_FAILURES
from attnproof.numeric import KERNEL_CONVENTION_ULPS as CONVENTION_ULPS
from attnproof.numeric import KERNEL_LIMIT as LIMIT
from attnproof.report.view import format_number

from . import _lengths as lengths
from . import _packed as packed
from . import _precision as precision
from . import _proved as proved
from . import _regimes as regimes
from . import _tolerance as tolerance
from ._call import LayoutMismatch, call, call_packed, with_bias
from ._cases import Case, causal_keep, fully_masked_rows, instance
from ._declaration import Kernel, Refused
from ._frameworks import DtypeUnheld, Framework, precision_format
from ._programs import timed_calls
from ._sinks import with_sink_key, without_sink_key
from ._truth import (
    SINK_GRADIENT,
    Inputs,
    condition,
    reference,
    sink_gradient,
    truth,
    truth_lse,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._precision import Sums
    from ._truth import Pair

TRACEBACK_FRAMES = 3
_TINY = precision_format("float64").smallest_normal
CONVENTION_WORDS = {"zeros": "returns zeros", "mean_v": "returns the mean of V",
                    "nan": "returns NaN", "other": "returns neither zeros, NaN nor the mean of V",
                    "upper_left": "aligned upper-left (query i keeps keys j ≤ i)",
                    "lower_right": "aligned lower-right (query i keeps j ≤ i + n_k − n_q)",
                    "-inf": "lse −∞", "+inf": "lse +∞", "finite": "a finite lse"}
LSE_WORDS = {"-inf": "returns −∞", "+inf": "returns +∞", "nan": "returns NaN",
             "finite": "returns finite values (or a mix)"}


class PropertyView(Protocol):
    """What this module reads of a property (``_properties.Property``, which imports this
    module, so it is named by what it has)."""

    @property
    def outputs(self) -> Callable[[Kernel], tuple[str, ...]]: ...
    @property
    def alignment(self) -> str | None: ...
    @property
    def lse_cotangent(self) -> bool: ...
    @property
    def beside_bitwise(self) -> bool: ...
    @property
    def twin_refused(self) -> Callable[[Inputs], tuple[Inputs, str]] | None: ...
    @property
    def length_twin(self) -> Callable[[Case], Case] | None: ...
    @property
    def outputs_instead(self) -> Callable[[Kernel, Framework, Inputs, Case, Format, str],
                                          dict[str, np.ndarray]] | None: ...
    @property
    def run_beside(self) -> Callable[[Kernel, Framework, Inputs, Case, Format, str,
                                      Collection[str]], dict[str, np.ndarray]] | None: ...
    @property
    def convention(self) -> Callable[[Kernel, Inputs, dict[str, np.ndarray], Format, Format,
                                      dict[str, str]],
                                     tuple[Inputs, CaseResult | None]] | None: ...
    @property
    def explain_raise(self) -> Callable[[Kernel, Framework, Case, Format, str],
                                        str | None] | None: ...
    def plain(self) -> PropertyView: ...


@dataclass
class CaseResult:
    """``ratio`` is the worst error over the reference's (floor included): conforms <= LIMIT."""

    status: str  # pass | fail | undecided | refused | raised | layout | declaration
    ratio: float | None = None
    output: str | None = None
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    conventions: dict[str, str] = field(default_factory=dict)
    # the output's largest error over the proved bound of its precision (``_proved``), beside
    # the rule above; None where no bound applies
    bound_ratio: float | None = None
    # what the kernel returned and what the verdict was computed from (``_judge``'s pieces):
    # kept for comparing one call with another, never written out
    got: dict[str, np.ndarray] | None = field(default=None, repr=False)
    pieces: dict[str, Any] | None = field(default=None, repr=False)
    # O's errors and the plain reference's relative to each row's proved bound, summed
    # (``_precision.row_sums``): what the precision the kernel behaves like is estimated from
    precision: Sums | None = None
    # the regimes the case reached (``_regimes.reached``)
    regimes: dict[str, Any] | None = None
    # what the property asks that this case could not judge, and why: name -> why (dsinks of a
    # kernel whose own backward gives none; a precision change where no estimate is possible)
    unchecked: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status in CELL_FAILURES


def run_case(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case, dtype: Format,
             device: str = "cpu") -> CaseResult:
    """One case, run on the kernel as declared (:meth:`Kernel.fresh`: whatever state its
    callables keep starts as it was declared), or a sequence of calls (``case.history``) on
    one such kernel object."""
    if case.history:
        return _in_sequence(kernel, fw, prop, case, dtype, device)
    return _run_on(kernel.fresh(), fw, prop, case, dtype, device)


def _run_on(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case, dtype: Format,
            device: str) -> CaseResult:
    """One call of the case (and what its property runs beside it), under the configuration
    the user's kernel gets (``Framework.scope``: the user's own, restored when it returns)."""
    with fw.scope(dtype.name, kernel.enable_x64):
        reason = fw.dtype_reason(dtype.name)
        if reason is not None:  # not made in another dtype: not run, not decided
            return CaseResult("refused", message=reason)
        return _run_in_scope(kernel, fw, prop, case, dtype, device)


def _run_in_scope(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case, dtype: Format,
                  device: str) -> CaseResult:
    compute = kernel.compute_for(dtype, device)
    outputs = prop.outputs(kernel)
    if case.packed is not None:
        return _run_packed(kernel, fw, case, dtype, device, compute, outputs)
    # (causal_nq_ne_nk builds its instance lower-right: that zeroes the upstream gradient of
    # rows either alignment masks)
    alignment = prop.alignment or kernel.causal_alignment or "upper_left"
    x = with_bias(kernel, instance(case, dtype, compute, alignment), case, dtype)
    x = dataclasses.replace(x, score_mod=kernel.modification(case.softcap))
    if prop.lse_cotangent:
        x = with_lse_cotangent(x, case, dtype)
    result = _outcome(kernel, fw, prop, case, dtype, device, compute, outputs, x)
    if prop.twin_refused is not None and result.status == "pass":
        result = _twin_refused(kernel, fw, prop, case, dtype, device, outputs, x) or result
    if prop.length_twin is not None and result.status in ("pass", "fail"):
        result = _beside_length_twin(kernel, fw, prop, case, dtype, device, compute, result)
    result.regimes = regimes.reached(x, case)
    return result


def with_lse_cotangent(x: Inputs, case: Case, dtype: Format) -> Inputs:
    """``x`` with an upstream gradient of the lse, Gaussian from the case's seed (its own
    stream: the case's other arrays unchanged), 0 on fully masked rows, whose lse is −∞."""
    from ._frameworks import rounded

    g_lse = np.random.default_rng([case.seed, 11]).standard_normal(x.keep.shape[:3])
    g_lse = np.where(fully_masked_rows(x.keep), 0.0, g_lse)
    return dataclasses.replace(x, g_lse=rounded(g_lse, dtype))


def _twin_refused(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case, dtype: Format,
                  device: str, outputs: Collection[str], x: Inputs) -> CaseResult | None:
    """The case's twin the kernel must refuse (``Property.twin_refused``), called after the
    case itself passed: None where the kernel raised on it (its refusal), a failure where it
    returned outputs. A raise counts only because the case's own call ran: a kernel that raises
    on everything has failed that call before this one is made."""
    assert prop.twin_refused is not None  # asked only of a property with a twin to refuse
    twin, why = prop.twin_refused(x)
    try:
        with timed_calls():
            call(kernel, fw, twin, case, dtype, device, outputs)
    except (Refused, DtypeUnheld) as refusal:  # the checker's own refusal: nothing decided
        return CaseResult("refused", message=str(refusal))
    except Exception:  # noqa: BLE001 -- any raise is the refusal asked for
        return None
    return CaseResult("fail", float("inf"), "out",
                      f"answered {why}, where it must refuse them (a call that ran where it "
                      "must raise; the case itself, at whole groups, it answered right)",
                      detail={"output": "out", "twin": why})


def _beside_length_twin(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case,
                        dtype: Format, device: str, compute: Format,
                        result: CaseResult) -> CaseResult:
    """The case beside its twin at another length (``Property.length_twin``): the case's own
    failure, else the twin's; and a failure, or the failure named so, where the precision the
    two behave like differs past what summation order explains (``_lengths.changed``). Where
    either gives no estimate, the change is not judged, and the result says why."""
    assert prop.length_twin is not None  # asked only of a property with a length twin
    twin_case = prop.length_twin(case)
    twin = _run_in_scope(kernel, fw, prop.plain(), twin_case, dtype, device)
    if twin.failed:
        twin.message = f"at its twin of {twin_case.n_k} keys: {twin.message}"
    judged = twin if twin.failed and not result.failed else result
    if twin.status not in ("pass", "fail"):  # refused, raised: no estimate at the twin
        return judged
    why = lengths.unmeasured(result.precision, twin.precision, dtype, compute)
    if why is not None:
        judged.unchecked["precision change"] = why
        return judged
    change = lengths.changed(result.precision, twin.precision, case.n_k, twin_case.n_k,
                             dtype, compute)
    if change is None:
        return judged
    said = lengths.words(change, case.n_k, twin_case.n_k)
    if judged.status == "fail":
        said = f"{judged.message}; {said}"
    return dataclasses.replace(judged, status="fail", output=judged.output or "out",
                               message=said,
                               detail={**judged.detail, "precision_across_lengths": change})


def _outcome(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case, dtype: Format,
             device: str, compute: Format, outputs: Collection[str],
             x: Inputs) -> CaseResult:
    try:
        with timed_calls():
            got = call(kernel, fw, x, case, dtype, device, outputs)
            if prop.outputs_instead is not None:
                got = prop.outputs_instead(kernel, fw, x, case, dtype, device)
            alone = None if prop.run_beside is None else \
                prop.run_beside(kernel, fw, x, case, dtype, device, outputs)
    except Exception as error:  # noqa: BLE001 -- each kind is told apart in _not_run
        return _not_run(error, kernel, fw, prop, case, dtype, device)
    conventions: dict[str, str] = {}
    if prop.convention is not None:
        x, verdict = prop.convention(kernel, x, got, dtype, compute, conventions)
        if verdict is not None:
            return verdict
    pieces: dict[str, Any] = {}
    judged = _judge(kernel, x, got, dtype, compute, outputs, conventions, pieces)
    if SINK_GRADIENT in outputs and x.sinks is not None and SINK_GRADIENT not in got:
        judged.unchecked[SINK_GRADIENT] = ("the kernel's own backward returns dQ, dK, dV "
                                           "only: no sink gradient to judge")
    if judged.status == "fail":
        _name_dropped_knob(kernel, x, got, dtype, compute, outputs, judged)
    if alone is not None and not judged.failed and prop.beside_bitwise:
        apart = bitwise_apart(got, alone, outputs)
        if apart is not None:
            apart.bound_ratio = judged.bound_ratio
            judged = apart
    elif alone is not None and not judged.failed and "exact" in pieces:  # within the rule
        apart = _independence(got, alone, pieces)
        if apart.status == "fail" or (apart.ratio is not None and judged.ratio is not None
                                      and apart.ratio > judged.ratio):
            apart.bound_ratio = judged.bound_ratio
            judged = apart
    judged.conventions = conventions
    judged.got, judged.pieces = got, pieces or None
    return judged


def _knobs_off(kernel: Kernel, x: Inputs) -> Iterator[tuple[str, Inputs]]:
    """Each knob of the instance ``x`` (its sinks, its window's band, its soft-capping), and
    the instance without it."""
    if x.sinks is not None:
        yield "sinks", dataclasses.replace(x, sinks=None)
    if x.given and "mask" in x.given:  # the keep-mask asked beside a window: without its band
        rest = {name: value for name, value in x.given.items() if name != "mask"}
        yield "sliding window", dataclasses.replace(x, keep=x.given["mask"], given=rest or None)
    if x.score_mod is not None and kernel.score_mod is None:  # soft-capping, not the kernel's
        # own declared modification
        yield "soft-capping", dataclasses.replace(x, score_mod=None)


def _name_dropped_knob(kernel: Kernel, x: Inputs, got: dict[str, np.ndarray], dtype: Format,
                       compute: Format, outputs: Collection[str], judged: CaseResult) -> None:
    """Where a failing case's outputs pass the rule against the instance with one of its
    knobs off, say so in ``judged``: the kernel took the knob's keyword and ignored it on this
    path (a knob silently dropped: the failure class of a sink dropped beside a mask, a window
    dropped in paged decode, soft-capping dropped on a planned path)."""
    for knob, off in _knobs_off(kernel, x):
        # without sinks there is no sink gradient to judge
        judged_off = [o for o in outputs if o != SINK_GRADIENT or off.sinks is not None]
        with np.errstate(all="ignore"):
            again = _judge(kernel, off, got, dtype, compute, judged_off, {})
        if again.status == "pass":
            judged.message += (f"; its outputs pass the rule against attention without its "
                               f"{knob} ({format_number(again.ratio)}x): the kernel ignored its "
                               f"{knob} here")
            judged.detail = {**judged.detail, "ignored": knob}
            return


def _not_run(error: Exception, kernel: Kernel, fw: Framework, prop: PropertyView | None,
             case: Case, dtype: Format, device: str) -> CaseResult:
    """What a call that raised tells: a layout the kernel did not return, a case outside what
    it supports or the framework's configuration holds (not run, not decided), a declaration
    its raise is explained by, or the kernel's own failure (a finding, reported in full)."""
    if isinstance(error, LayoutMismatch):
        return CaseResult("layout", message=str(error))
    if isinstance(error, Refused | DtypeUnheld):
        return CaseResult("refused", message=str(error))
    if prop is not None and prop.explain_raise is not None:
        mismatch = prop.explain_raise(kernel, fw, case, dtype, device)
        if mismatch is not None:
            return CaseResult("declaration", message=f"{mismatch}\n{_raised(error)}")
    where = f" (run {kernel.mode})" if kernel.mode else ""
    return CaseResult("raised", message=f"raised{where}: {_raised(error)}")


def _run_packed(kernel: Kernel, fw: Framework, case: Case, dtype: Format, device: str,
                compute: Format, outputs: Collection[str]) -> CaseResult:
    """A packed case (``packed_sequences``): its sequences end to end in one call, each judged
    by the rule against its own truth, a batch of one (``theorems/production_features.py``:
    packed attention is each sequence's own), the worst of them the case's result; then, where
    the slack belongs to no sequence (offsets), its tokens' gradients, which must be 0 (no
    output depends on them)."""
    alignment = kernel.causal_alignment or "upper_left"
    sequences = [dataclasses.replace(x, score_mod=kernel.modification(case.softcap))
                 for x in packed.instances(case, dtype, compute, alignment)]
    layout = packed.packing_of(case)
    try:
        with timed_calls():
            got, slack = call_packed(kernel, fw, sequences, layout, case, dtype, device,
                                     outputs)
    except Exception as error:  # noqa: BLE001 -- each kind is told apart in _not_run
        return _not_run(error, kernel, fw, None, case, dtype, device)
    conventions: dict[str, str] = {}
    judged = []
    for number, (x, one) in enumerate(zip(sequences, got, strict=True)):
        result = _judge(kernel, x, one, dtype, compute, outputs, conventions)
        result.regimes = regimes.reached(x, case)
        if result.status == "fail":
            _name_dropped_knob(kernel, x, one, dtype, compute, outputs, result)
        if result.failed:
            n_q, n_k = x.q.shape[2], x.k.shape[2]
            result.message = f"sequence {number + 1} of {len(sequences)} non-empty " \
                             f"({n_q} queries, {n_k} keys): {result.message}"
        judged.append(result)
    worst = _worst_sequence(judged)
    slack_failure = _slack_gradients(slack, layout) if packed.owns_no_slack(kernel) else None
    if slack_failure is not None and not worst.failed:
        slack_failure.bound_ratio, slack_failure.regimes = worst.bound_ratio, worst.regimes
        worst = slack_failure
    worst.conventions = conventions
    return worst


def _worst_sequence(judged: list[CaseResult]) -> CaseResult:
    """The first failure, else the largest ratio; its precision sums every sequence's, and its
    regimes all of theirs."""
    failed = [r for r in judged if r.failed]
    worst = failed[0] if failed else max(judged, key=lambda r: -1.0 if r.ratio is None
                                         else r.ratio)
    total: Sums | None = None
    for result in judged:
        total = precision.add(total, result.precision)
    found = [name for r in judged for name in (r.regimes or {}).get("regimes", ())]
    worst.precision = total
    worst.regimes = {"regimes": list(dict.fromkeys(found)),
                     "n_k": max(int((r.regimes or {}).get("n_k", 0)) for r in judged)}
    return worst


def _slack_gradients(slack: dict[str, np.ndarray], layout: packed.Packing) -> CaseResult | None:
    """A failure where a slack token's gradient is not 0: no sequence owns it, so no output
    depends on it (and no loss reads its output: its upstream gradient is 0)."""
    for name, value in slack.items():
        wrong = value != 0  # NaN included
        if wrong.any():
            first = float(value[wrong].flat[0])
            return CaseResult(
                "fail", float("inf"), name,
                f"{name} of the {layout.slack} slack token{'s' * (layout.slack != 1)} past the "
                f"last offset (no sequence's) is not 0: {int(wrong.sum())} entries, the first "
                f"{format_number(first)}; no output depends on them "
                "(packed_token_of_no_sequence_gets_no_query_gradient, _key_gradient)",
                detail={"output": name, "slack": layout.slack})
    return None


def _in_sequence(kernel: Kernel, fw: Framework, prop: PropertyView, case: Case, dtype: Format,
                 device: str) -> CaseResult:
    """The calls of ``case.history``, then ``case`` itself, made in that order on one kernel
    object as declared. Where the kernel's callables keep state of their own, each call is
    compared with the same call made on a fresh copy (in every dtype): by the rule, their
    difference at most what it allows an error, and neither raising alone. Where they keep
    none, the fresh call is what the rule asks of any call: each call in the cell's dtype is
    judged against the truth (state kept elsewhere, in a module or the framework, shows so)."""
    # the history's dtypes are names (a case is data, written out in its replay command)
    calls = [*((precision_format(name), earlier) for name, earlier in case.history),
             (dtype, dataclasses.replace(case, history=()))]
    plain_prop = prop.plain()
    one = kernel.fresh()
    stateful = one is not kernel
    judged = []
    for number, (call_dtype, call_case) in enumerate(calls, 1):
        result = _run_on(one, fw, plain_prop, call_case, call_dtype, device)
        if stateful:
            fresh = _run_on(kernel.fresh(), fw, plain_prop, call_case, call_dtype, device)
            reached = result.regimes
            result = _against_fresh(result, fresh)
            result.regimes = reached
        elif call_dtype != dtype:
            continue  # judged against the truth in its own dtype's cell
        if number < len(calls) and result.status in ("refused", "undecided"):
            continue
        if result.failed:
            earlier = "" if number == 1 else \
                f" on one kernel object, after {number - 1} earlier call" \
                f"{'s' * (number > 2)} (the case's history)"
            result.message = f"call {number} of {len(calls)} ({call_dtype}){earlier}: " \
                             f"{result.message}"
            return result
        judged.append(result)
    final = judged[-1]
    if final.status != "pass":  # refused or undecided: the case is not decided
        return final
    return max((r for r in judged if r.status == "pass"), key=lambda r: r.ratio or 0.0)


def _against_fresh(result: CaseResult, fresh: CaseResult) -> CaseResult:
    """A call made after others against the same call made on a fresh kernel: what it returned
    within what the rule allows an error of the one from the other; running in one and not in
    the other is a failure, not running in either no evidence."""
    if result.got is None or fresh.got is None or not fresh.pieces:
        if result.status == fresh.status or (result.got is not None and fresh.got is not None):
            return CaseResult("undecided", None, None,
                              f"not comparable with a fresh call ({fresh.status}): "
                              f"{fresh.message}")
        made, other = ("after others", "made fresh") if result.got is None else \
            ("fresh", "made after others")
        shown = result if result.got is None else fresh
        return CaseResult("fail", float("inf"), None,
                          f"the call made {made} {shown.status}, the same call {other} ran: "
                          f"{shown.message}")
    pieces = dict(fresh.pieces, outputs=tuple(o for o in fresh.pieces["outputs"]
                                              if o in result.got and o in fresh.got))
    apart = _independence(result.got, fresh.got, pieces,
                          "the same call made on a fresh kernel", ("after others", "fresh"))
    apart.bound_ratio = result.bound_ratio
    return apart


def _raised(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)[-TRACEBACK_FRAMES:]
    for frame in frames:
        frame.filename = _short_path(frame.filename)
    where = "".join(traceback.format_list(frames))
    return f"{type(error).__name__}: {error}\n{where}".rstrip()


def _short_path(path: str) -> str:
    """A frame's file relative to the working directory, or from its installed package on."""
    import os

    if "site-packages" + os.sep in path:
        return path.split("site-packages" + os.sep, 1)[1]
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


# -- judging -------------------------------------------------------------------------------------


def _judge(kernel: Kernel, x: Inputs, got: dict[str, np.ndarray], dtype: Format, compute: Format,
           outputs: Collection[str], conventions: dict[str, str],
           pieces: dict[str, Any] | None = None) -> CaseResult:
    """The worst output by the rule; ``pieces``, when given, receives what the verdict was
    computed from (the truth, the plain reference, the floors, the outputs judged). With sinks,
    everything is computed on the instance with the sink as one more key (``_sinks``), and that
    key's rows of dK and dV are left out: a row that keeps no key of its own is no fully masked
    row there, its weight goes to the sink."""
    n_k = x.k.shape[2]
    # a kernel whose own backward returns dQ, dK, dV only gives no sink gradient to judge
    outputs = [o for o in outputs if o != SINK_GRADIENT or o in got]
    if x.sinks is not None:
        x = with_sink_key(x)
    masked_rows = fully_masked_rows(x.keep)
    if masked_rows.any():
        mismatch = _fully_masked(kernel, x, got["out"], masked_rows, dtype, compute, conventions)
        if mismatch is None and "lse" in got:
            mismatch = _fully_masked_lse(kernel, got["lse"], masked_rows, conventions)
        if mismatch is not None:
            return mismatch
        if conventions.get("fully_masked") == "nan":
            outputs = [o for o in outputs if o in ("out", "lse")]
    exact = truth(x, [o for o in outputs if o not in ("lse", SINK_GRADIENT)])
    plain = reference(x, compute, dtype, outputs)
    if "lse" in outputs:
        exact["lse"] = truth_lse(x)
    if SINK_GRADIENT in outputs:
        exact[SINK_GRADIENT] = sink_gradient(x)
    floor = tolerance.floor_ulps(x, dtype, compute)
    exact, plain, floor = (without_sink_key(values, n_k) for values in (exact, plain, floor))
    if pieces is not None:
        pieces.update(exact=exact, plain=plain, floor=floor, masked_rows=masked_rows,
                      outputs=tuple(outputs))
    with np.errstate(all="ignore"):
        judged = _worst_of(outputs, got, exact, plain, masked_rows, floor)
    judged = _with_necessary(judged, _necessary(x, got, exact, outputs, ~masked_rows, dtype,
                                                compute, kernel.framework))
    if "out" in outputs:
        bound = proved.row_bounds(x, dtype, compute, kernel.framework)
        judged.bound_ratio = proved.bound_ratio(x, got["out"], *exact["out"], dtype, compute,
                                                kernel.framework, ~masked_rows, bound)
        if precision.resolvable(dtype, compute):
            coarse = reference(x, precision.probe_precision(dtype, compute), dtype, ("out",))
            judged.precision = precision.row_sums(got["out"], *exact["out"], plain["out"],
                                                  coarse["out"], bound, condition(x)["out"],
                                                  ~masked_rows, compute)
        behaves = precision.words(precision.estimate(judged.precision, dtype, compute))
        if judged.status == "fail" and judged.ratio is not None and \
                np.isfinite(judged.ratio) and behaves:
            judged.message += f"; in this case O {behaves.replace('declared', 'is declared')}"
    return judged


def _necessary(x: Inputs, got: dict[str, np.ndarray], exact: dict[str, Pair],
               outputs: Collection[str], rows: np.ndarray, dtype: Format, compute: Format,
               framework: str) -> list[CaseResult]:
    """What must hold whatever rounding the scores suffer (``_tolerance``, "What holds
    whatever the scores' rounding"), on every row that keeps a key: each entry of O within its
    feature's values over the kept keys, and the lse within [max s − e, max s + log n + e]."""
    found: list[CaseResult] = []
    if not rows.any():
        return found
    unresolved = tolerance.unresolved_rows(x, compute)
    if "out" in outputs:
        hull = tolerance.value_hull(x, dtype, compute)
        found.append(_outside_hull(got["out"], exact["out"][0], hull, rows, unresolved))
    if "lse" in outputs and "lse" in got:
        interval = tolerance.lse_interval(x, dtype, compute, framework)
        found.append(_outside_lse(got["lse"], exact["lse"][0], interval, rows, unresolved))
    return found


def _outside_hull(out: np.ndarray, exact: np.ndarray, hull: tolerance.Hull, rows: np.ndarray,
                  unresolved: np.ndarray) -> CaseResult:
    with np.errstate(over="ignore", invalid="ignore"):
        ratios = np.where(rows[..., None], LIMIT * hull.ratio(out), 0.0)
    worst = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    ratio = float(ratios[worst])
    row, feature = tuple(int(i) for i in worst[:3]), int(worst[3])
    kept, excess = int(hull.kept[row]), float(hull.excess(out)[worst])
    low, high, allowance = (float(a[worst]) for a in (hull.low, hull.high, hull.allowance))
    detail = {"output": "out", "check": "value hull",
              "at": {"output": "out", "row (b, h, i)": list(row), "feature": feature},
              "kernel": _short(out[row]), "truth": _short(exact[row]), "bounds": [low, high],
              "excess": excess, "allowance": allowance, "kept": kept,
              "resolved": not bool(unresolved[row])}
    if ratio <= LIMIT:
        return CaseResult("pass", ratio, "out", "", detail)
    message = (f"out: {float(out[worst]):.6g} at (b, h, i, e) = {[*row, feature]} lies "
               f"outside [{low:.6g}, {high:.6g}], the values of feature {feature} over the "
               f"row's {kept} kept key{'s' * (kept != 1)}, by {excess:.3g}, more than the "
               f"{allowance:.3g} rounding allows ({hull.rounding(kept)}): attention's output "
               f"is a weighted average of the kept value rows whatever the scores "
               f"({', '.join(tolerance.HULL_THEOREMS)})")
    if unresolved[row]:
        message += ("; the format does not resolve this row's scores (their floor is at least "
                    "the output's magnitude): this is what judges the row")
    if not np.all(np.isfinite(out[rows])):
        message += "; the kernel returned non-finite values"
    return CaseResult("fail", ratio, "out", message, detail)


def _outside_lse(lse: np.ndarray, exact: np.ndarray, interval: tolerance.LseInterval,
                 rows: np.ndarray, unresolved: np.ndarray) -> CaseResult:
    with np.errstate(over="ignore", invalid="ignore"):
        ratios = np.where(rows, LIMIT * interval.ratio(lse), 0.0)
    worst = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    ratio, row, kept = float(ratios[worst]), [int(i) for i in worst], int(interval.kept[worst])
    low, high, margin, top = (float(a[worst]) for a in (interval.low, interval.high,
                                                         interval.margin, interval.top))
    detail = {"output": "lse", "check": "lse interval",
              "at": {"output": "lse", "row (b, h, i)": row},
              "kernel": _short(lse[worst]), "truth": _short(exact[worst]),
              "bounds": [low, high], "allowance": margin, "kept": kept,
              "resolved": not bool(unresolved[worst])}
    if ratio <= LIMIT:
        return CaseResult("pass", ratio, "lse", "", detail)
    message = (f"lse: {float(lse[worst]):.6g} in row {row} lies outside [max s − e, max s + "
               f"log n + e] = [{low:.6g}, {high:.6g}] ({kept} kept key{'s' * (kept != 1)}, "
               f"max s = {top:.6g}, e = {margin:.3g} from the format): the log-sum-exp of the "
               f"kept scores lies between their maximum and the maximum plus log n whatever "
               f"their rounding ({', '.join(tolerance.LSE_THEOREMS)})")
    if unresolved[worst]:
        message += ("; the format does not resolve this row's scores: this is what judges "
                    "the row")
    if not np.isfinite(lse[worst]):
        message += "; the kernel returned non-finite values"
    return CaseResult("fail", ratio, "lse", message, detail)


def _with_necessary(judged: CaseResult, necessary: list[CaseResult]) -> CaseResult:
    """The rule's verdict, and the necessary conditions beside it: one that fails fails the
    case (a reference that is not finite leaves the rule undecided, never the hull), and the
    case's ratio is the largest of all, so it shows the check nearest to failing. A condition
    met decides nothing on its own: an undecided case stays undecided."""
    for extra in necessary:
        assert extra.ratio is not None  # the hull's and the lse interval's carry their ratio
        if extra.failed:
            if not judged.failed or (judged.ratio or 0.0) < extra.ratio:
                judged = extra
        elif judged.status == "pass" and extra.ratio > (judged.ratio or 0.0):
            judged = extra
    return judged


def _worst_of(outputs: Collection[str], got: dict[str, np.ndarray], exact: dict[str, Pair],
              plain: dict[str, np.ndarray], masked_rows: np.ndarray,
              floor: dict[str, np.ndarray]) -> CaseResult:
    judged = [_compare(name, got[name], *exact[name], plain[name],
                       ~masked_rows if name in ("out", "lse") else None, floor[name])
              for name in outputs]
    decided = [j for j in judged if j.ratio is not None]
    # (each of ``decided`` has a ratio)
    return max(decided, key=lambda j: cast(float, j.ratio)) if decided else judged[0]


def _compare(name: str, value: np.ndarray, exact: np.ndarray, size: np.ndarray,
             plain: np.ndarray, rows: np.ndarray | None, floor_ulps: np.ndarray) -> CaseResult:
    """Flash-attention's rule on absolute errors: each row's error at most LIMIT times the
    plain reference's worst, plus the row's floor (``floor_ulps`` per row, times the row's
    magnitude: the sum of its terms' absolute values)."""
    if name == "lse":
        value, exact, plain, size = (a[..., None] for a in (value, exact, plain, size))
    kernel_rows, plain_rows = _row_errors(value, exact), _row_errors(plain, exact)
    floors = floor_ulps * np.max(size, axis=-1) + _TINY
    if rows is not None:
        kernel_rows, plain_rows, floors = kernel_rows[rows], plain_rows[rows], floors[rows]
    if kernel_rows.size == 0:
        return CaseResult("pass", 0.0, name)
    plain_worst = float(np.max(plain_rows))
    if not np.isfinite(plain_worst):
        return CaseResult("undecided", None, name, "the plain reference is not finite here")
    ratios = LIMIT * kernel_rows / (LIMIT * plain_worst + floors)
    worst_row = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    ratio, floor = float(ratios[worst_row]), float(floors[worst_row])
    kernel_error = float(kernel_rows[worst_row])
    index = worst_row if rows is None else tuple(np.argwhere(rows)[worst_row[0]])
    detail = {"output": name, "kernel_error": kernel_error, "reference_error": plain_worst,
              "floor": floor, **_entries(name, value, exact, index)}
    status = "pass" if ratio <= LIMIT else "fail"
    where = f"at head {int(index[1])}" if name == SINK_GRADIENT else \
        f"in row {list(map(int, index))}"
    message = "" if status == "pass" else (
        f"{name}: error {format_number(kernel_error)} {where} vs the "
        f"plain reference's worst {plain_worst:.3g} (floor {floor:.3g}): "
        f"{format_number(ratio)}x, more than "
        f"{LIMIT:g}x")
    if status == "fail" and not np.all(np.isfinite(value)):
        message += "; the kernel returned non-finite values"
    return CaseResult(status, ratio, name, message, detail)


def _independence(got: dict[str, np.ndarray], alone: dict[str, np.ndarray],
                  pieces: dict[str, Any], other: str = "the same element run alone",
                  labels: tuple[str, str] = ("batched", "alone")) -> CaseResult:
    """Each batch element's outputs against the same element run alone: their difference per
    row within what the rule allows an error (LIMIT times the plain reference's worst, plus the
    row's floor); the same convention value (NaN, ±inf) in both counts as equal."""
    with np.errstate(all="ignore"):
        # pieces["exact"] is ``_judge``'s truth: a (value, magnitude) pair per output
        judged = [_compare_alone(name, got[name], alone[name],
                                 *cast("Pair", pieces["exact"][name]),
                                 pieces["plain"][name], pieces["masked_rows"],
                                 pieces["floor"][name], other, labels)
                  for name in pieces["outputs"] if name in got and name in alone]
    decided = [j for j in judged if j.ratio is not None]
    # (each of ``decided`` has a ratio)
    return max(decided, key=lambda j: cast(float, j.ratio)) if decided else judged[0]


def bitwise_apart(got: dict[str, np.ndarray], alone: dict[str, np.ndarray],
                  outputs: Collection[str]) -> CaseResult | None:
    """The first output whose batched values are not those of each element run alone, to the
    bit (equal as numbers, NaN to NaN; +0 and -0 count as one): a failure naming the element,
    the entries that differ and by how much; None where every output is the same. No rule and
    no floor: what a batch-invariant kernel promises is sameness, not closeness."""
    for name in outputs:
        if name not in got or name not in alone:
            continue
        batched, single = np.asarray(got[name]), np.asarray(alone[name])
        with np.errstate(all="ignore"):
            same = (batched == single) | (np.isnan(batched) & np.isnan(single))
            if same.all():
                continue
            # over the entries that differ only: NaN beside a number, or ±∞ beside anything
            # else, is an infinite difference
            apart = np.abs(batched[~same].astype(np.float64) - single[~same].astype(np.float64))
        first = [int(i) for i in np.unravel_index(int(np.argmin(same)), same.shape)]
        largest = float(np.max(np.nan_to_num(apart, nan=np.inf)))
        differing, entries = int((~same)[first[0]].sum()), int(same[first[0]].size)
        message = (f"{name} of batch element {first[0]} is not the same to the bit as the "
                   f"element run alone (declared batch_invariant): {differing} of {entries} "
                   f"entries differ, by up to {format_number(largest)}; first at {first}: "
                   f"batched {float(batched[tuple(first)])!r}, alone "
                   f"{float(single[tuple(first)])!r}")
        return CaseResult("fail", float("inf"), name, message,
                          {"output": name, "bitwise": True, "difference": largest,
                           "entries_differing": differing, "at": first,
                           "batched": float(batched[tuple(first)]),
                           "alone": float(single[tuple(first)])})
    return None


def _compare_alone(name: str, value: np.ndarray, alone: np.ndarray, exact: np.ndarray,
                   size: np.ndarray, plain: np.ndarray, masked_rows: np.ndarray,
                   floor_ulps: np.ndarray, other: str, labels: tuple[str, str]) -> CaseResult:
    if name == "lse":
        value, alone, exact, plain, size = (a[..., None] for a in (value, alone, exact, plain,
                                                                    size))
    same = (value == alone) | (np.isnan(value) & np.isnan(alone))
    apart = np.nan_to_num(np.where(same, 0.0, np.abs(value - alone)), nan=np.inf,
                          posinf=np.inf)
    apart_rows = np.max(apart, axis=-1)
    plain_rows = _row_errors(plain, exact)
    if name in ("out", "lse"):  # a fully masked row has no error to speak of, only a convention
        plain_rows = plain_rows[~masked_rows]
    plain_worst = float(np.max(plain_rows, initial=0.0))
    if not np.isfinite(plain_worst):
        return CaseResult("undecided", None, name, "the plain reference is not finite here")
    floors = floor_ulps * np.max(size, axis=-1) + _TINY
    ratios = LIMIT * apart_rows / (LIMIT * plain_worst + floors)
    worst = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    ratio, floor, difference = (float(a[worst]) for a in (ratios, floors, apart_rows))
    index = [int(i) for i in worst]
    detail = {"output": name, "difference": difference, "reference_error": plain_worst,
              "floor": floor, "at": {"output": name, "row (b, h, i)": index},
              labels[0]: _short(value[worst]), labels[1]: _short(alone[worst])}
    if ratio <= LIMIT:
        return CaseResult("pass", ratio, name, "", detail)
    where = f" of batch element {index[0]}" if other.startswith("the same element") else ""
    message = (f"{name}{where} differs from {other}: by {format_number(difference)} in row "
               f"{index} vs the plain reference's worst error {plain_worst:.3g} (floor "
               f"{floor:.3g}): {format_number(ratio)}x, more than {LIMIT:g}x")
    return CaseResult("fail", ratio, name, message, detail)


def _row_errors(value: np.ndarray, exact: np.ndarray) -> np.ndarray:
    difference = np.abs(value - exact)
    difference = np.where(np.isfinite(value) | ~np.isfinite(exact), difference, np.inf)
    # nan_to_num would write +inf as the largest float: an error of 1.8e308 where the kernel
    # returned NaN or ±inf; the error is infinite, and says so
    return np.max(np.nan_to_num(difference, nan=np.inf, posinf=np.inf), axis=-1)


def _entries(name: str, value: np.ndarray, exact: np.ndarray,
             index: Iterable[SupportsInt]) -> dict[str, Any]:
    at = tuple(int(i) for i in index)
    return {"at": {"output": name, "row (b, h, i)": list(at)},
            "kernel": _short(value[at]), "truth": _short(exact[at])}


def _short(row: npt.ArrayLike, keep: int = 8) -> list[float]:
    return [float(f"{float(v):.6g}") for v in np.ravel(row)[:keep]]


# -- conventions ---------------------------------------------------------------------------------


def _fully_masked(kernel: Kernel, x: Inputs, out: np.ndarray, rows: np.ndarray, dtype: Format,
                  compute: Format, conventions: dict[str, str]) -> CaseResult | None:
    observed = classify_fully_masked(x, out, rows, max(compute.epsilon,
                                                      dtype.epsilon))
    conventions["fully_masked"] = observed
    declared = kernel.fully_masked
    if declared is not None and observed != declared:
        index = [int(i) for i in np.argwhere(rows)[0]]
        return CaseResult("fail", float("inf"), "out",
                          f"fully masked row: declared {CONVENTION_WORDS[declared]}, "
                          f"{CONVENTION_WORDS[observed]}",
                          {"at": {"output": "out", "row (b, h, i)": index},
                           "kernel": _short(out[tuple(index)])},
                          conventions)
    return None


def _fully_masked_lse(kernel: Kernel, lse: np.ndarray, rows: np.ndarray,
                      conventions: dict[str, str]) -> CaseResult | None:
    """A row with no kept key has no mass: its log-sum-exp is -inf, or by a declared
    convention +inf (flash-attention's, so that exp(s - lse) is 0) or NaN; never finite."""
    observed = classify_fully_masked_lse(lse[rows])
    conventions["fully_masked_lse"] = observed
    declared = kernel.fully_masked_lse
    if observed != "finite" and declared in (None, observed):
        return None
    wanted = "-inf, +inf or NaN" if declared is None else LSE_WORDS[declared]
    index = [int(i) for i in np.argwhere(rows)[0]]
    return CaseResult("fail", float("inf"), "lse",
                      f"lse of a fully masked row: expected {wanted}, the kernel "
                      f"{LSE_WORDS[observed]}",
                      {"at": {"output": "lse", "row (b, h, i)": index},
                       "kernel": _short(lse[tuple(index)]), "truth": [float("-inf")]},
                      conventions)


def classify_fully_masked_lse(values: np.ndarray) -> str:
    for name, test in (("-inf", np.isneginf), ("+inf", np.isposinf), ("nan", np.isnan)):
        if np.all(test(values)):
            return name
    return "finite"


def classify_fully_masked(x: Inputs, out: np.ndarray, rows: np.ndarray, epsilon: float) -> str:
    """What the kernel returns for its fully masked rows: zeros, mean_v, nan or other."""
    values = out[rows]
    if np.all(np.isnan(values)):
        return "nan"
    mean_v = np.broadcast_to(np.repeat(x.v, x.group, axis=1).mean(axis=2)[:, :, None],
                             out.shape)[rows]
    tolerance = CONVENTION_ULPS * epsilon * (np.max(np.abs(x.v)) + _TINY)
    distances = {"zeros": np.max(np.abs(values)), "mean_v": np.max(np.abs(values - mean_v))}
    # (``get`` of one of its own keys: never None)
    best = min(distances, key=distances.__getitem__)
    return best if distances[best] <= tolerance else "other"


def read_causal_alignment(kernel: Kernel, x: Inputs, got: dict[str, np.ndarray], dtype: Format,
                          compute: Format, conventions: dict[str, str]
                          ) -> tuple[Inputs, CaseResult | None]:
    """Which causal alignment the kernel follows when n_q != n_k, from its output."""
    n_q, n_k = x.q.shape[2], x.k.shape[2]
    keeps = {a: np.broadcast_to(causal_keep(n_q, n_k, a), x.keep.shape) for a in
             ("upper_left", "lower_right")}
    common = ~fully_masked_rows(keeps["upper_left"]) & ~fully_masked_rows(keeps["lower_right"])
    floor = tolerance.floor_ulps(x, dtype, compute)
    ratios: dict[str, float | None] = {}
    for name, keep in keeps.items():
        xa = dataclasses.replace(x, keep=keep)
        exact = truth(xa, ("out",))["out"]
        plain = reference(xa, compute, dtype, ("out",))["out"]
        ratios[name] = _compare("out", got["out"], *exact, plain, common, floor["out"]).ratio
    fits = [a for a, r in ratios.items() if r is not None and r <= LIMIT]
    declared = kernel.causal_alignment
    if not fits:
        shown = ", ".join(f"{a} {format_number(r)}x" for a, r in ratios.items())
        return x, CaseResult("fail", max(r or 0 for r in ratios.values()), "out",
                             f"causal with n_q != n_k matches neither alignment ({shown})")
    if len(fits) == len(ratios):  # too few rows differ between the alignments to tell them apart
        # (every ratio fits: none is None)
        return x, CaseResult("pass", max(cast("Iterable[float]", ratios.values())), "out")
    observed = fits[0]
    conventions["causal_alignment"] = observed
    if declared is not None and observed != declared:
        return x, CaseResult("fail", ratios[declared], "out",
                             f"causal: declared {CONVENTION_WORDS[declared]}, but "
                             f"{CONVENTION_WORDS[observed]}", conventions=conventions)
    return dataclasses.replace(x, keep=keeps[observed]), None
