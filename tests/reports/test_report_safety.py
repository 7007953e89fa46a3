"""Reports are safe for any text: whatever a results JSON's strings hold, the Markdown keeps its
tables and carries no HTML, the LaTeX compiles, and no file is read into the PDF.

The suite runs a few examples (each compiles a PDF twice); ATTNPROOF_PROFILE=thorough runs
many more.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from attnproof.report import document as doc
from attnproof.report import markdown, terminal, tex
from attnproof.report.figures import Figures
from attnproof.report.results import report_from_json, report_to_json
from attnproof.report.safe_math import is_safe
from attnproof.report.writer import compile_pdf
from tests.cli.samples import sample_report

markdown_it = pytest.importorskip("markdown_it")

THOROUGH = os.environ.get("ATTNPROOF_PROFILE") == "thorough"
# A report holds ~70 strings: shrinking all of them takes minutes, so only the thorough
# profile shrinks; the suite shows a failing example as drawn.
PHASES = list(Phase) if THOROUGH else [Phase.explicit, Phase.reuse, Phase.generate]
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
SECRET_NAME = "planted_secret"

# Pieces a hostile or careless author writes, mixed into arbitrary text below.
HOSTILE = [
    rf"\input{{{SECRET_NAME}}}", rf"\input {SECRET_NAME}", rf"\include{{{SECRET_NAME}}}",
    rf"\openin1={SECRET_NAME} \read1 to\x \x", r"\immediate\write18{touch PWNED}",
    r"\catcode`\^^5c=12", r"^^5cinput{" + SECRET_NAME + "}", r"\csname input\endcsname",
    r"\def\x{\input}", r"\end{document}", r"\end{lstlisting}", r"\\[2pt]", "$", "%", "#", "&",
    "~", "^", "_", "{", "}", "[", "]", "\\", "|", "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>", "](javascript:alert(1))", "```", "`", "*", "# heading",
    "- item", "1. item", "> quote", "&lt;", "\n\n", "\r\n", "\x1b[2J\x1b]0;title\x07", "\x00",
    "\x85", "\x9b31m", "\u202e", "\u2028", "\ud800", "x" * 300, "α β ∑ ᵀ ✓ 🚨",
    "＼input｛" + SECRET_NAME + "｝", "¿ ＄ ％ ＃",
]
texts = st.one_of(st.text(max_size=40), st.sampled_from(HOSTILE),
                  st.lists(st.one_of(st.text(max_size=8), st.sampled_from(HOSTILE)),
                           max_size=6).map("".join))


def _strings_replaced(value, draw):
    """``value`` with every string in it (at any depth, keys aside) drawn anew; statuses stay,
    as the schema admits only their enum values and the results hold them as enums."""
    if isinstance(value, str):
        return draw(texts)
    if isinstance(value, dict):
        return {k: v if k == "status" else _strings_replaced(v, draw) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings_replaced(v, draw) for v in value]
    return value


def _hostile_report(data):
    base = report_to_json(sample_report())
    return report_from_json({**_strings_replaced(base, data.draw), "schema": 3})


def _tables(markdown: str):
    """Each table's rows as lists of cell counts (header first), from a CommonMark parse."""
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(markdown)
    tables, counts = [], None
    for token in tokens:
        if token.type == "table_open":
            counts = []
        elif token.type == "tr_open":
            counts.append(0)
        elif token.type in ("th_open", "td_open"):
            counts[-1] += 1
        elif token.type == "table_close":
            tables.append(counts)
    return tables, tokens


def _html(tokens) -> list[str]:
    """Raw HTML the parse found, at block level or inline."""
    found = [t.content for t in tokens if t.type == "html_block"]
    for token in tokens:
        found += [c.content for c in token.children or [] if c.type == "html_inline"]
    return found


def _no_control_characters(text: str) -> bool:
    return not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) < 0xA0 for c in text)


def _model_tables(section: doc.Section):
    """The document model's tables, in the order the Markdown shows them."""
    tables = [b for b in section.blocks if isinstance(b, doc.Table)]
    return tables + [t for child in section.children for t in _model_tables(child)]


@settings(max_examples=200 if THOROUGH else 25, deadline=None,
          phases=PHASES, suppress_health_check=SLOW)
@given(data=st.data())
def test_markdown_of_any_results_keeps_its_tables_and_holds_no_html(data):
    report, figures = _hostile_report(data), Figures(missing=data.draw(texts))
    summary = markdown.render(report, figures)
    tables, tokens = _tables(summary)
    expected = [t for s in doc.build(report, figures).sections for t in _model_tables(s)]
    assert [[len(t.columns)] * (1 + len(t.rows)) for t in expected] == tables
    assert _html(tokens) == []
    assert _no_control_characters(summary)
    pages = markdown.pages(doc.build(report, figures))
    assert all(re.fullmatch(r"(summary|coverage|topics/[A-Za-z0-9_-]+)\.md", p) for p in pages)
    assert len({p.lower() for p in pages}) == len(pages)  # distinct on any file system
    for page in pages.values():
        assert _html(_tables(page)[1]) == [] and _no_control_characters(page)


@settings(max_examples=200 if THOROUGH else 25, deadline=None,
          phases=PHASES, suppress_health_check=SLOW)
@given(data=st.data())
def test_terminal_view_of_any_results_shows_control_characters(data):
    report = _hostile_report(data)
    for theorem in report.theorems:
        shown = terminal.section(doc.theorem_section(theorem, []))
        assert _no_control_characters(shown)


needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="pdflatex is not installed (CI installs TeX Live)")


def _plant_secret(directory: Path) -> str:
    token = f"SECRET{uuid.uuid4().hex}"
    for name in (f"{SECRET_NAME}.tex", SECRET_NAME):
        (directory / name).write_text(token + "\n", encoding="utf-8")
    return token


def _compiled_text(latex: str, directory: Path) -> str:
    tex_file = directory / "report.tex"
    tex_file.write_text(latex, encoding="utf-8")
    pdf = compile_pdf(tex_file, timeout=60)
    if shutil.which("pdftotext") is None:
        return pdf.read_bytes().decode("latin-1")
    return subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


@needs_pdflatex
@settings(max_examples=40 if THOROUGH else 3, deadline=None,
          phases=PHASES, suppress_health_check=[*SLOW, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_latex_of_any_results_compiles_and_reads_no_file(data, tmp_path_factory):
    directory = tmp_path_factory.mktemp("hostile")
    token = _plant_secret(directory)
    report = _hostile_report(data)
    latex = tex.render(report, Figures(missing=data.draw(texts)))
    assert _no_control_characters(latex)
    text = _compiled_text(latex, directory)
    assert token not in text
    assert not (directory / "PWNED").exists()


@needs_pdflatex
def test_every_hostile_piece_at_once_compiles_and_reads_no_file(tmp_path):
    token = _plant_secret(tmp_path)
    hostile = "".join(HOSTILE)
    report = sample_report()
    for theorem in report.theorems:
        theorem.name = theorem.name + hostile
        theorem.source, theorem.note, theorem.statement_latex = hostile, hostile, hostile
        theorem.definitions_latex = [hostile, rf"A = \input{{{SECRET_NAME}}}"]
        theorem.assumptions = [{"name": hostile, "latex": hostile, "domain": hostile}]
    report.theorems[2].corrects = report.theorems[1].name
    report.errors[0] = report.errors[0].__class__(hostile, hostile, hostile)
    report.partial, report.partial_reason = True, hostile
    text = _compiled_text(tex.render(report), tmp_path)
    assert token not in text and "SECRET" not in text


@needs_pdflatex
def test_a_very_long_name_and_a_blank_line_in_a_note_compile(tmp_path):
    report = sample_report()
    report.theorems[0].name = "n" * 4000
    report.theorems[1].name = "_".join(["part"] * 800)
    report.theorems[0].note = "first paragraph\n\n\nsecond\x1b[31m paragraph\x00"
    assert compile_pdf_text(report, tmp_path).count("second") == 1


def compile_pdf_text(report, directory: Path) -> str:
    return _compiled_text(tex.render(report), directory)


def test_hostile_formulas_are_text_and_sympy_formulas_are_math():
    for latex in (r"\input{/etc/passwd}", "^^5cinput{x}", r"\write18{ls}", r"x^2^3",
                  r"\catcode`\^^5c=12", r"\frac{a}", r"\left( x", "a & b", "x % c", "$x$",
                  r"\begin{matrix} a \\ [x] \end{matrix}", r"\text{\input{x}}", "{" * 100,
                  "α", r"\texttt{\input{x}}", r"\texttt{a_b}", r"\Big\input", r"\big{x}"):
        assert not is_safe(latex), latex
        assert doc.math_or_code(latex) == doc.Code(latex)
    for latex in (r"\frac{\partial A_{i j}}{\partial S_{m n}} = \left(\delta_{j n} - A_{i n}"
                  r"\right) \delta_{i m} A_{i j}",
                  r"\sum_{\substack{0 \leq i \leq n - 1\\0 \leq b \leq d - 1}} G_{i b}",
                  r"\left[\begin{matrix}1 & 0\\0 & 1\end{matrix}\right] \approx "
                  r"\begin{pmatrix} 1.0 & 0 \\ 0 & 1.0 \end{pmatrix}",
                  r"\log{\left(\sum_{j} e^{S_{i j}} \middle|\, M_{i j}\right)}", "x'^{2}",
                  r"\#\text{entries} = n^{2} \in \Theta\left(n^{2}\right)",
                  r"\operatorname{fl}\left(A_{0}\right)\Big|_{n_{k} = 2} > 0",
                  r"\left(\text{from code: }\texttt{notebook\_score\_scaling}\right)"):
        assert is_safe(latex), latex


def test_every_formula_of_the_committed_catalog_report_is_typeset_as_math():
    from attnproof.report import load_results
    report = load_results(Path(__file__).parents[2] / "reports" / "reference" / "results.json")
    formulas = [f for t in report.theorems for f in [t.statement_latex, *t.definitions_latex,
                                                      *(a["latex"] for a in t.assumptions)]]
    assert formulas and all(is_safe(f) for f in formulas)


def test_escaping_shows_control_characters_in_every_target():
    text = "a\x1b[31mb\x00c\x85d\u202ee\nf"
    assert terminal.escape(text) == r"a\x1b[31mb\x00c\x85d\u202ee f"
    assert markdown.escape(text) == r"a\\x1b\[31mb\\x00c\\x85d\\u202ee f"
    assert tex.escape(text) == (r"a$\backslash$x1b{[}31mb$\backslash$x00c$\backslash$x85d"
                                 r"$\backslash$u202ee f")


def test_latex_escapes_what_unicode_folds_into_specials():
    assert tex.escape("＼input｛x｝ ％ ¿") == r"$\backslash$input\{x\} \% {[}U+00BF{]}"


def test_markdown_escapes_what_would_start_a_block_but_not_numbers():
    assert markdown.escape("# not a heading") == r"\# not a heading"
    assert markdown.escape("- not a list") == r"\- not a list"
    assert markdown.escape("1. not a list") == r"1\. not a list"
    assert markdown.escape("-0.5 and 2.0 s") == "-0.5 and 2.0 s"
