"""Text from a theorem file (a symbol's latex=, a source, a note) is shown, never obeyed: the
PDF compiles without reading the planted file, summary.md holds no HTML, `show` no ESC."""

import shutil
import subprocess
import textwrap

import pytest

from attnproof import _runner
from attnproof.cli import main

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
