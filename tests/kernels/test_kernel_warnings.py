"""A kernel's own warnings go to its cells in the report, never flood the terminal; the
terminal ends with one line per failing cell and the command that replays it."""

from __future__ import annotations

import json
import shlex
import warnings

import pytest

from attnproof.cli import main
from attnproof.kernels import _warnings
from attnproof.kernels._check import Cell

NOISY = ["kernels", "--kernel", "tests.kernels.planted:noisy", "--property", "forward",
         "--examples", "5"]


@pytest.mark.parametrize("isolation", [[], ["--in-process"]], ids=["workers", "in-process"])
def test_the_kernels_warnings_are_counted_in_the_report_not_printed(tmp_path, capfd,
                                                                    isolation):
    assert main([*NOISY, *isolation, "--out", str(tmp_path)]) == 0
    out, err = capfd.readouterr()
    assert "RuntimeWarning" not in out + err and "overflow encountered" not in out + err
    assert f"noisy: the kernel raised 5 warnings while checked; listed in {tmp_path}" in out
    (kernel,) = json.loads((tmp_path / "conformance.json").read_text())["kernels"]
    (cell,) = kernel["cells"]
    assert cell["kernel_warnings"] == [{"category": "RuntimeWarning",
                                        "message": "overflow encountered in exp",
                                        "where": cell["kernel_warnings"][0]["where"],
                                        "count": 5}]
    assert cell["kernel_warnings"][0]["where"].startswith("planted.py:")
    assert "5 × RuntimeWarning: overflow encountered in exp" in (
        tmp_path / "conformance.md").read_text()


@pytest.mark.parametrize("isolation", [[], ["--in-process"]], ids=["workers", "in-process"])
def test_a_warning_issued_in_the_callers_name_is_still_the_kernels(tmp_path, capfd,
                                                                    isolation):
    # stacklevel=2 names the checker's line that called the kernel: the call, not the file
    # a warning names, makes it the kernel's
    argv = ["kernels", "--kernel", "tests.kernels.planted:deprecating", "--property",
            "forward", "--examples", "5", *isolation, "--out", str(tmp_path)]
    assert main(argv) == 0
    out, err = capfd.readouterr()
    assert "FutureWarning" not in out + err and "is deprecated" not in out + err
    (kernel,) = json.loads((tmp_path / "conformance.json").read_text())["kernels"]
    (cell,) = kernel["cells"]
    assert [(w["category"], w["message"], w["count"]) for w in cell["kernel_warnings"]] == [
        ("FutureWarning", "calling attention without is_causal is deprecated", 5)]


def test_a_warning_raised_outside_the_kernels_call_is_issued_as_usual(monkeypatch):
    # the checker reading the kernel's output back, through a library of its own, warns: not
    # the kernel's, so neither hidden nor counted against it
    from attnproof.kernels import _call, check_kernel

    from . import planted

    reading = _call.read

    def read_warning(*args, **keywords):
        # named at this line, a file outside attnproof's, as a library's own warning is
        warnings.warn("the checker's own reading", UserWarning, stacklevel=1)
        return reading(*args, **keywords)

    monkeypatch.setattr(_call, "read", read_warning)
    with pytest.warns(UserWarning, match="the checker's own reading"):
        result = check_kernel(planted.noisy, properties=["forward"], dtypes=["float32"],
                              examples=5)
    (cell,) = result.cells
    assert [w["category"] for w in cell.kernel_warnings] == ["RuntimeWarning"]


def test_outside_a_cell_the_kernels_warnings_are_issued_as_in_the_users_code():
    with pytest.warns(RuntimeWarning, match="the kernel's"), _warnings.raised_by_kernel():
        warnings.warn_explicit("the kernel's", RuntimeWarning, "/elsewhere/kernel.py", 7)


def test_the_kernels_warnings_are_counted_by_category_message_and_place():
    cell = Cell("forward", "float32", "cpu", "skipped")
    with _warnings.kept_with(cell):
        for _ in range(2):
            with _warnings.raised_by_kernel():
                warnings.warn_explicit("the kernel's", RuntimeWarning, "/elsewhere/kernel.py", 7)
    assert cell.kernel_warnings == [{"category": "RuntimeWarning", "message": "the kernel's",
                                     "where": "kernel.py:7", "count": 2}]


def test_a_warning_the_user_made_an_error_still_raises():
    cell = Cell("forward", "float32", "cpu", "skipped")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning), _warnings.kept_with(cell), \
                _warnings.raised_by_kernel():
            warnings.warn_explicit("the kernel's", RuntimeWarning, "/elsewhere/kernel.py", 7)


def test_many_distinct_warnings_keep_the_most_frequent_and_count_the_rest():
    cell = Cell("forward", "float32", "cpu", "skipped")
    with _warnings.kept_with(cell), _warnings.raised_by_kernel():
        for line in range(_warnings.KEPT + 5):
            warnings.warn_explicit("w", RuntimeWarning, "/elsewhere/kernel.py", line + 1)
    assert len(cell.kernel_warnings) == _warnings.KEPT + 1
    assert cell.kernel_warnings[-1] == {"category": "other", "message": "5 more distinct warnings",
                                        "where": "", "count": 5}
    assert _warnings.total([cell]) == _warnings.KEPT + 5


def test_each_failing_cell_is_printed_with_a_replay_that_reproduces_it(tmp_path, capsys):
    argv = ["kernels", "--kernel", "tests.kernels.planted:no_max_shift", "--property",
            "row_offset", "--dtype", "float32", "--examples", "5", "--out", str(tmp_path)]
    assert main(argv) == 1
    lines = capsys.readouterr().out.splitlines()
    (failing,) = [i for i, line in enumerate(lines)
                  if line.startswith("no_max_shift row_offset float32 cpu: ❌ fails: ")]
    assert lines[failing - 1] == ("1 failing cell, each with the command that replays it (the "
                                  f"counterexamples in {tmp_path / 'conformance.md'}):")
    replay = lines[failing + 1].strip()
    assert replay.startswith("attnproof replay row_offset --kernel tests.kernels.planted:")
    assert main(shlex.split(replay)[1:]) == 1  # the printed command fails the kernel again
    assert '"status": "fail"' in capsys.readouterr().out


def test_kernels_help_names_every_library_kernel_the_command_accepts(capsys, monkeypatch):
    from attnproof.kernels.library import LIBRARY

    monkeypatch.setenv("COLUMNS", "1000")  # argparse would wrap at a name's hyphen
    with pytest.raises(SystemExit):
        main(["kernels", "--help"])
    assert f"a library kernel ({', '.join(LIBRARY)}) or module:attribute" in capsys.readouterr().out
    assert {"jax", "jax-eager", "torch", "torch-math"} <= set(LIBRARY)


def test_the_kernels_own_merge_is_watched_as_its_forward_is():
    from attnproof.kernels import check_kernel

    from . import planted

    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        result = check_kernel(planted.noisy_merge, properties=["merge"], dtypes=["float32"],
                              examples=5)
    (cell,) = result.cells
    assert cell.status == "conforms", cell
    assert not [w for w in escaped if w.filename.endswith("planted.py")]
    assert [(w["category"], w["where"].split(":")[0]) for w in cell.kernel_warnings] == \
        [("RuntimeWarning", "planted.py")]
