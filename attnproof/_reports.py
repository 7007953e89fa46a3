"""Writing a report directory: results JSON, Markdown, LaTeX, figures, and optionally the PDF.

Everything is rendered before anything is replaced, and each file is replaced atomically, so
an interrupted or failing render leaves the previous report files whole.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import _figures, _markdown, _tex
from ._results import Report, write_atomic, write_json

MARKDOWN_NAME = "summary.md"
LATEX_NAME = "report.tex"
PDF_NAME = "report.pdf"
JSON_NAME = "results.json"


@dataclass
class Written:
    paths: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def write_reports(report: Report, out_dir, json_path=None, *, results: bool = True,
                  pdf: bool = False) -> Written:
    """Write the report files into ``out_dir``; ``results=False`` leaves the JSON alone."""
    out_dir = Path(out_dir)
    figures = _figures.draw(report, out_dir)
    markdown = _markdown.render(report, figures)
    latex = _tex.render(report, figures)
    written = Written()
    if results:
        json_path = Path(json_path) if json_path else out_dir / JSON_NAME
        write_json(report, json_path)
        written.paths.append(json_path)
    for name, text in ((MARKDOWN_NAME, markdown), (LATEX_NAME, latex)):
        write_atomic(out_dir / name, text)
        written.paths.append(out_dir / name)
    if figures.missing:
        written.notes.append(figures.missing)
    if pdf:
        _add_pdf(out_dir / LATEX_NAME, written)
    return written


def _add_pdf(tex_path: Path, written: Written) -> None:
    try:
        written.paths.append(compile_pdf(tex_path))
    except PdfError as error:
        written.notes.append(str(error))


class PdfError(RuntimeError):
    """pdflatex is missing or could not compile the report."""


def compile_pdf(tex_path, timeout: float = 120.0) -> Path:
    """Compile ``tex_path`` with pdflatex in a scratch directory; return the PDF beside it.

    Two passes resolve the table of contents and cross-references. Auxiliary files stay in
    the scratch directory; the PDF replaces the old one only once it is complete.
    """
    tex_path = Path(tex_path).resolve()
    if shutil.which("pdflatex") is None:
        raise PdfError("no PDF: pdflatex is not installed (Debian: texlive-latex-extra)")
    with tempfile.TemporaryDirectory(prefix="attnproof-tex-") as scratch:
        command = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                   f"-output-directory={scratch}", tex_path.name]
        for _ in range(2):
            completed = subprocess.run(command, cwd=tex_path.parent, capture_output=True,
                                       text=True, errors="replace", timeout=timeout)
            if completed.returncode != 0:
                raise PdfError(f"pdflatex failed on {tex_path}:\n{_last_error(completed.stdout)}")
        target = tex_path.with_suffix(".pdf")
        built = Path(scratch) / target.name
        staged = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(built, staged)
        staged.replace(target)
    return target


def _last_error(log: str) -> str:
    """The lines of pdflatex's output from its first error on, which say what went wrong."""
    lines = log.splitlines()
    first = next((n for n, line in enumerate(lines) if line.startswith("!")), len(lines) - 20)
    return "\n".join(lines[max(first, 0): first + 12])
