"""Text from a theorem file (a symbol's latex=, a source, a note) is shown, never obeyed: the
PDF compiles without reading the planted file, summary.md holds no HTML, `show` no ESC. Code in
a theorem file cannot end the run: a file that exits, hangs, crashes or changes directory at
import is an error of that file, and every other file and the catalog are still checked."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from attnproof import _runner
from attnproof.cli import main

from . import theorem_files as files
from .fakes import FakeNumeric

markdown_it = pytest.importorskip("markdown_it")

HOSTILE_FILE = r'''
    from attnproof.symbolic import Dim, Equals, Scalar, Source, Tensor, Theorem
    n = Dim("n", latex=r"\input{planted_secret}")
    i = n.index("i")
    x = Tensor("x", (n,))
    T = Scalar("T", latex=r"\input{planted_secret}\immediate\write18{touch PWNED}")
    hostile = Theorem("hostile", Source("<script>alert(1)</script>", r"\input{planted_secret}"),
                      Equals(T.symbol * x[i] + T.symbol * x[i], 2 * T.symbol * x[i]),
                      inputs=(x, T), expect="holds",
                      note="one\n\n\\input{planted_secret}\x1b[31m\x00 <script>alert(2)</script>")
'''


@pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("pdftotext") is None,
                    reason="pdflatex or pdftotext is not installed")
def test_a_hostile_theorem_file_is_reported_as_text(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric([]))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "planted_secret.tex").write_text("SECRET-CONTENT\n")
    (tmp_path / "theorems").mkdir()
    (tmp_path / "theorems" / "hostile.py").write_text(textwrap.dedent(HOSTILE_FILE))
    argv = ["prove", "--no-catalog", "--theorems", "theorems", "--out", "out", "--in-process",
            "--symbolic-only", "--pdf"]
    assert main(argv) == 0
    pdf_text = subprocess.run(["pdftotext", "out/report.pdf", "-"], capture_output=True,
                              text=True, check=True).stdout
    assert "SECRET" not in pdf_text and r"\input{planted" in pdf_text
    assert not (tmp_path / "PWNED").exists()
    tokens = markdown_it.MarkdownIt("commonmark").parse((tmp_path / "out/summary.md").read_text())
    assert not [t for t in tokens if t.type == "html_block"]
    assert not [c for t in tokens for c in t.children or [] if c.type == "html_inline"]
    capsys.readouterr()
    assert main(["show", "hostile", "--json", "out/results.json"]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x00" not in shown and r"\x1b[31m\x00" in shown


# Each of these ends or stalls the process that imports it; loaded in a worker, each is an error
# of its own file, at the line that did it.
ENDS_THE_PROCESS = {
    "exits_0.py": ("import sys\nsys.exit(0)\n", ":2: SystemExit: 0"),
    "exits_3.py": ("import sys\nsys.exit(3)\n", ":2: SystemExit: 3"),
    "os_exit.py": ("import os\nos._exit(0)\n", ":2: the file's code ended its loading process "
                                               "at import (exited with code 0)"),
    "loops.py": ("x = 1\nwhile True:\n    pass\n", ":2: still loading after the 20 s limit"),
    "base_exception.py": ("raise BaseException('boom')\n", ":1: BaseException: boom"),
    "keyboard_interrupt.py": ("raise KeyboardInterrupt\n", ":1: KeyboardInterrupt"),
    "segfault.py": ("import ctypes\nctypes.string_at(0)\n", ":2: the file's code ended its "
                                                            "loading process at import (died "
                                                            "from signal SIGSEGV)"),
    "changes_directory.py": ("import os\nos.chdir('/')\n", ":2: changed the working directory "
                                                           "at import (to /)"),
}
CATALOG_THEOREM = "notebook_kv_cache_size"


@pytest.mark.slow
def test_a_file_that_exits_hangs_or_crashes_at_import_is_an_error_of_that_file(tmp_path):
    theorems = tmp_path / "theorems"
    theorems.mkdir()
    files.write(theorems, "a_good.py", files.TRUE, name="good")
    for name, (text, _) in ENDS_THE_PROCESS.items():
        (theorems / name).write_text(text)
    completed = subprocess.run(
        [sys.executable, "-m", "attnproof", "prove", "--theorems", "theorems", "--theorem", "good",
         "--theorem", CATALOG_THEOREM, "--symbolic-only", "--timeout", "20", "--jobs", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr
    printed = completed.stdout
    for name, (_, reason) in ENDS_THE_PROCESS.items():
        assert f"error: theorems/{name}{reason}" in printed
    assert "2 theorems: 2 proved; 2 as expected; 8 errors" in printed
    # the default report directory is where the run began, whatever a file did at import
    data = json.loads((tmp_path / "reports/partial/results.json").read_text())
    assert {t["name"] for t in data["theorems"]} == {"good", CATALOG_THEOREM}
    assert len(data["errors"]) == len(ENDS_THE_PROCESS)


def test_a_syntax_error_names_its_line_and_says_what_is_wrong(tmp_path, capsys):
    (tmp_path / "broken.py").write_text(files.BROKEN)
    assert main(["list", "--no-catalog", "--theorems", str(tmp_path / "broken.py"),
                 "--json", str(tmp_path / "none.json")]) == 1
    said = capsys.readouterr().err
    assert f"{tmp_path / 'broken.py'}:2: SyntaxError: invalid syntax" in said


def test_in_process_an_exit_or_a_change_of_directory_at_import_is_still_the_files_error(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric([]))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "theorems").mkdir()
    files.write(tmp_path / "theorems", "a_good.py", files.TRUE, name="good")
    for name in ("exits_3.py", "changes_directory.py"):
        (tmp_path / "theorems" / name).write_text(ENDS_THE_PROCESS[name][0])
    argv = ["prove", "--no-catalog", "--theorems", "theorems", "--in-process", "--symbolic-only"]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    assert "error: theorems/exits_3.py:2: SystemExit: 3" in printed
    assert "error: theorems/changes_directory.py:2: changed the working directory" in printed
    assert Path.cwd() == tmp_path and (tmp_path / "reports/partial/results.json").exists()


@pytest.mark.slow
def test_list_gives_a_file_that_hangs_at_import_its_timeout(tmp_path, capsys):
    (tmp_path / "loops.py").write_text(ENDS_THE_PROCESS["loops.py"][0])
    files.write(tmp_path, "a_good.py", files.TRUE, name="good")
    argv = ["list", "--no-catalog", "--theorems", str(tmp_path), "--timeout", "2",
            "--json", str(tmp_path / "none.json")]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "good" in captured.out
    assert f"{tmp_path / 'loops.py'}:2: still loading after the 2 s limit" in captured.err
