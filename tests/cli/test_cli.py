"""The ``attnproof`` command: exit codes, reports written, ``list``, ``python -m attnproof``."""

import json
import subprocess
import sys

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
