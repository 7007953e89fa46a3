"""The witness of a refuted claim: the failing row shrunk toward round values, described, tie-broken
by finite differences, and a command that replays it."""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from hypothesis import Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from attnproof.symbolic import FLOAT64

from . import _strategies as strategies
from ._decide import Outcome, decide, failing_rows, float64_side, is_stability
from ._driver import Failure, theorems_argument
from ._ground_truth import finite_difference
from ._plan import ImplementationError, ImplementationRaised, Plan, Runner

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._profiles import Profile
    from ._strategies import Structure


def refute(runner: Runner, structure: Structure, outcome: Outcome, dtype: Format, batch: int,
           chosen: Profile) -> Failure:
    """The failure ``outcome`` shows: its counterexample, replay command and reason."""
    assert outcome.comparison is not None  # a failing outcome names the comparison it failed
    return Failure(
        counterexample=counterexample(runner, structure, outcome, dtype, batch, chosen),
        reason=(_not_finite_reason(outcome.comparison, dtype) if outcome.refutes
                else f"{outcome.comparison} exceeds the tolerance"),
        refutes=outcome.refutes,
        replay=replay_command(runner, dtype, structure, batch))


def refute_shape(runner: Runner, structure: Structure, error: ImplementationError, dtype: Format,
                 batch: int) -> Failure:
    """The failure of code that returned another shape than the statement's at ``structure``'s
    sizes (``error``: an ``ImplementationError`` with both shapes)."""
    assert error.got is not None  # one without a returned shape is raised (``_search._drive``)
    sizes = ", ".join(f"{k} = {v}" for k, v in structure.size_map.items())
    return Failure(
        counterexample={
            "sizes": structure.size_map,
            "integers": structure.integer_map,
            "comparison": "implementation shape",
            "expected_shape": list(error.expected),
            "returned_shape": list(error.got),
        },
        reason=(f"the implementation returned shape {tuple(error.got)} where the statement "
                f"has {tuple(error.expected)} (batch first) at {sizes or 'these sizes'}; "
                "it returned the stated shape at other sizes"),
        refutes=True,
        replay=replay_command(runner, dtype, structure, batch))


def refute_raised(runner: Runner, structure: Structure, raised: ImplementationRaised, dtype: Format,
                  batch: int) -> Failure:
    """The failure of code that raised at ``structure``'s inputs (``raised``: an
    ``ImplementationRaised``) and returned values at others: the claim covers these inputs,
    and the code does not compute its value there."""
    inputs = ", ".join(f"{k} = {v}" for k, v in {**structure.size_map,
                                                  **structure.integer_map}.items())
    at = f" ({raised.where})" if raised.where else ""
    return Failure(
        counterexample={
            "sizes": structure.size_map,
            "integers": structure.integer_map,
            "comparison": "implementation raised",
            "exception": raised.exception,
            "raised_at": raised.where or None,
        },
        reason=(f"refuted: the implementation raised {raised.exception}{at} at "
                f"{inputs or 'these inputs'}; it returned values at other inputs"),
        refutes=True,
        replay=replay_command(runner, dtype, structure, batch))


def _not_finite_reason(comparison: str, dtype: Format) -> str:
    side = comparison.split(" vs ")[0]
    where = "float64" if dtype == FLOAT64 else f"float64 and {dtype}"
    return (f"{comparison}: the {side} is NaN or ±∞ in {where} where the statement's exact "
            "value is finite: the code is wrong there, whatever the format")


def counterexample(runner: Runner, structure: Structure, outcome: Outcome, dtype: Format,
                   batch: int, chosen: Profile) -> dict:
    arrays = strategies.fill_batch(runner.plan.theorem, structure, batch)
    assert outcome.failing_row is not None  # the outcome of a failing batch
    instance = strategies.instance_at(arrays, outcome.failing_row)
    instance, outcome = _simplify(runner, structure, arrays, instance, outcome, dtype, batch,
                                  chosen)
    return describe(runner, structure, instance, outcome)


def _simplify(runner: Runner, structure: Structure, arrays: dict, instance: dict,
              outcome: Outcome, dtype: Format, batch: int, chosen: Profile) -> tuple[dict, Outcome]:
    """Shrink the failing row toward round values while it keeps failing (Hypothesis ``find``)."""
    theorem, row = runner.plan.theorem, outcome.failing_row
    assert row is not None  # the outcome of a failing batch
    count = strategies.entry_count(theorem, instance)

    def outcome_for(keep: list[bool]) -> tuple[dict, Outcome]:
        candidate = strategies.simplified(theorem, instance, keep)
        moved = {k: _put_row(v, row, candidate[k]) for k, v in arrays.items()}
        return candidate, decide(runner, structure, batch, dtype, arrays=moved)

    def still_fails(keep: list[bool]) -> bool:
        result = outcome_for(keep)[1]
        return result.failing_row is not None and row in failing_rows(result)

    try:
        keep = find(st_flags(count), still_fails,
                    settings=settings(max_examples=chosen.shrink_examples, database=None,
                                      derandomize=True, deadline=None,
                                      phases=[Phase.generate, Phase.shrink]))
    except NoSuchExample:
        return instance, outcome
    return outcome_for(keep)


def st_flags(count: int) -> st.SearchStrategy[list[bool]]:
    return st.lists(st.booleans(), min_size=count, max_size=count)


def _put_row(values: np.ndarray | int, row: int,
             replacement: np.ndarray | int) -> np.ndarray | int:
    if not isinstance(values, np.ndarray):
        return values
    values = values.copy()
    values[row] = replacement
    return values


def describe(runner: Runner, structure: Structure, instance: dict, outcome: Outcome) -> dict:
    """The failing entry: inputs, sizes, the two compared values and their error in ulps."""
    plan, row = runner.plan, outcome.failing_row
    assert row is not None  # the outcome of a failing batch
    if plan.theorem.at is not None:  # show the point the claim was evaluated at, not the draw
        instance = strategies.instance_at(outcome.inputs, row)
    error = outcome.errors[outcome.comparison][row]
    entry = np.unravel_index(int(np.argmax(error)), error.shape) if error.ndim else ()
    left, right = _compared(outcome, row, entry)
    found: dict[str, Any] = {  # a JSON object
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


def finite_difference_verdict(plan: Plan, instance: dict, structure: Structure, labels: dict,
                              outcome: Outcome, row: int, entry: tuple) -> dict:
    """The central difference at the failing entry, and which compared value lies within its
    uncertainty."""
    difference = finite_difference(plan, instance, labels, structure.size_map)
    assert outcome.comparison is not None  # the outcome of a failing batch
    left, right = outcome.comparison.split(" vs ")
    agrees = [side for side, name in (("lhs", left), ("rhs", right))
              if abs(difference.estimate - float(outcome.reference[name][row][entry]))
              <= difference.uncertainty]
    verdict = "both" if len(agrees) == 2 else (agrees[0] if agrees else "neither")
    return {"value": _round(difference.estimate), "step": _round(difference.step),
            "uncertainty": _round(difference.uncertainty), "agrees_with": verdict}


def _compared(outcome: Outcome, row: int, entry: tuple) -> tuple[object, object]:
    """The two values a comparison set against each other at one entry."""
    name = outcome.comparison
    assert name is not None  # the outcome of a failing batch
    if is_stability(name):
        side = name.split(" in ")[0]
        exact = float64_side(outcome.reference, side)
        assert outcome.low is not None  # a side's stability compares a lower format's values
        return _round(outcome.low[side][row][entry]), _round(exact[row][entry])
    left, right = name.split(" in ")[0].split(" vs ")
    values = outcome.reference if " in " not in name else outcome.low
    assert values is not None  # a comparison "in" a format compares that format's values
    return _round(values[left][row][entry]), _round(values[right][row][entry])


def _round(value: npt.ArrayLike) -> object:  # a JSON value: a number, a word, a list
    if isinstance(value, (int, np.integer)):
        return int(value)
    array = np.asarray(value, dtype=np.float64)
    rounded = np.vectorize(lambda x: float(f"{x:.6g}") if math.isfinite(x) else str(x),
                           otypes=[object])(array) if array.size else array
    return rounded.tolist() if isinstance(rounded, np.ndarray) else rounded


def derivation_fault(failure: Failure) -> str | None:
    """When a derivation disagrees with the closed form, finite differences say which is wrong:
    if they side with the closed form, the fault is ours (compiler or autodiff), not the claim;
    then why, else None."""
    example = failure.counterexample
    verdict = example.get("finite_difference") if example else None
    if verdict is None:
        return None
    if example["comparison"] == "autodiff vs sympy":
        return (f"autodiff and SymPy's derivative disagree (finite differences side "
                f"with: {verdict['agrees_with']}): a derivation is wrong, not the claim")
    if verdict["agrees_with"] == "rhs":
        return (f"{example['comparison']}: finite differences agree with the closed "
                "form, so the derivation is wrong, not the claim")
    return None


def replay_command(runner: Runner, dtype: Format, structure: Structure, batch: int) -> str:
    theorem = runner.plan.theorem
    sizes = ",".join(f"{k}={v}" for k, v in structure.sizes)
    parts = ["attnproof", "replay", theorem.name, "--backend", runner.row.name,
             "--dtype", dtype.name, "--device", runner.device_name, "--mode", runner.mode,
             "--seed", str(structure.seed), "--batch", str(batch), "--sizes", sizes]
    if structure.integers:
        parts += ["--integers", ",".join(f"{k}={v}" for k, v in structure.integers)]
    extra = theorems_argument(theorem)
    parts += ["--theorems", extra] if extra else []
    return shlex.join(parts)
