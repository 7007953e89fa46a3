"""The pytest plugin, run in a child pytest: records cross from xdist workers to the controller,
only the controller writes, subsets and crashes make a partial report, and nothing else is
touched. The harness here is a stand-in whose checks are faked, so each run takes seconds.
"""

import json
import os
import re

import pytest

pytest.importorskip("xdist")

# Each test starts a child pytest with its own xdist workers: seconds apiece, most of the fast
# tier's time before they moved here.
pytestmark = pytest.mark.slow

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HARNESS = '''
import json, os, signal
import pytest
from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

n = Dim("n")
i = n.index("i")
x = Tensor("x", (n,))
GOOD = Theorem("doubling", Source("doc.txt", "§1", "(1)"), Equals(x[i] + x[i], 2 * x[i]),
               inputs=(x,))
BAD = Theorem("tripling", Source("doc.txt", "§2"), Equals(x[i], 2 * x[i]), inputs=(x,),
              expect="refuted")
CONFIGURATIONS = [("numpy", "float64", "cpu", "eager"), ("numpy", "float32", "cpu", "eager")]


@pytest.mark.parametrize("theorem", [GOOD, BAD], ids=lambda t: t.name)
def test_symbolic(theorem, record_property):
    status = "proved" if theorem is GOOD else "refuted"
    record = {"theorem": theorem.name, "status": status, "method": "fake", "seconds": 0.1}
    record_property("attnproof.symbolic", json.dumps(record))


@pytest.mark.parametrize("theorem", [GOOD, BAD], ids=lambda t: t.name)
@pytest.mark.parametrize(("backend", "dtype", "device", "mode"), CONFIGURATIONS)
def test_numeric(theorem, backend, dtype, device, mode, record_property):
    if os.environ.get("KILL_AT") == f"{theorem.name}-{dtype}":
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("RAISE_AT") == f"{theorem.name}-{dtype}":
        raise RuntimeError("checker exploded")
    status = "passed" if theorem is GOOD else "failed"
    record = {"theorem": theorem.name, "backend": backend, "dtype": dtype, "device": device,
              "mode": mode, "status": status, "instances": 64, "max_error_bits": 1.5}
    record_property("attnproof.numeric", json.dumps(record))


def test_unrelated():
    pass
'''


@pytest.fixture
def child(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_harness=HARNESS)

    def run(*args, env=None):
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=600)

    return run


def _results(pytester, directory="reports/pytest"):
    return json.loads((pytester.path / directory / "results.json").read_text())


def _outcomes(data):
    return {t["name"]: (t["status"], len(t["numeric"])) for t in data["theorems"]}


def test_records_from_xdist_workers_make_one_complete_report(child, pytester):
    result = child("-n", "2")
    result.assert_outcomes(passed=7)
    data = _results(pytester)
    assert (data["partial"], data["partial_reason"]) == (False, "")
    assert _outcomes(data) == {"doubling": ("proved", 2), "tripling": ("refuted", 2)}
    assert data["theorems"][0]["source"] == "doc.txt §1, eq. (1)"
    assert data["run"]["by"] == "pytest"
    written = sorted(p.name for p in (pytester.path / "reports" / "pytest").glob("*.*"))
    # the user's own theorems (run.user_theorems, as `attnproof prove` records them) cover no
    # claim of the documents: no coverage page, as prove writes none for them
    assert data["run"]["user_theorems"] == ["doubling", "tripling"]
    assert written == ["report.tex", "results.json", "summary.md"]
    assert [p.name for p in (pytester.path / "reports" / "pytest" / "topics").iterdir()] == [
        "your-theorems.md"]
    assert sorted(p.name for p in (pytester.path / "reports").iterdir()) == ["pytest"]
    result.stdout.fnmatch_lines(["attnproof: wrote *summary.md"])


@pytest.mark.parametrize("selection", [["-k", "doubling"], ["--attnproof-theorem", "doubling"]],
                         ids=["-k", "--attnproof-theorem"])
def test_a_subset_writes_a_report_that_says_it_is_partial(child, pytester, selection):
    child("-n", "2", *selection)
    data = _results(pytester)
    assert _outcomes(data) == {"doubling": ("proved", 2)}
    assert data["partial"] and data["partial_reason"] == "3 of 6 harness tests did not run"
    assert "**Partial report:** 3 of 6 harness tests did not run" in (
        pytester.path / "reports" / "pytest" / "summary.md").read_text()


def test_a_killed_worker_leaves_a_report_of_what_finished_marked_partial(child, pytester):
    result = child("-n", "2", env={"KILL_AT": "doubling-float32"})
    result.assert_outcomes(passed=6, failed=1)
    data = _results(pytester)
    # The check that died is that theorem's error record, as when an attnproof worker dies.
    assert _outcomes(data) == {"doubling": ("error", 2), "tripling": ("refuted", 2)}
    (lost,) = [r for r in data["theorems"][0]["numeric"] if r["status"] == "error"]
    assert (lost["dtype"], "crashed" in lost["reason"]) == ("float32", True)
    assert data["partial"] and "a worker crashed" in data["partial_reason"]
    assert [e["theorem"] for e in data["errors"]] == ["doubling"]


def test_a_test_that_errors_before_recording_becomes_an_error_record(child, pytester):
    child("-p", "no:xdist", env={"RAISE_AT": "tripling-float64"})
    data = _results(pytester)
    tripling = next(t for t in data["theorems"] if t["name"] == "tripling")
    # its exact counterexample still decides the status; the crash fails the run
    assert (tripling["status"], tripling["ok"]) == ("refuted", False)
    assert [r["reason"] for r in tripling["numeric"] if r["status"] == "error"] == [
        "RuntimeError: checker exploded"]
    assert not data["partial"]


@pytest.mark.parametrize("args", [["-k", "unrelated"], ["--attnproof-report", "none"]])
def test_nothing_is_written_without_records_or_when_disabled(child, pytester, args):
    child(*args)
    assert not (pytester.path / "reports").exists()


def test_the_report_directory_can_be_chosen(child, pytester):
    child("--attnproof-report", "elsewhere", "-k", "symbolic")
    assert _outcomes(_results(pytester, "elsewhere")) == {"doubling": ("proved", 0),
                                                          "tripling": ("refuted", 0)}
    assert not (pytester.path / "reports").exists()



def test_theorem_parametrized_tests_that_record_nothing_stay_out_of_the_report(child, pytester):
    pytester.makepyfile(test_units='''
import pytest
from test_harness import GOOD

@pytest.mark.parametrize("theorem", [GOOD], ids=["unit"])
def test_a_layer(theorem):
    pass
''')
    child("-k", "unit or doubling")
    data = _results(pytester)
    assert _outcomes(data) == {"doubling": ("proved", 2)}
    assert data["partial_reason"] == "3 of 6 harness tests did not run"


USER_THEOREMS = '''
from attnproof import Dim, Equals, Source, Tensor, Theorem, softmax

n = Dim("n")
i, j = n.indices("i j")
x = Tensor("x", (n,))

shift_invariance = Theorem(
    name="softmax_shift_invariance",
    source=Source("my notes", "§1"),
    claim=Equals(softmax(x[i] + 3, i), softmax(x[i], i)),
    inputs=(x,),
)
softmax_is_linear = Theorem(
    name="softmax_is_linear",
    source=Source("my notes", "§2"),
    claim=Equals(softmax(2 * x[i], i), 2 * softmax(x[i], i)),
    inputs=(x,),
    expect="refuted",
)
'''


def test_a_users_theorem_directory_runs_under_xdist_from_an_empty_directory(pytester):
    """The documented case (docs/command-line.md): no conftest, no test file, only a directory
    of theorems."""
    (pytester.path / "theorems").mkdir()  # a user's own package named like ours changes nothing
    (pytester.path / "theorems" / "__init__.py").write_text("")
    (pytester.path / "theorems" / "mine.py").write_text(USER_THEOREMS)
    (pytester.path / "symbolic.py").write_text("raise ImportError('shadowed!')\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider",
                                           "--attnproof-theorems", "theorems",
                                           "-k", "symbolic or numpy or load", timeout=300)
    result.assert_outcomes(passed=2 + 2 * 4 + 1)
    data = _results(pytester)
    assert {t["name"]: t["status"] for t in data["theorems"]} == {
        "softmax_shift_invariance": "proved", "softmax_is_linear": "refuted"}
    # a user's own refuted claim is no erratum of the documents, as in `attnproof prove`
    assert data["run"]["user_theorems"] == ["softmax_is_linear", "softmax_shift_invariance"]
    summary = (pytester.path / "reports" / "pytest" / "summary.md").read_text()
    assert "Errata" not in summary and "softmax" in summary.replace("\\", "")


def test_a_theorem_folder_outside_the_folder_pytest_runs_in_leaves_the_report_there(pytester):
    """No configuration file: pytest would take the rootdir from the option's value too."""
    project, mine = pytester.path / "project", pytester.path / "mine"
    project.mkdir()
    mine.mkdir()
    (mine / "shift.py").write_text(USER_THEOREMS)
    pytester.chdir()
    os.chdir(project)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--attnproof-theorems",
                                           "../mine", "-k", "symbolic", timeout=300)
    result.assert_outcomes(passed=2)
    assert (project / "reports" / "pytest" / "results.json").exists()
    assert not (pytester.path / "reports").exists()


def test_a_false_claim_declared_true_fails_each_record_with_one_line_not_a_traceback(pytester):
    (pytester.path / "mine").mkdir()
    declared_true = USER_THEOREMS.replace('    expect="refuted",\n', "")
    (pytester.path / "mine" / "wrong.py").write_text(declared_true)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--attnproof-theorems",
                                           "mine", "-k", "softmax_is_linear and (symbolic or "
                                           "numpy)", timeout=300)
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 2  # the symbolic record and NumPy's float64 at least
    text = result.stdout.str()
    assert "refuted symbolically, expected to hold" in text
    assert "Traceback" not in text and "def check_" not in text
    assert not re.search(r"_harness\.py:\d+", text)  # no frame of the harness is shown


def test_a_theorem_file_that_does_not_load_fails_the_run_and_names_the_file(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "good.py").write_text(USER_THEOREMS)
    (pytester.path / "mine" / "broken.py").write_text("from attnproof import Nope\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--attnproof-theorems",
                                           "mine", "-k", "symbolic or load", timeout=300)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*broken.py*Nope*"])


GUIDE = os.path.join(REPO, "docs", "command-line.md")  # "Your own theorems under pytest -n auto"


def _documented_example():
    with open(GUIDE, encoding="utf-8") as guide:
        text = guide.read()
    file_text = text.split("cat > my_theorems/shift.py <<'PY'\n")[1].split("\nPY\n")[0]
    command = next(line for line in text.splitlines()
                   if line.startswith("pytest -n auto --attnproof-theorems"))
    return file_text, command.split("#")[0].split()


@pytest.mark.harness  # every backend and format, as the documented command runs it
def test_the_documented_example_passes_from_an_empty_directory(pytester):
    file_text, command = _documented_example()
    (pytester.path / "my_theorems").mkdir()
    (pytester.path / "my_theorems" / "shift.py").write_text(file_text + "\n")
    assert command[:3] == ["pytest", "-n", "auto"]
    result = pytester.runpytest_subprocess(*command[1:], "-p", "no:cacheprovider", timeout=600)
    assert result.ret == 0
    data = _results(pytester)
    assert [(t["name"], t["status"]) for t in data["theorems"]] == [
        ("softmax_shift_invariance", "proved")]
    assert data["theorems"][0]["numeric"], "the numeric checks ran"
