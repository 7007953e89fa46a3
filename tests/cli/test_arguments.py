"""Every value of the command line is checked against what exists before any work starts: an
unknown one is a usage error (exit 2) naming the valid choices and the closest; a run that
would check nothing says so and exits non-zero; nothing is written."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnproof import _commands, _parser, _runner
from attnproof.cli import main

from . import theorem_files as files
from .fakes import FakeNumeric


@pytest.fixture(autouse=True)
def no_numeric(monkeypatch):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric([]))


@pytest.fixture
def theorems(tmp_path):
    directory = tmp_path / "theorems"
    directory.mkdir()
    files.write(directory, "good.py", files.TRUE, name="doubling")
    return directory


def prove(tmp_path, theorems, *extra):
    out = tmp_path / "reports"
    argv = ["prove", "--no-catalog", "--theorems", str(theorems), "--out", str(out),
            "--in-process", *extra]
    return main(argv), out


def usage_error(capsys, code: int, out=None) -> str:
    assert code == 2
    if out is not None:
        assert not out.exists(), "a usage error must come before any work"
    return capsys.readouterr().err


@pytest.mark.parametrize(("option", "typo", "suggestion"), [
    ("--backend", "nmupy", "numpy"),
    ("--dtype", "fp16", "float16"),
    ("--dtype", "bfloat", "bfloat16"),
    ("--device", "gpo", "gpu"),
    ("--mode", "jti", "jit"),
    ("--profile", "thorogh", "thorough"),
])
def test_a_typo_is_a_usage_error_naming_the_choices_and_the_closest(
        tmp_path, theorems, capsys, option, typo, suggestion):
    with pytest.raises(SystemExit) as exited:
        prove(tmp_path, theorems, option, typo)
    error = usage_error(capsys, exited.value.code, tmp_path / "reports")
    assert f"unknown {option[2:]} {typo!r}; did you mean {suggestion!r}?" in error
    assert "choose from" in error


def test_an_unknown_theorem_name_suggests_the_closest(tmp_path, theorems, capsys):
    code, out = prove(tmp_path, theorems, "--theorem", "doublng")
    error = usage_error(capsys, code, out)
    assert "no theorem named 'doublng'; did you mean 'doubling'? (choose from doubling)" in error


@pytest.mark.parametrize(("make", "expected"), [
    (lambda d: d / "missing", "does not exist"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "holds no theorem files"),
    (lambda d: (d / "notes.txt").write_text("x") and d / "notes.txt", "not a Python (.py) file"),
], ids=["missing", "empty", "not-python"])
def test_a_theorem_source_that_cannot_serve_is_a_usage_error(tmp_path, capsys, make, expected):
    source = make(tmp_path)
    with pytest.raises(SystemExit) as exited:
        prove(tmp_path, source)
    assert expected in usage_error(capsys, exited.value.code, tmp_path / "reports")


@pytest.mark.parametrize("values", [
    ("--jobs", "0"), ("--jobs", "two"), ("--timeout", "-1"), ("--time-limit", "nan"),
])
def test_numbers_out_of_range_are_usage_errors(tmp_path, theorems, capsys, values):
    with pytest.raises(SystemExit) as exited:
        prove(tmp_path, theorems, *values)
    assert values[0] in usage_error(capsys, exited.value.code, tmp_path / "reports")


def test_no_catalog_and_no_directory_checks_nothing(tmp_path, capsys):
    code = main(["prove", "--no-catalog", "--out", str(tmp_path / "reports")])
    error = usage_error(capsys, code, tmp_path / "reports")
    assert "nothing to check: --no-catalog without --theorems DIR" in error


def test_files_that_declare_no_theorem_check_nothing(tmp_path, capsys):
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    (helpers / "util.py").write_text("x = 1\n")
    code, out = prove(tmp_path, helpers)
    assert "nothing to check: no theorem declared in" in usage_error(capsys, code, out)


@pytest.mark.parametrize(("extra", "expected"), [
    (("--backend", "numpy", "--mode", "jit"), "no backend offers --backend numpy with --mode jit"),
    (("--backend", "mlx", "--device", "tpu"), "no backend offers --backend mlx with --device tpu"),
    (("--symbolic-only", "--dtype", "float32"), "they mean nothing with --symbolic-only"),
])
def test_filters_that_select_nothing_are_usage_errors(tmp_path, theorems, capsys, extra,
                                                      expected):
    code, out = prove(tmp_path, theorems, *extra)
    assert expected in usage_error(capsys, code, out)


def test_a_device_this_machine_lacks_is_a_usage_error_naming_the_devices_present(
        tmp_path, theorems, capsys, monkeypatch):
    fake = FakeNumeric([("numpy", "float64", "cpu", "eager"), ("jax", "float64", "cpu", "jit")])
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    code, out = prove(tmp_path, theorems, "--device", "gpu")
    assert fake.calls == []
    assert "no device gpu here; devices present: cpu (numpy, jax)" in \
        usage_error(capsys, code, out)


def test_a_filter_that_matches_nothing_here_says_so_and_exits_one(
        tmp_path, theorems, capsys, monkeypatch):
    fake = FakeNumeric([("numpy", "float64", "cpu", "eager")])
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    code, _ = prove(tmp_path, theorems, "--dtype", "float16")
    assert code == 1 and fake.calls == []
    assert "nothing checked numerically: --dtype float16 matched no configuration here" in \
        capsys.readouterr().err


def test_an_output_directory_below_a_file_is_refused_before_any_work(tmp_path, theorems, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = ["prove", "--no-catalog", "--theorems", str(theorems), "--out",
            str(blocker / "reports"), "--in-process"]
    error = usage_error(capsys, main(argv))
    assert f"{blocker} is not a directory" in error


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_output_directory_is_refused_before_any_work(tmp_path, theorems, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    code = main(["prove", "--no-catalog", "--theorems", str(theorems), "--out",
                 str(locked / "reports"), "--in-process"])
    assert "is not writable" in usage_error(capsys, code)


def test_show_suggests_the_closest_theorem(tmp_path, theorems, capsys):
    code = main(["show", "doublin", "--no-catalog", "--theorems", str(theorems),
                 "--json", str(tmp_path / "none.json")])
    assert "did you mean 'doubling'?" in usage_error(capsys, code)


def test_a_subset_run_writes_reports_partial_and_leaves_the_catalog_report(
        tmp_path, theorems, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    catalog_report = tmp_path / "reports" / "summary.md"
    catalog_report.parent.mkdir()
    catalog_report.write_text("the full catalog report")
    code = main(["prove", "--theorems", str(theorems), "--theorem", "doubling", "--in-process"])
    assert code == 0
    assert catalog_report.read_text() == "the full catalog report"
    assert (tmp_path / "reports" / "partial" / "results.json").exists()
    printed = capsys.readouterr().out
    assert "so it wrote reports/partial/; the catalog report in reports/ is unchanged" in printed


def test_a_subset_run_where_no_catalog_report_is_says_there_is_none(tmp_path, theorems, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["prove", "--theorems", str(theorems), "--theorem", "doubling",
                 "--in-process"]) == 0
    printed = capsys.readouterr().out
    assert "is unchanged" not in printed
    assert "there is no catalog report in reports/ yet (`attnproof prove` writes it)" in printed


@pytest.mark.parametrize(("argv", "whole"), [
    ([], True), (["--profile", "quick"], True), (["--theorem", "x"], False),
    (["--no-catalog"], False), (["--backend", "numpy"], False), (["--symbolic-only"], False),
])
def test_only_a_complete_catalog_run_replaces_reports(argv, whole):
    args = _parser.parser().parse_args(["prove", *argv])
    out, interrupted = _commands._destinations(args)
    assert (str(out), str(interrupted)) == (
        "reports" if whole else "reports/partial", "reports/partial")


def test_an_early_ctrl_c_ends_with_one_line_and_no_traceback():
    # Ctrl-C arrives while the command's modules are still being imported
    code = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "attnproof._commands":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
from attnproof.cli import main
sys.exit(main(["prove"]))
"""
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 130
    assert completed.stderr.strip() == ("attnproof: interrupted before any theorem was "
                                        "checked; nothing written")


def test_ctrl_c_while_discovering_ends_with_one_line(tmp_path, theorems, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_commands.symbolic, "discover", interrupted)
    code, out = prove(tmp_path, theorems)
    assert code == 130 and not out.exists()
    assert "interrupted before any theorem was checked" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "expected"), [
    (["--backend", "nmupy"], "unknown backend 'nmupy'; did you mean 'numpy'?"),
    (["--dtype", "fp16"], "unknown dtype 'fp16'; did you mean 'float16'?"),
    (["--device", "cpuu"], "unknown device 'cpuu'; did you mean 'cpu'?"),
], ids=["backend", "dtype", "device"])
def test_replay_values_are_checked_like_those_of_prove(tmp_path, theorems, capsys, extra,
                                                       expected):
    argv = ["replay", "doubling", "--theorems", str(theorems), "--seed", "1", "--batch", "4",
            "--sizes", "n=2", *extra]
    assert expected in usage_error(capsys, main(argv))


def test_replay_of_an_unknown_theorem_suggests_the_closest(tmp_path, theorems, capsys):
    argv = ["replay", "doublin", "--theorems", str(theorems), "--seed", "1", "--batch", "4",
            "--sizes", "n=2"]
    assert "no theorem named 'doublin'; did you mean 'doubling'?" in usage_error(capsys,
                                                                                main(argv))


@pytest.mark.parametrize(("batch", "sizes", "expected"), [
    ("4", "m=2", "--sizes gives no value for the dimension n (the theorem's: n)"),
    ("4", "n=0", "--sizes n=0 is outside 1 to 8, the values the search draws for the "
                 "dimension n"),
    ("4", "n=1000000000", "--sizes n=1000000000 is outside 1 to 8"),
    ("10000000000000", "n=2", "--batch 10000000000000 is outside 1 to 512: no profile's "
                              "search runs such a batch"),
    ("0", "n=2", "--batch 0 is outside 1 to 512"),
], ids=["missing-dimension", "size-zero", "huge-size", "huge-batch", "batch-zero"])
def test_a_replay_batch_that_no_search_runs_is_one_line_naming_the_value(
        tmp_path, theorems, capsys, batch, sizes, expected):
    argv = ["replay", "doubling", "--theorems", str(theorems), "--seed", "1", "--batch", batch,
            "--sizes", sizes]
    error = usage_error(capsys, main(argv))
    assert error.startswith(f"attnproof: cannot replay doubling: {expected}")
    assert len(error.strip().splitlines()) == 1


def test_a_json_path_that_is_a_directory_is_refused_before_any_work(tmp_path, theorems,
                                                                    capsys):
    code, out = prove(tmp_path, theorems, "--json", str(tmp_path))
    assert "is a directory; name the results file" in usage_error(capsys, code, out)


def test_reports_that_cannot_be_written_after_the_run_keep_the_results(
        tmp_path, theorems, capsys, monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_commands, "write_reports", refused)
    code, _ = prove(tmp_path, theorems)
    assert code == 3
    error = capsys.readouterr().err
    assert "could not write the reports to" in error and "Permission denied" in error
    rescue = error.split("the results were saved to ")[1].split(" ")[0]
    data = json.loads(Path(rescue).read_text())
    assert [t["name"] for t in data["theorems"]] == ["doubling"]
    shutil.rmtree(Path(rescue).parent)
