"""The ``attnproof`` command: exit codes, reports written, ``list``, ``python -m attnproof``."""

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from attnproof import _runner
from attnproof.cli import main

from . import theorem_files as files
from .fakes import FakeNumeric


@pytest.fixture(autouse=True)
def no_numeric(monkeypatch):
    """Numeric checks come from a fake with no configurations, whatever ``numeric`` holds."""
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric([]))


def prove(tmp_path, *extra):
    out = tmp_path / "reports"
    argv = ["prove", "--no-catalog", "--theorems", str(tmp_path / "theorems"),
            "--out", str(out), "--in-process", *extra]
    return main(argv), out


@pytest.fixture
def theorems(tmp_path):
    directory = tmp_path / "theorems"
    directory.mkdir()
    return directory


def test_all_as_expected_exits_zero_and_writes_both_reports(tmp_path, theorems, capsys):
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    files.write(theorems, "false.py", files.FALSE, name="tripling", expect="refuted")
    code, out = prove(tmp_path)
    assert code == 0
    data = json.loads((out / "results.json").read_text())
    assert {t["name"]: t["status"] for t in data["theorems"]} == {
        "doubling": "proved", "tripling": "refuted"}
    assert "doubling" in (out / "summary.md").read_text().replace("\\", "")
    printed = capsys.readouterr().out
    assert "[1/2]" in printed and "[2/2]" in printed
    assert "2 theorems: 1 proved, 1 refuted; 2 as expected; 0 errors" in printed


@pytest.mark.parametrize(("template", "fields"), [
    (files.FALSE, {"name": "tripling", "expect": "holds"}),  # a true claim fails
    (files.TRUE, {"name": "doubling", "expect": "refuted"}),  # a false claim is not refuted
    (files.BROKEN, {}),  # a theorem file in error
])
def test_a_result_against_expectation_exits_one(tmp_path, theorems, template, fields):
    files.write(theorems, "good.py", files.TRUE, name="other")
    files.write(theorems, "claim.py", template, **fields)
    code, out = prove(tmp_path)
    assert code == 1
    data = json.loads((out / "results.json").read_text())
    outcomes = {t["name"]: (t["status"], t["ok"]) for t in data["theorems"]}
    assert outcomes.pop("other") == ("proved", True)
    expected = {"tripling": ("failed", False), "doubling": ("failed", False)}
    assert outcomes == {name: expected[name] for name in outcomes}
    assert bool(data["errors"]) == (template == files.BROKEN)


def test_an_unknown_theorem_name_is_a_usage_error(tmp_path, theorems, capsys):
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    code, out = prove(tmp_path, "--theorem", "nope")
    assert code == 2
    assert "no theorem named 'nope'" in capsys.readouterr().err
    assert not out.exists()


def test_json_path_can_be_chosen(tmp_path, theorems):
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    target = tmp_path / "elsewhere" / "r.json"
    code, out = prove(tmp_path, "--json", str(target))
    assert code == 0 and target.exists() and not (out / "results.json").exists()


def test_list_shows_the_last_known_status(tmp_path, theorems, capsys):
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    listing = ["list", "--no-catalog", "--theorems", str(theorems),
               "--json", str(tmp_path / "reports" / "results.json")]
    assert main(listing) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[-1] == "—"
    prove(tmp_path)
    capsys.readouterr()
    assert main(listing) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert (row[0], row[-2], row[-1]) == ("doubling", "holds", "proved")


def test_list_sees_the_run_just_made_and_the_users_theorems_in_it(tmp_path, theorems, capsys,
                                                                    monkeypatch):
    # a run of one's own files writes reports/partial/; list reads it as show does, and lists
    # the theorems it checked though no --theorems names their folder
    monkeypatch.chdir(tmp_path)
    files.write(theorems, "good.py", files.TRUE, name="doubling_of_mine")
    assert main(["prove", "--no-catalog", "--theorems", str(theorems), "--in-process"]) == 0
    assert (tmp_path / "reports" / "partial" / "results.json").exists()
    capsys.readouterr()
    assert main(["list"]) == 0  # the catalog, and no --theorems
    (row,) = [line.split() for line in capsys.readouterr().out.splitlines()
              if line.startswith("doubling_of_mine")]
    assert (row[-2], row[-1]) == ("holds", "proved")


def test_list_rows_fit_the_terminal(tmp_path, theorems, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    long_source = "a source of a great many words " * 6
    (theorems / "long.py").write_text(
        textwrap.dedent(files.HEADER) + "long = Theorem('long', Source('f', "
        f"{long_source!r}), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,))\n")
    assert main(["list", "--no-catalog", "--theorems", str(theorems),
                 "--json", str(tmp_path / "none.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) < 80 for line in lines)
    assert any("…" in line and line.startswith("long") for line in lines)


def test_list_exits_one_when_a_file_does_not_load(tmp_path, theorems, capsys):
    files.write(theorems, "broken.py", files.BROKEN)
    assert main(["list", "--no-catalog", "--theorems", str(theorems)]) == 1
    assert "broken.py" in capsys.readouterr().err


def test_python_dash_m_runs_the_same_command():
    completed = subprocess.run([sys.executable, "-m", "attnproof", "prove", "--help"],
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0
    assert "--profile" in completed.stdout


def test_importing_attnproof_imports_no_array_backend():
    code = "import sys, attnproof.cli; print(sorted({'jax', 'mlx'} & set(sys.modules)))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=60, check=True)
    assert completed.stdout.strip() == "[]"


def test_report_re_renders_markdown_and_latex_with_every_theorem(tmp_path, theorems, capsys):
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    files.write(theorems, "false.py", files.FALSE, name="tripling", expect="refuted")
    _, out = prove(tmp_path)
    elsewhere = tmp_path / "rendered"
    assert main(["report", "--json", str(out / "results.json"), "--out", str(elsewhere)]) == 0
    assert sorted(p.name for p in elsewhere.glob("*.*")) == ["report.tex", "summary.md"]
    index = (elsewhere / "summary.md").read_text()
    markdown = (elsewhere / "topics" / "your-theorems.md").read_text()  # a user's own files
    latex = (elsewhere / "report.tex").read_text()
    for name in ("doubling", "tripling"):
        assert f"(topics/your-theorems.md#{name})" in index
        assert f"## {name}\n" in markdown
        assert rf"\section{{\texorpdfstring{{\texttt{{{name}}}}}" in latex


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (CI installs TeX Live)")
def test_prove_then_report_compiles_a_pdf(tmp_path, theorems, monkeypatch):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric(
        [("numpy", "float64", "cpu", "eager"), ("numpy", "float32", "cpu", "eager")]))
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    files.write(theorems, "false.py", files.FALSE, name="tripling", expect="refuted")
    _, out = prove(tmp_path)
    assert main(["report", "--json", str(out / "results.json"), "--pdf"]) == 0
    assert (out / "report.pdf").stat().st_size > 1000


def test_report_without_results_is_a_usage_error(tmp_path, capsys):
    missing = tmp_path / "none.json"
    assert main(["report", "--json", str(missing), "--out", str(tmp_path)]) == 2
    assert "run `attnproof prove` first" in capsys.readouterr().err


def test_show_prints_statement_proof_evidence_counterexample_and_replay(
        tmp_path, theorems, monkeypatch, capsys):
    monkeypatch.setattr(_runner, "numeric_api",
                        lambda: FakeNumeric([("numpy", "float64", "cpu", "eager")]))
    files.write(theorems, "false.py", files.FALSE, name="tripling", expect="refuted")
    _, out = prove(tmp_path)
    capsys.readouterr()
    assert main(["show", "tripling", "--json", str(out / "results.json")]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("tripling\n\nstatus:     refuted (expected to be refuted)\n")
    assert "statement:  x_{i} = 2 x_{i}" in shown
    assert "proof:      exact counterexample" in shown
    assert "numpy    float64  cpu     eager  failed        640" in shown
    assert "Counterexample (numpy float64 cpu eager):\n  x[0]: 1.0" in shown
    # which instance each prints: the shrunk row here, the row as drawn by the replay
    assert ("Replay (rebuilds the batch from its seed and evaluates the failing row as drawn, "
            "before it was shrunk toward the round values above):\n  attnproof replay x") in shown
    # a file outside the folder the command runs in: named by its folder and file, to be run
    # from the folder that holds it (never the machine's absolute path)
    assert "attnproof prove --theorem tripling --theorems theorems/false.py" in shown


def test_a_false_claim_declared_to_hold_reads_refuted_with_its_counterexample_at_once(
        tmp_path, theorems, capsys):
    files.write(theorems, "false.py", files.FALSE, name="tripling", expect="holds")
    code, out = prove(tmp_path)
    assert code == 1  # against its declaration: the run fails, as before
    printed = capsys.readouterr().out
    assert ("refuted, though declared to hold; counterexample (exact, symbolic): " in printed)
    assert 'values: {"x[0]": "2"}; lhs_minus_rhs: "-2"' in printed  # the exact one, in the terminal
    assert 'declared with expect="refuted"' in printed
    assert main(["show", "tripling", "--json", str(out / "results.json")]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("tripling\n\nstatus:     FAILED: refuted, though declared to hold\n")
    assert "(expected to hold)" not in shown
    assert 'expect="refuted", and the corrected claim beside it with corrects="tripling"' in shown


def test_a_power_of_a_softmax_is_stated_and_checked_not_an_error(tmp_path, theorems, capsys):
    # softmax(x/T) is not softmax(x)^(1/T): the normalisations differ; the claim is refuted
    (theorems / "power.py").write_text(
        "from attnproof import Dim, Equals, Positive, Scalar, Source, Tensor, Theorem, softmax\n"
        "n = Dim('n')\nj = n.index('j')\nS = Tensor('S', (n,))\n"
        "T = Scalar('T', Positive(1e-3, 1e3))\n"
        "power = Theorem('power', Source('f', 's'), Equals(softmax(S[j], j, 1 / T.symbol), "
        "softmax(S[j], j) ** (1 / T.symbol)), inputs=(S, T), expect='refuted')\n")
    code, out = prove(tmp_path)
    assert code == 0, capsys.readouterr()
    (power,) = json.loads((out / "results.json").read_text())["theorems"]
    assert power["status"] == "refuted"
    assert r"\right)^{\frac{1}{T}}" in power["statement_latex"]


def test_show_a_declared_but_unchecked_theorem_says_how_to_check_it(tmp_path, theorems, capsys):
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    argv = ["show", "doubling", "--no-catalog", "--theorems", str(theorems),
            "--json", str(tmp_path / "none.json")]
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert "statement:  2 x_{i} = 2 x_{i}" in shown  # SymPy has already added x + x
    assert "not checked yet" in shown and "attnproof prove --theorem doubling" in shown
    assert main(argv[:1] + ["nope"] + argv[2:]) == 2


def test_show_finds_a_theorem_of_ones_own_in_the_run_that_checked_it(tmp_path, theorems,
                                                                    monkeypatch, capsys):
    """A run of one's own files writes reports/partial/: `show NAME` looks there too."""
    monkeypatch.setattr(_runner, "numeric_api", lambda: None)
    files.write(theorems, "good.py", files.TRUE, name="doubling_of_mine")
    monkeypatch.chdir(tmp_path)
    assert main(["prove", "--no-catalog", "--theorems", str(theorems), "--in-process"]) == 0
    capsys.readouterr()
    assert main(["show", "doubling_of_mine"]) == 0
    shown = capsys.readouterr()
    assert shown.out.startswith("doubling_of_mine\n")
    assert "reports/partial/results.json" in shown.err
    assert main(["show", "not_mine_either"]) == 2
    assert "--theorems DIR shows its declaration" in capsys.readouterr().err


def test_device_filter_and_partial_reason_reach_the_json(tmp_path, theorems, monkeypatch):
    fake = FakeNumeric([("numpy", "float64", "cpu", "eager"), ("jax", "float64", "gpu", "jit")])
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    code, out = prove(tmp_path, "--device", "gpu")
    assert code == 0
    assert [call[3] for call in fake.calls] == ["gpu"]
    data = json.loads((out / "results.json").read_text())
    assert data["partial"] and data["partial_reason"] == "numeric checks only on devices gpu"
    assert data["run"]["devices"] == ["gpu"]


def test_a_check_in_error_shows_its_reason_and_the_counts_agree(tmp_path, theorems, capsys,
                                                                 monkeypatch):
    fake = FakeNumeric([("numpy", "float64", "cpu", "eager")], raising="numpy")
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    (theorems / "syntax.py").write_text(files.BROKEN)
    code, _ = prove(tmp_path)
    assert code == 1
    printed = capsys.readouterr().out
    reason = "numpy/float64/cpu/eager: RuntimeError: backend exploded"
    progress_line = next(line for line in printed.splitlines() if line.startswith("[1/1]"))
    assert f"numeric 1 error; {reason}" in progress_line
    assert "1 theorems: 1 error; 0 as expected; 2 errors" in printed
    assert f"  error: doubling: {reason}" in printed
    assert f"  error: {theorems / 'syntax.py'}:2: SyntaxError: invalid syntax" in printed
