"""Writing a report directory: results JSON, Markdown, LaTeX, figures, and optionally the PDF.

The set: ``results.json``; the Markdown index ``summary.md`` with its pages, ``topics/`` (a page
per topic) and ``coverage.md``; ``report.tex`` (one document) and ``report.pdf``; ``figures/``.

Results first, then reports. Holding the directory's lock, the results JSON is written at once,
atomically; the reports are then rendered from it into a staging directory inside the report
directory (the PDF included), and each file replaces its predecessor by an atomic rename;
whatever an earlier run left that this run did not produce (a PDF, figures) is removed. So two
runs writing one directory cannot interleave their files, and a set never mixes files of two
runs.

Ctrl-C or SIGTERM (see ``attnproof._signals.Stops``) never loses the results: one that arrives
before the JSON is written leaves the previous set whole (the caller saves the results
elsewhere); one that arrives later stops the rendering, and the new JSON is installed with
whatever was rendered completely, the rest of the old set removed. ``Written`` says which. Staging
directories never outlive a run, and those an earlier run left (killed outright) are removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from attnproof._signals import Stops

from . import document as doc
from . import markdown, tex, view
from .figures import FIGURE_DIR, draw
from .results import Report, readable_mode, write_atomic, write_json

if TYPE_CHECKING:
    from os import PathLike

MARKDOWN_NAME = markdown.INDEX_NAME  # summary.md
TOPICS_DIR = doc.TOPICS  # topics/<module>.md
COVERAGE_NAME = f"{doc.COVERAGE}.md"
LATEX_NAME = "report.tex"
PDF_NAME = "report.pdf"
JSON_NAME = "results.json"
# every file and folder of a set but the results: what a run did not produce is removed
RENDERED_NAMES = (FIGURE_DIR, TOPICS_DIR, COVERAGE_NAME, PDF_NAME, MARKDOWN_NAME, LATEX_NAME)
_STAGING_PREFIX = ".attnproof-staging-"


@dataclass
class Written:
    """What was written; ``failures`` are files asked for that could not be produced.

    ``stopped_by`` is the first signal that arrived while writing (None if none did);
    ``results`` where the results JSON was written (None if it was not); ``not_rendered`` the
    files of the set a signal kept from being rendered.
    """

    paths: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stopped_by: int | None = None
    results: Path | None = None
    not_rendered: list[str] = field(default_factory=list)


def write_reports(report: Report, out_dir: str | PathLike[str],
                  json_path: str | PathLike[str] | None = None, *, results: bool = True,
                  pdf: bool = False, stops: Stops | None = None) -> Written:
    """Write the report set into ``out_dir``; ``results=False`` leaves the JSON alone.

    A PDF that cannot be built is a failure (in ``Written.failures``), and no earlier PDF is
    left beside the new reports. ``stops`` records the signals that arrive meanwhile; a caller
    without one has them delivered again once the writing is done, to its own handlers.
    """
    if stops is None:
        with Stops() as own:
            written = write_reports(report, out_dir, json_path, results=results, pdf=pdf,
                                    stops=own)
        if own.first is not None:
            signal.raise_signal(own.first)
        return written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = Written()
    with locked(out_dir):
        _remove_stale_staging(out_dir, written)
        if results and stops.received:  # before anything was written: the old set stays
            written.stopped_by = stops.first
            return written
        if results:
            json_target = Path(json_path) if json_path else out_dir / JSON_NAME
            write_json(report, json_target)
            written.paths.append(json_target)
            written.results = json_target
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=out_dir))
        staged: list[str] = []
        try:
            _render_unless_stopped(report, staging, written, staged, pdf, stops)
        finally:  # a renderer's bug too: no file of the old set stays beside the new results
            _install(staged, staging, out_dir, written)
            shutil.rmtree(staging, ignore_errors=True)
    written.stopped_by = stops.first
    return written


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the report directory's lock (an exclusive ``flock`` on the directory itself,
    released if the process dies); a second writer waits here until the first has installed
    its whole set."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def _remove_stale_staging(out_dir: Path, written: Written) -> None:
    """Staging directories are made only under the lock, which is held now: any found here
    was left by a run killed outright (SIGKILL, a power cut)."""
    for stale in out_dir.glob(_STAGING_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)
        written.notes.append(f"removed {stale}, left by an earlier run that was killed")


def _render_unless_stopped(report: Report, staging: Path, written: Written, staged: list[str],
                           pdf: bool, stops: Stops) -> None:
    """Render into ``staging`` until done or a signal comes; ``staged`` names what is complete."""
    if not stops.received:
        stops.stopping = True
        try:
            _render(report, staging, written, staged, pdf=pdf)
        except BaseException:
            # a library may turn the KeyboardInterrupt into its own error: the signal decides
            if not stops.received:
                raise
        finally:
            stops.stopping = False
    if stops.received:
        # the figures come first, then the pages, then the index: with the index staged, the
        # figures were all drawn (or none apply) and every page was written
        done = MARKDOWN_NAME in staged
        figures = [] if done else [FIGURE_DIR]
        pages = [] if done else _pages_of(report)
        wanted = figures + pages + [MARKDOWN_NAME, LATEX_NAME] + ([PDF_NAME] if pdf else [])
        written.not_rendered = [name for name in wanted if name not in staged]


def _pages_of(report: Report) -> list[str]:
    """The Markdown pages beside the index that ``report`` has: its topics (one for each
    theorem's module), and the documents' coverage where it holds their theorems."""
    return [TOPICS_DIR] * bool(report.theorems) + \
        [COVERAGE_NAME] * bool(view.document_theorems(report))


def _render(report: Report, staging: Path, written: Written, staged: list[str], *,
            pdf: bool) -> None:
    """Render the files of the set into ``staging``, adding each name to ``staged`` once it
    is complete."""
    figures = draw(report, staging)
    if figures.missing:
        written.notes.append(figures.missing)
    if (staging / FIGURE_DIR).exists():
        staged.append(FIGURE_DIR)
    document = doc.build(report, figures)
    pages = markdown.pages(document)
    index = pages.pop(MARKDOWN_NAME)
    for name, text in pages.items():  # the pages first: an index never links to a missing one
        write_atomic(staging / name, text)
    staged.extend(dict.fromkeys(name.split("/", 1)[0] for name in pages))
    write_atomic(staging / MARKDOWN_NAME, index)
    staged.append(MARKDOWN_NAME)
    write_atomic(staging / LATEX_NAME, tex.text(document))
    staged.append(LATEX_NAME)
    if pdf:
        try:
            compile_pdf(staging / LATEX_NAME)
            staged.append(PDF_NAME)
        except PdfError as error:
            written.failures.append(str(error))


def _install(staged: list[str], staging: Path, out_dir: Path, written: Written) -> None:
    """Move the staged files into place; remove the files of the set this run did not
    produce, so that none of an earlier run is left beside them."""
    for name in RENDERED_NAMES:
        if name not in staged:
            _remove(out_dir / name, written)
    for name in staged:
        _replace(staging / name, out_dir / name)
        written.paths.append(out_dir / name)


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
            source = Path(staged)  # as ``staged``: ``os.replace`` takes either
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


class PdfError(RuntimeError):
    """pdflatex is missing or could not compile the report."""


def compile_pdf(tex_path: str | PathLike[str], timeout: float = 120.0) -> Path:
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
