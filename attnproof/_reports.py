"""Writing a report directory: results JSON, Markdown, LaTeX, figures, and optionally the PDF.

The files of one run form one set. Everything is rendered into a staging directory inside the
report directory first (the PDF included); then, holding the directory's lock and with Ctrl-C
and SIGTERM deferred, each file replaces its predecessor by an atomic rename, and whatever an
earlier run left that this run did not produce (a PDF, figures) is removed. So two runs writing
one directory cannot interleave their files, an interrupted or failing render leaves the
previous set whole, and a set never mixes files of two runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import _figures, _markdown, _tex
from ._results import Report, readable_mode, write_atomic, write_json

MARKDOWN_NAME = "summary.md"
LATEX_NAME = "report.tex"
PDF_NAME = "report.pdf"
JSON_NAME = "results.json"
_STAGING_PREFIX = ".attnproof-staging-"


@dataclass
class Written:
    """What was written; ``failures`` are files asked for that could not be produced."""

    paths: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def write_reports(report: Report, out_dir, json_path=None, *, results: bool = True,
                  pdf: bool = False) -> Written:
    """Write the report set into ``out_dir``; ``results=False`` leaves the JSON alone.

    A PDF that cannot be built is a failure (in ``Written.failures``), and no earlier PDF is
    left beside the new reports.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = Written()
    with locked(out_dir):
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=out_dir))
        try:
            staged = _render(report, staging, written, results=results, pdf=pdf)
            json_target = Path(json_path) if json_path else out_dir / JSON_NAME
            with _signals_deferred():
                _install(staged, staging, out_dir, json_target, written)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return written


@contextlib.contextmanager
def locked(directory: Path):
    """Hold the report directory's lock (an exclusive ``flock`` on the directory itself,
    released if the process dies); a second writer waits here until the first has installed
    its whole set."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def _render(report: Report, staging: Path, written: Written, *, results: bool,
            pdf: bool) -> list[str]:
    """Render every file of the set into ``staging``; return the names produced there."""
    figures = _figures.draw(report, staging)
    if figures.missing:
        written.notes.append(figures.missing)
    staged = [_figures.FIGURE_DIR] if (staging / _figures.FIGURE_DIR).exists() else []
    write_atomic(staging / MARKDOWN_NAME, _markdown.render(report, figures))
    write_atomic(staging / LATEX_NAME, _tex.render(report, figures))
    staged += [MARKDOWN_NAME, LATEX_NAME]
    if pdf:
        try:
            compile_pdf(staging / LATEX_NAME)
            staged.append(PDF_NAME)
        except PdfError as error:
            written.failures.append(str(error))
    if results:
        write_json(report, staging / JSON_NAME)
        staged.append(JSON_NAME)
    return staged


def _install(staged: list[str], staging: Path, out_dir: Path, json_target: Path,
             written: Written) -> None:
    """Move the staged set into place, JSON last; remove what an earlier run left."""
    for name in (_figures.FIGURE_DIR, PDF_NAME):
        if name not in staged:
            _remove(out_dir / name, written)
    for name in staged:
        target = json_target if name == JSON_NAME else out_dir / name
        _replace(staging / name, target)
        written.paths.append(target)


def _replace(source: Path, target: Path) -> None:
    """Rename ``source`` over ``target``; a directory swaps with the old one out of the way."""
    if not source.is_dir():
        if source.parent != target.parent and not _same_device(source, target):
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, staged = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                              suffix=".tmp")
            os.close(handle)
            shutil.copyfile(source, staged)
            os.chmod(staged, readable_mode())
            source = staged
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        return
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(source, target)
    shutil.rmtree(old, ignore_errors=True)


def _same_device(source: Path, target: Path) -> bool:
    existing = target.parent
    while not existing.exists():
        existing = existing.parent
    return os.stat(source).st_dev == os.stat(existing).st_dev


def _remove(path: Path, written: Written) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    else:
        return
    written.notes.append(f"removed {path}, left by an earlier run")


@contextlib.contextmanager
def _signals_deferred():
    """Ctrl-C and SIGTERM wait until the set is installed (main thread; else a no-op)."""
    blocked = {signal.SIGINT, signal.SIGTERM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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
            try:
                completed = subprocess.run(command, cwd=tex_path.parent, capture_output=True,
                                           text=True, errors="replace", timeout=timeout)
            except subprocess.TimeoutExpired:
                raise PdfError(f"pdflatex took over {timeout:g} s on {tex_path}") from None
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
