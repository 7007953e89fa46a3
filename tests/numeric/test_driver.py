"""The driver settles every record: its rules, their order, and that nothing else settles one.

Routes return ``Evidence``; ``numeric/_driver.settle`` alone turns it into a status. These tests
hold the rules of its docstring one by one, check the source so that no route can settle a record
on its own again, and replay failures of several claim kinds from their records' commands.
"""

from __future__ import annotations

import ast
import dataclasses
import shlex
import typing
from pathlib import Path

import pytest

from attnproof import symbolic
from attnproof.numeric import check
from attnproof.numeric._driver import (
    MINIMUM_DECIDED,
    OUTCOME_STATUS,
    CannotDecide,
    Evidence,
    Failure,
    Inconsistent,
    OurFault,
    Outcome,
    Passed,
    Unsupported,
    rerun_command,
    search_for_failure,
    settle,
    would_pass,
)
from attnproof.numeric._record import NumericRecord, NumericStatus
from attnproof.numeric._tolerance import bits
from attnproof.numeric.replay import parse, replay
from attnproof.symbolic import FLOAT32

NUMERIC = Path(__file__).resolve().parents[2] / "numeric"


def _settled(evidence: Evidence, replay_command: str | None = None) -> NumericRecord:
    record = NumericRecord("numpy", "float64", "cpu", "eager", NumericStatus.SKIPPED)
    settle(record, evidence, replay_command)
    return record


def _failure() -> Failure:
    return Failure({"x": "1"}, "lhs vs rhs exceeds the tolerance")


ENOUGH = MINIMUM_DECIDED


@pytest.mark.parametrize("evidence, status", [
    (Evidence(instances=ENOUGH, outcome=Passed("checked")), NumericStatus.PASSED),
    (Evidence(instances=ENOUGH - 1, outcome=Passed("checked")), NumericStatus.TOO_FEW),
    (Evidence(instances=0, outcome=Passed(fixed_inputs="every input given")),
     NumericStatus.PASSED),
    (Evidence(instances=ENOUGH, outcome=_failure()), NumericStatus.FAILED),
    (Evidence(instances=1, outcome=_failure()), NumericStatus.FAILED),
    (Evidence(instances=ENOUGH, outcome=CannotDecide("within rounding")),
     NumericStatus.NOT_DECISIVE),
    (Evidence(instances=ENOUGH, outcome=Inconsistent("strays")), NumericStatus.INCONSISTENT),
    (Evidence(outcome=Unsupported("no model")), NumericStatus.SKIPPED),
    (Evidence(instances=ENOUGH, outcome=OurFault("a derivation is wrong")),
     NumericStatus.ERROR),
], ids=["passed", "too-few", "fixed-inputs", "failed", "failed-on-one", "not-decisive",
        "inconsistent", "skipped", "error"])
def test_each_rule_gives_its_status(evidence, status):
    assert _settled(evidence).status == status


def test_evidence_concludes_one_outcome_and_cannot_be_changed():
    # the outcomes are exclusive by type: evidence holds one, and a route that learns more
    # returns new evidence rather than setting a second conclusion beside the first
    seen = Evidence(instances=ENOUGH, outcome=Passed("checked"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        seen.outcome = _failure()  # type: ignore[misc]
    failed = seen.concluding(_failure()).noting("a note", None)
    assert seen.outcome == Passed("checked") and seen.notes == ()
    assert failed.failure == _failure() and failed.passed is None
    assert failed.notes == ("a note",) and failed.instances == ENOUGH


def test_every_outcome_but_a_pass_has_its_status():
    members = set(typing.get_args(Outcome))
    assert members == {Passed, Failure, CannotDecide, Inconsistent, Unsupported, OurFault}
    assert set(OUTCOME_STATUS) == members - {Passed}
    assert len(set(OUTCOME_STATUS.values())) == len(OUTCOME_STATUS)


def test_our_fault_reads_error_and_keeps_the_counterexample_that_shows_it():
    record = _settled(Evidence(instances=ENOUGH, outcome=OurFault("autodiff is wrong",
                                                                  _failure())), "replay")
    assert record.status == NumericStatus.ERROR and record.reason == "autodiff is wrong"
    assert record.counterexample == {"x": "1"} and record.replay == "replay"


def test_an_inconsistency_shows_where_the_routes_disagree():
    record = _settled(Evidence(instances=ENOUGH, outcome=Inconsistent("strays", {"x": "2"})))
    assert record.status == NumericStatus.INCONSISTENT and record.counterexample == {"x": "2"}


def test_too_few_says_how_many_and_the_minimum():
    record = _settled(Evidence(instances=7, outcome=Passed("checked on 7")))
    assert record.reason.startswith(f"too few instances (7): a record passes only with at "
                                    f"least {MINIMUM_DECIDED} decided instances")
    assert "checked on 7" in record.reason


def test_fixed_inputs_pass_with_their_reason_and_count():
    record = _settled(Evidence(examples=1, instances=2, outcome=Passed(
        "the demo's run", fixed_inputs="fixed inputs: the demo's data")))
    assert record.status == NumericStatus.PASSED and record.instances == 2
    assert record.reason == "the demo's run; fixed inputs: the demo's data"


def test_a_failure_without_its_own_replay_gets_the_drivers():
    record = _settled(Evidence(outcome=_failure()), "attnproof replay t --backend numpy")
    assert record.replay == "attnproof replay t --backend numpy"
    own = Failure({"x": "1"}, "why", replay="attnproof replay t --batch 8")
    assert _settled(Evidence(outcome=own), "other").replay == "attnproof replay t --batch 8"


def test_settle_copies_the_counts_and_error():
    record = _settled(Evidence(examples=3, instances=ENOUGH, undecided=4, worst_ulps=2.0,
                               notes=("a note",)))
    assert (record.examples, record.instances, record.undecided) == (3, ENOUGH, 4)
    assert record.max_error_ulps == 2.0 and record.max_error_bits == bits(2.0)
    assert record.reason == "a note"


def test_would_pass_agrees_with_settle():
    for evidence in (Evidence(instances=ENOUGH), Evidence(instances=1),
                     Evidence(instances=ENOUGH, outcome=CannotDecide("x"))):
        assert would_pass(evidence) == (_settled(evidence).status == NumericStatus.PASSED)


# -- nothing else settles a record -------------------------------------------------------------

# modules that may name a status: the record's own, the driver, and the search's error and skip
# (a route that raised, a configuration absent here), which happen before any evidence exists
MAY_NAME_STATUSES = {"_record.py", "_driver.py", "_search.py"}


def _status_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "NumericStatus":
            found.append(f"{path.name}:{node.lineno} NumericStatus.{node.attr}")
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and part.attr == "status":
                    found.append(f"{path.name}:{node.lineno} assigns .status")
    return found


def test_no_route_names_or_assigns_a_status():
    uses = [use for path in sorted(NUMERIC.rglob("*.py")) if path.name not in MAY_NAME_STATUSES
            for use in _status_uses(path)]
    assert uses == []


def test_the_search_names_only_error_and_skipped():
    uses = _status_uses(NUMERIC / "_search.py")
    assert uses and all(use.endswith(("NumericStatus.ERROR", "NumericStatus.SKIPPED"))
                        or "assigns .status" in use for use in uses), uses


def test_the_status_check_catches_a_route_that_settles(tmp_path):
    planted = tmp_path / "route.py"
    planted.write_text("def check(record):\n    record.status = NumericStatus.PASSED\n",
                       encoding="utf-8")
    assert len(_status_uses(planted)) == 2


# -- every search runs from a seed, and every failure replays ----------------------------------


class _Profile:
    derandomize = False


class _Effort:
    examples = 30


def test_a_search_without_a_seed_reports_the_one_it_drew():
    from hypothesis import strategies as st

    def fails(value):
        return value > 50

    first, seed = search_for_failure(st.integers(0, 100), fails, _Effort, _Profile, None)
    assert isinstance(seed, int)
    again, same = search_for_failure(st.integers(0, 100), fails, _Effort, _Profile, seed)
    assert (again, same) == (first, seed)


def test_the_rerun_command_names_the_configuration_seed_and_profile():
    theorem = symbolic.discover().by_name()["psd_sanity_check_strict"]
    from attnproof.numeric._backends import backend
    from attnproof.numeric._driver import Where

    command = rerun_command(theorem, Where(backend("numpy"), FLOAT32, "cpu", "eager"), 7,
                            "quick")
    assert shlex.split(command) == [
        "attnproof", "replay", "psd_sanity_check_strict", "--backend", "numpy", "--dtype",
        "float32", "--device", "cpu", "--mode", "eager", "--seed", "7", "--profile", "quick"]


# refuted catalog theorems of claim kinds with routes of their own: a shrinking search (linalg,
# limit, permutation), an enumerated domain from the search's seed (IEEE values), and the
# compiled search with its one-batch replay
REFUTED = ["psd_sanity_check_strict", "hard_attention_limit",
           "reordering_keys_values_permutes_output", "normalized_entropy_in_unit_interval",
           "hopfield_fixed_point"]


@pytest.mark.parametrize("name", REFUTED)
def test_every_failure_replays_to_the_same_counterexample(name):
    catalog = symbolic.discover().by_name()
    if name not in catalog:
        pytest.fail(f"{name} is not in the catalog: choose another refuted theorem")
    record = check(catalog[name], "numpy", "float64", "cpu", profile="quick")
    assert record.status == "failed", record.reason
    assert record.replay, "a failed record without a replay command"
    argv = shlex.split(record.replay)
    assert argv[:3] == ["attnproof", "replay", name]
    replayed = replay(parse(argv[2:]))
    if "--batch" in argv:  # the compiled search: one batch, its failing row
        assert replayed["failing_row"] is not None
    else:
        assert replayed["status"] == "failed"
        assert replayed["counterexample"] == record.counterexample


# kinds whose route runs the compiled search on another statement (the witness's identity, the
# built-in >=): their one-batch replay rebuilds that statement (Claim.searched_as), and a
# theorem of a user's file replays with its --theorems argument (a cost claim's too)
PLANTED_FAILURES = [("existence.py", "planted_shift_is_linear_with_the_witness_reversed"),
                    ("kinds_inequality.py", "planted_kl_at_most_zero"),
                    ("kinds_inequality.py", "planted_square_positive"),
                    # a cost's sizes come from the search's seed: an exact count and a growth
                    ("kinds_cost.py", "planted_score_matrix_entries_off_by_t"),
                    ("kinds_cost.py", "planted_standard_attention_memory_linear")]


@pytest.mark.parametrize("file, name", PLANTED_FAILURES)
def test_a_user_theorems_failure_replays_from_its_file(file, name, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the replay names tests/planted/...
    theorem = symbolic.discover([f"tests/planted/{file}"]).by_name()[name]
    record = check(theorem, "numpy", "float64", "cpu", profile="quick")
    assert record.status == "failed", record.reason
    argv = shlex.split(record.replay)
    assert argv[argv.index("--theorems") + 1] == f"tests/planted/{file}"
    replayed = replay(parse(argv[2:]))
    if "--batch" in argv:
        assert replayed["failing_row"] is not None
    else:
        assert replayed["status"] == "failed"
        assert replayed["counterexample"] == record.counterexample


def test_a_search_that_decided_too_few_searches_again():
    from attnproof.numeric import profile
    from attnproof.numeric._driver import TOP_UP_SEARCHES, Judged, search_structures

    chosen = profile("quick")
    theorem = symbolic.discover().by_name()["softmax_jacobian"]  # only its structures are drawn

    few, failing = search_structures(theorem, chosen, chosen.truth, 5, lambda s: s,
                                     lambda outcome: Judged(1))
    assert (failing, few.seed) == (None, 5)
    assert chosen.truth.examples < few.instances == few.examples
    assert few.instances <= (1 + TOP_UP_SEARCHES) * chosen.truth.examples
    enough, _ = search_structures(theorem, chosen, chosen.truth, 5, lambda s: s,
                                  lambda outcome: Judged(MINIMUM_DECIDED))
    assert enough.examples <= chosen.truth.examples  # one search was enough


def test_a_search_with_extremes_runs_the_largest_and_smallest_sizes_where_none_failed():
    from attnproof.numeric import profile
    from attnproof.numeric._driver import Judged, search_structures

    chosen = profile("quick")
    theorem = symbolic.discover().by_name()["softmax_jacobian"]  # only its structures are drawn
    largest = {d.name: d.sizes.high for d in theorem.dims}
    smallest = {d.name: d.sizes.low for d in theorem.dims}
    seen_sizes = []

    def only_largest_fails(structure):
        seen_sizes.append(structure.size_map)
        return Judged(MINIMUM_DECIDED, fails=structure.size_map == largest)

    one_example = type(chosen.truth)(1, chosen.truth.batch)  # too few to reach the largest
    plain, failing = search_structures(theorem, chosen, one_example, 5, lambda s: s,
                                       only_largest_fails)
    assert failing is None and largest not in seen_sizes
    seen_sizes.clear()
    found, (shrunk, outcome) = search_structures(theorem, chosen, one_example, 5, lambda s: s,
                                                 only_largest_fails, extremes=True)
    assert shrunk.size_map == largest and outcome is shrunk  # run once more: the identity here
    assert found.examples == plain.examples + 1  # the largest failed: the smallest not run
    seen_sizes.clear()
    _, none = search_structures(theorem, chosen, one_example, 5, lambda s: s,
                                lambda structure: Judged(
                                    bool(seen_sizes.append(structure.size_map))),
                                extremes=True)
    assert none is None and seen_sizes[-2:] == [largest, smallest]


def test_a_failing_structure_that_passes_when_run_again_is_an_error_not_a_counterexample():
    # Hypothesis itself refuses a drawn example that fails only once (FlakyFailure); an extreme
    # structure is run outside it, and the driver's rerun is what catches it there
    from attnproof.numeric import profile
    from attnproof.numeric._driver import Judged, search_structures

    chosen = profile("quick")
    theorem = symbolic.discover().by_name()["softmax_jacobian"]  # only its structures are drawn
    largest = {d.name: d.sizes.high for d in theorem.dims}
    failed_once = []

    def largest_fails_only_the_first_time(structure):  # not deterministic
        if structure.size_map == largest and not failed_once:
            failed_once.append(structure)
            return Judged(MINIMUM_DECIDED, fails=True)
        return Judged(MINIMUM_DECIDED)

    one_example = type(chosen.truth)(1, chosen.truth.batch)
    with pytest.raises(RuntimeError, match="not deterministic given its seed"):
        search_structures(theorem, chosen, one_example, 5, lambda s: s,
                          largest_fails_only_the_first_time, extremes=True)
    assert failed_once  # the extreme failed, then passed when run again


# -- a structure route as a record: the driver tallies, builds the failure and the description --

def _structure_route(fails_at=None, indecisive=False, reason=True):
    """A route whose run of a structure is its sizes; it fails where they are ``fails_at``,
    decides 40 instances and leaves 2 undecided per run, its error the run's count in ulps."""
    from attnproof.numeric._driver import Judged, StructureRoute

    runs = []

    def run(structure):
        runs.append(structure.size_map)
        return structure.size_map

    return runs, StructureRoute(
        run=run,
        judge=lambda sizes: Judged(40, 2, float(len(runs)), fails=sizes == fails_at,
                                   indecisive=indecisive),
        counterexample=lambda structure, sizes: {"sizes": dict(sizes)},
        failure_reason=lambda seen, example, sizes: f"failed at {example['sizes']}",
        passed=lambda seen: f"passed {seen.examples} runs",
        indecisive_reason=(lambda seen: f"cannot tell after {seen.examples}") if reason else None,
        extremes=True)


def _where():
    from attnproof.numeric import backend
    from attnproof.numeric._driver import Where

    return Where(backend("numpy"), FLOAT32, "cpu", "eager")


def test_a_structure_route_that_passes_reads_as_its_passed_description():
    from attnproof.numeric import profile
    from attnproof.numeric._driver import check_structures

    theorem = symbolic.discover().by_name()["softmax_jacobian"]
    runs, route = _structure_route()
    seen = check_structures(theorem, _where(), profile("quick"), 5, route)
    assert seen.outcome == Passed(f"passed {len(runs)} runs") and seen.examples == len(runs)
    assert (seen.instances, seen.undecided) == (40 * len(runs), 2 * len(runs))
    assert seen.worst_ulps == float(len(runs))  # the largest of every run's, the last here
    assert _settled(seen).status == NumericStatus.PASSED


def test_a_structure_route_that_fails_carries_the_failing_run_s_counterexample():
    from attnproof.numeric import profile
    from attnproof.numeric._driver import check_structures

    theorem = symbolic.discover().by_name()["softmax_jacobian"]
    largest = {d.name: d.sizes.high for d in theorem.dims}
    runs, route = _structure_route(fails_at=largest)  # float32's one draw is not the largest
    seen = check_structures(theorem, _where(), profile("quick"), 5, route)
    assert seen.failure is not None and seen.failure.counterexample == {"sizes": largest}
    assert seen.failure.reason == f"failed at {largest}"
    assert seen.passed is None  # a failure reads as its reason
    assert runs[-1] == largest  # the counterexample is the failing structure's run once more
    assert _settled(seen).status == NumericStatus.FAILED


@pytest.mark.parametrize("reason", [True, False])
def test_an_indecisive_run_makes_the_evidence_undecided_only_where_the_route_says_why(reason):
    from attnproof.numeric import profile
    from attnproof.numeric._driver import check_structures

    theorem = symbolic.discover().by_name()["softmax_jacobian"]
    runs, route = _structure_route(indecisive=True, reason=reason)
    seen = check_structures(theorem, _where(), profile("quick"), 5, route)
    assert seen.outcome == (CannotDecide(f"cannot tell after {len(runs)}") if reason
                            else Passed(f"passed {len(runs)} runs"))
    assert _settled(seen).status == (NumericStatus.NOT_DECISIVE if reason
                                     else NumericStatus.PASSED)


def _evidence_writes(path: Path) -> list[str]:
    """Where a module adds to a route's evidence by hand: an augmented assignment to one of
    the counts the driver tallies (``seen.instances += ...``)."""
    tallied = {"examples", "instances", "undecided"}
    return [f"{path.name}:{node.lineno} {ast.unparse(node.target)} +="
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute)
            and node.target.attr in tallied]


# the routes that search structures: each is a record (``StructureRoute``) the driver runs
STRUCTURE_ROUTES = ("_sides.py", "existence.py", "implication.py", "limit.py", "linalg.py",
                    "series.py", "spectral.py")


@pytest.mark.parametrize("name", STRUCTURE_ROUTES)
def test_a_structure_route_is_a_record_that_tallies_nothing_itself(name):
    path = NUMERIC / "kinds" / name
    source = path.read_text(encoding="utf-8")
    assert "check_structures(" in source and "search_structures(" not in source
    assert _evidence_writes(path) == []


def test_the_evidence_scan_sees_a_hand_tally(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def tally(outcome, seen):\n    seen.instances += 3\n    return False\n")
    assert _evidence_writes(planted) == ["planted.py:2 seen.instances +="]
