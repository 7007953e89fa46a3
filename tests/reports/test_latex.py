"""The LaTeX report: escaping of user text, a section per theorem, and a PDF from pdflatex."""

import re
import shutil
import subprocess

import pytest

from attnproof.report.figures import Figures
from attnproof.report.tex import escape, render
from attnproof.report.writer import compile_pdf
from tests.cli.samples import sample_report

HOSTILE = r"a_b & 50% $x$ #1 {y} ~z^2 \end{document} <i> | §6.3 ⟨E⟩ − T·H(p) ≥ F, β=1/T, Kᵀ ✓"
needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="pdflatex is not installed (CI installs TeX Live)")


def test_escape_neutralises_every_latex_special():
    assert escape("a_b & 50% $x$ #1 {y}") == r"a\_b \& 50\% \$x\$ \#1 \{y\}"
    assert escape("~ ^ \\ < > |") == r"\~{} \^{} $\backslash$ $<$ $>$ $|$"


def test_escape_spells_unicode_in_latex():
    assert escape("§6.3 ⟨E⟩ − T·H ≥ F") == r"\S{}6.3 $\langle$E$\rangle$ $-$ T$\cdot$H $\geq$ F"
    assert escape("β Σ é Kᵀ ✓ ½") == r"$\beta$ $\Sigma$ é K$^{T}$ {[}U+2713{]} $\tfrac{1}{2}$"


def test_breakable_escape_lets_long_names_wrap_at_underscores():
    assert escape("a_b", breakable=True) == r"a\_\allowbreak{}b"


def test_one_section_per_theorem_with_statement_and_evidence():
    report = sample_report()
    latex = render(report)
    sections = [line for line in latex.splitlines() if line.startswith(r"\section{")]
    assert len(sections) == len(report.theorems)
    assert sections[1] == (r"\section{\texorpdfstring{\texttt{wrong\char95\allowbreak{}claim}}"
                           r"{wrong\textunderscore{}claim}}\label{thm:1}")
    assert r"$\displaystyle \sum_{j} A_{i j} = 1$" in latex
    assert r"jax & bfloat16 & cpu & jit & passed & 1,280 & 0 & 2.0 & 1.6 & 0.50 s \\" in latex
    assert r"\hyperref[thm:2]{\texttt{right\char95\allowbreak{}claim}} (proved for all sizes)" \
        in latex


def test_listings_hold_ascii_only_and_cannot_be_closed_early():
    report = sample_report()
    report.errors[0] = report.errors[0].__class__("/p", None, "bad \\end{lstlisting} − ✓")
    latex = render(report)
    assert "bad \\end {lstlisting} - [U+2713]" in latex


@needs_pdflatex
def test_hostile_user_text_compiles_to_a_pdf(tmp_path):
    report = sample_report()
    for theorem in report.theorems:
        theorem.source, theorem.note = HOSTILE, HOSTILE
    report.partial, report.partial_reason = True, HOSTILE
    tex = tmp_path / "report.tex"
    tex.write_text(render(report, Figures(missing=HOSTILE)), encoding="utf-8")
    pdf = compile_pdf(tex)
    assert pdf.exists() and pdf.stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.pdf", "report.tex"]


@needs_pdflatex
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) missing")
def test_pdf_text_has_every_theorem_heading(tmp_path):
    tex = tmp_path / "report.tex"
    tex.write_text(render(sample_report()), encoding="utf-8")
    text = subprocess.run(["pdftotext", "-layout", str(compile_pdf(tex)), "-"],
                          capture_output=True, text=True, check=True).stdout
    headings = re.findall(r"^[ \f]*(\d+) +(\w+) *$", text, flags=re.MULTILINE)
    assert headings == [("1", "softmax_rows"), ("2", "wrong_claim"), ("3", "right_claim")]
    assert "SyntaxError: ``` invalid" in text  # listings keep backticks straight
