"""The runner: load errors, worker isolation (crash, hang), numeric records, filters, signals.

No test here depends on how fast the machine is: a worker's time limit counts from the moment it
begins a theorem (never its start-up), a test whose theorems must finish within a limit gives
them a limit hundreds of times their work, and a test that kills a hung worker at a short limit
has no other theorem in that run.
"""

import os
import signal

import pytest

from attnproof import _runner, _workers
from attnproof._runner import RunInterrupted, run

from . import theorem_files as files
from .fakes import FakeNumeric

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

# Limits for runs whose good theorems must finish in time: each needs well under 0.1 s of CPU
# after its worker has begun it, so even a machine a hundred times slower than usual keeps them.
GENEROUS_LIMIT = 10.0

CONFIGURATIONS = [("numpy", "float64", "cpu", "eager"), ("jax", "float32", "cpu", "jit")]


def by_name(report):
    return {t.name: t for t in report.theorems}


def test_a_broken_file_is_an_error_and_a_good_theorem_beside_it_still_runs(tmp_path):
    files.write(tmp_path, "good.py", files.TRUE, name="doubling")
    files.write(tmp_path, "broken.py", files.BROKEN)
    report = run([tmp_path], check_numeric=False, jobs=2)
    assert by_name(report)["doubling"].status == "proved"
    assert [e.path for e in report.errors] == [str(tmp_path / "broken.py")]
    assert "SyntaxError" in report.errors[0].message
    assert not report.ok


def test_a_load_error_that_names_a_theorem_becomes_an_error_theorem(tmp_path):
    template = files.TRUE + """
    again = Theorem("{name}", Source("f", "s"), Equals(x[i], x[i]), inputs=(x,))
"""
    files.write(tmp_path, "twice.py", template, name="doubling")
    report = run([tmp_path], check_numeric=False, isolate=False)
    (theorem,) = report.theorems
    assert (theorem.name, theorem.status, theorem.ok) == ("doubling", "error", False)
    assert "declares theorem 'doubling' twice" in report.errors[0].message


def test_a_worker_that_dies_loses_only_its_own_theorem(tmp_path):
    files.write(tmp_path, "good.py", files.TRUE, name="doubling")
    files.write(tmp_path, "dies.py", files.DIES_IN_WORKER, name="fragile")
    report = run([tmp_path], check_numeric=False, jobs=2)
    theorems = by_name(report)
    assert theorems["doubling"].status == "proved"
    assert theorems["fragile"].status == "error"
    assert "exited with code 7" in theorems["fragile"].symbolic.method
    assert [(e.theorem, "code 7" in e.message) for e in report.errors] == [("fragile", True)]
    assert report.partial
    assert report.partial_reason.startswith("1 theorem(s) stopped before finishing: fragile;")


def test_a_dead_worker_is_replaced_and_the_theorems_after_it_still_run(tmp_path):
    files.write(tmp_path, "a_dies.py", files.DIES_IN_WORKER, name="fragile")
    files.write(tmp_path, "b_good.py", files.TRUE, name="doubling")
    files.write(tmp_path, "c_hangs.py", files.HANGS_IN_WORKER, name="stuck")
    files.write(tmp_path, "d_good.py", files.TRUE, name="tripling")
    # a good theorem needs well under 0.1 s of CPU once its worker has begun it
    report = run([tmp_path], check_numeric=False, jobs=1, timeout=GENEROUS_LIMIT)
    statuses = {t.name: t.status for t in report.theorems}
    assert statuses == {"fragile": "error", "doubling": "proved", "stuck": "error",
                        "tripling": "proved"}


def test_a_worker_that_hangs_is_killed_at_its_time_limit(tmp_path):
    files.write(tmp_path, "hangs.py", files.HANGS_IN_WORKER, name="stuck")
    (theorem,) = run([tmp_path], check_numeric=False, jobs=1, timeout=1).theorems
    assert (theorem.name, theorem.status) == ("stuck", "error")
    assert theorem.symbolic.method == ("worker killed: no result within the 1 s limit "
                                       "during loading the theorem file")


def test_a_hung_worker_does_not_hold_up_the_theorems_beside_it(tmp_path):
    files.write(tmp_path, "good.py", files.TRUE, name="doubling")
    files.write(tmp_path, "hangs.py", files.HANGS_IN_WORKER, name="stuck")
    report = run([tmp_path], check_numeric=False, jobs=2, timeout=GENEROUS_LIMIT)
    theorems = by_name(report)
    assert theorems["doubling"].status == "proved"
    assert theorems["stuck"].status == "error"


def test_a_workers_start_up_is_not_charged_to_its_theorem(monkeypatch):
    monkeypatch.setattr(_workers, "STARTUP_ALLOWANCE", 3600.0)
    job = _workers._Job(object(), budget=5.0)
    assert job.deadline - job.assigned == pytest.approx(3605.0)
    job.begun = job.assigned + 100.0
    assert job.deadline - job.assigned == pytest.approx(105.0)

def test_numeric_records_join_the_verdict(tmp_path, monkeypatch):
    fake = FakeNumeric(CONFIGURATIONS)
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    files.write(tmp_path, "good.py", files.TRUE, name="doubling")
    files.write(tmp_path, "false.py", files.FALSE, name="tripling", expect="refuted")
    report = run([tmp_path], isolate=False, profile="quick")
    theorems = by_name(report)
    assert [r.status for r in theorems["doubling"].numeric] == ["passed", "passed"]
    assert [r.status for r in theorems["tripling"].numeric] == ["failed", "failed"]
    assert (theorems["tripling"].status, theorems["tripling"].ok) == ("refuted", True)
    assert {call[-1] for call in fake.calls} == {"quick"}
    assert report.environment["devices"] == ["jax:cpu", "numpy:cpu"]


def test_backend_and_dtype_filters_select_configurations(tmp_path, monkeypatch):
    fake = FakeNumeric(CONFIGURATIONS)
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    files.write(tmp_path, "good.py", files.TRUE, name="doubling")
    run([tmp_path], isolate=False, backends=["jax"])
    run([tmp_path], isolate=False, dtypes=["float64"])
    assert [call[1:3] for call in fake.calls] == [("jax", "float32"), ("numpy", "float64")]


def test_an_exception_in_one_numeric_check_is_that_records_error(tmp_path, monkeypatch):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric(CONFIGURATIONS, "jax"))
    files.write(tmp_path, "good.py", files.TRUE, name="doubling")
    (theorem,) = run([tmp_path], isolate=False).theorems
    assert [r.status for r in theorem.numeric] == ["passed", "error"]
    assert theorem.numeric[1].reason == "RuntimeError: backend exploded"
    assert theorem.status == "error"


def test_theorem_filter_runs_only_the_named_and_marks_the_report_partial(tmp_path):
    files.write(tmp_path, "a.py", files.TRUE, name="first")
    files.write(tmp_path, "b.py", files.TRUE, name="second")
    seen = []
    report = run([tmp_path], theorem_filter=["second"], check_numeric=False, isolate=False,
                 progress=lambda result, done, total: seen.append((result.name, done, total)))
    assert [t.name for t in report.theorems] == ["second"]
    assert seen == [("second", 1, 1)]
    assert report.partial


def test_unknown_names_and_profiles_are_rejected(tmp_path):
    files.write(tmp_path, "a.py", files.TRUE, name="first")
    with pytest.raises(ValueError, match="no theorem named 'nope'"):
        run([tmp_path], theorem_filter=["nope"])
    with pytest.raises(ValueError, match="unknown profile"):
        run([tmp_path], profile="exhaustive")
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        run([tmp_path], jobs=0)


@pytest.mark.parametrize("isolate", [True, False], ids=["workers", "in-process"])
def test_ctrl_c_returns_the_theorems_finished_so_far(tmp_path, isolate):
    files.write(tmp_path, "a.py", files.TRUE, name="first")
    files.write(tmp_path, "b.py", files.TRUE, name="second")

    def interrupt_after_first(result, done, total):
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as caught:
        run([tmp_path], check_numeric=False, isolate=isolate, jobs=1,
            progress=interrupt_after_first)
    report = caught.value.report
    assert [t.name for t in report.theorems] == ["first"]
    assert report.partial


@pytest.mark.parametrize("isolate", [True, False], ids=["workers", "in-process"])
def test_ctrl_c_after_the_last_theorem_returns_the_whole_report(tmp_path, isolate):
    files.write(tmp_path, "a.py", files.TRUE, name="first")

    def interrupt_after_the_last(result, done, total):
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as caught:
        run([tmp_path], check_numeric=False, isolate=isolate, jobs=1,
            progress=interrupt_after_the_last)
    assert caught.value.after_the_last
    assert [t.name for t in caught.value.report.theorems] == ["first"]
    assert caught.value.report.partial_reason == "numeric checks skipped"  # not "interrupted"


def test_sigterm_is_handled_like_ctrl_c_and_keeps_the_finished_theorems(tmp_path):
    files.write(tmp_path, "a.py", files.TRUE, name="first")
    files.write(tmp_path, "b.py", files.TRUE, name="second")

    def terminate_after_first(result, done, total):
        os.kill(os.getpid(), signal.SIGTERM)  # handled before the next theorem starts

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(RunInterrupted) as caught:
        run([tmp_path], check_numeric=False, isolate=False, progress=terminate_after_first)
    assert caught.value.signal == signal.SIGTERM
    assert [t.name for t in caught.value.report.theorems] == ["first"]
    assert caught.value.report.partial_reason.startswith("interrupted after 1 of 2 theorems")
    assert signal.getsignal(signal.SIGTERM) is before  # the run's handler is removed


def test_theorems_from_a_users_directory_are_listed_as_the_users_own(tmp_path):
    files.write(tmp_path, "mine.py", files.FALSE, name="my_claim", expect="refuted")
    report = run([tmp_path], check_numeric=False, isolate=False)
    assert report.run["user_theorems"] == ["my_claim"]
