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


def test_topics_are_parts_and_theorems_their_numbered_sections():
    report = sample_report()
    for theorem, module in zip(report.theorems, ("alpha", "beta", "beta"), strict=True):
        theorem.origin = f"/elsewhere/theorems/{module}.py"
    report.run["user_theorems"] = []
    latex = render(report)
    parts = [line for line in latex.splitlines() if line.startswith(r"\part")]
    assert parts[:2] == [r"\part{alpha (theorems/alpha.py)}\label{page:0}",
                         r"\part{beta (theorems/beta.py)}\label{page:1}"]
    # what follows the topics is a part of its own, not a section of the last topic
    assert parts[2].startswith(r"\part*{Coverage of the documents}")
    assert latex.index(parts[1]) < latex.index(r"\label{thm:1}") < latex.index(parts[2])
    assert r"\textbf{By topic:} \hyperref[page:0]{alpha} (1), \hyperref[page:1]{beta} (2)" \
        in latex


def test_code_keeps_its_underscores_as_glyphs_and_commands_are_verbatim():
    report = sample_report()
    report.theorems[0].origin = "my_dir/soft_max.py"
    latex = render(report)
    assert r"\item{} \texttt{my\char95\allowbreak{}dir/soft\char95\allowbreak{}max.py}:" in latex
    command = "attnproof prove --theorem softmax_rows --theorems my_dir/soft_max.py"
    assert f"\\begin{{verbatim}}\n{command}\n\\end{{verbatim}}" in latex


@needs_pdflatex
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) missing")
def test_commands_copied_out_of_the_pdf_run_as_printed(tmp_path):
    report = sample_report()
    report.theorems[0].origin = "/elsewhere/theorems/soft_max_rows.py"
    report.run["user_theorems"] = ["wrong_claim", "right_claim"]
    replay = ("attnproof replay wrong_claim --backend numpy --dtype float64 --device cpu "
              "--mode eager --seed 12345 --batch 512 --sizes n_q=2,n_k=3,d_k=4,d_v=5 "
              "--integers block_size=3 --theorems my_theorems/wrong_claims_file.py")
    report.theorems[1].numeric[0].replay = replay
    tex = tmp_path / "report.tex"
    tex.write_text(render(report), encoding="utf-8")
    text = subprocess.run(["pdftotext", str(compile_pdf(tex)), "-"], capture_output=True,
                          text=True, check=True).stdout
    pasted = [" ".join(line.split()) for line in re.sub(r" \\\n\s*", " ", text).splitlines()]
    assert replay in pasted  # broken over lines, each continued by a backslash
    assert "attnproof prove --theorem softmax_rows" in pasted
    assert "attnproof prove --theorem wrong_claim --theorems t/wrong.py" in pasted
    assert "theorems/soft_max_rows.py" in text  # code in the text copies its underscores


def _kernel_results():
    from attnproof.kernels._check import Cell, Conformance, declared
    from tests.kernels import planted

    failing = Cell("forward", "float32", "cpu", "fails", ratio=3.0, cases=4, decided=4,
                   counterexample={"case": '{"n_q":1,"n_k":17,"d_k":8,"d_v":8}', "ratio": 3.0,
                                   "sizes": "n_q=1", "message": "worse | <b> \\end{lstlisting}"},
                   replay="attnproof replay forward --kernel my_kernels:attention_fn "
                          "--dtype float32 --device cpu --case "
                          "'{\"n_q\":1,\"n_k\":17,\"d_k\":8,\"d_v\":8,\"fully_masked\":true}'")
    passing = Cell("forward", "float16", "cpu", "conforms", ratio=1.2, bound_ratio=4.1,
                   cases=9, decided=9)
    skipped = Cell("forward", "bfloat16", "cpu", "skipped", reason="framework not installed")
    # what the checker writes for a kernel declared as the planted ones are
    return [Conformance("k_under_test|<img>", "numpy", declared(planted.correct),
                        [failing, passing, skipped])]


def test_the_kernel_matrix_renders_to_latex_from_the_same_document():
    from attnproof.kernels._matrix import to_latex

    latex = to_latex(_kernel_results())
    assert r"\section*{k\_under\_test$|$$<$img$>$ (numpy)}" in latex
    assert r"\subsection*{forward, float32, cpu: fails}" in latex
    # the marks, spelled in LaTeX (× is Latin-1: inputenc sets it)
    assert r"forward O & \textcolor{false}{$\times$} 3.00× & " in latex
    assert r"\textcolor{good}{$\checkmark$} 1.20× $\cdot$ B 4.1 \textcolor{bad}{\textbf{!}}" \
        in latex
    assert "\\begin{verbatim}\nattnproof replay forward --kernel my_kernels:attention_fn" in latex
    assert "worse | <b> \\end {lstlisting}" in latex


def test_the_kernel_matrix_is_written_as_markdown_latex_and_json(tmp_path):
    from attnproof.kernels._matrix import write

    paths = write(_kernel_results(), tmp_path)
    assert [p.name for p in paths] == ["conformance.md", "conformance.tex", "conformance.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in sorted(paths)]


@needs_pdflatex
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) missing")
def test_the_kernel_matrix_compiles_and_its_replay_copies_whole(tmp_path):
    from attnproof.kernels._matrix import to_latex

    results = _kernel_results()
    tex = tmp_path / "conformance.tex"
    tex.write_text(to_latex(results), encoding="utf-8")
    text = subprocess.run(["pdftotext", str(compile_pdf(tex)), "-"], capture_output=True,
                          text=True, check=True).stdout
    pasted = [" ".join(line.split()) for line in re.sub(r" \\\n\s*", " ", text).splitlines()]
    assert results[0].cells[0].replay in pasted
