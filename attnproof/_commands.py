"""The commands of ``attnproof`` (see ``attnproof.cli`` for the entry point and exit codes, and
``_parser`` for their options, which imports none of this).

Every value is checked before any work starts: against the numeric table (backends, dtypes,
devices, modes), the profiles, the theorems discovered, and the file system (theorem
directories, the output directory). A full catalog run writes ``reports/``; a run of a subset
or of other directories writes ``reports/partial/`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from attnproof import symbolic
from attnproof.numeric import disable_caches, profile_timeout, time_log
from attnproof.symbolic import PROOF_TIME_LIMIT

from . import _arguments as arguments
from . import _index, _runner
from . import _sandbox as sandbox
from ._cache import ValidResults, last_timings
from ._exits import (
    EXIT_INTERRUPTED,
    EXIT_NOT_OK,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_USAGE,
)
from ._journal import Journal, run_key
from ._parser import DEFAULT_JSON, PARTIAL, REPORTS, UsageError
from ._progress import Progress, first_error
from ._runner import RunInterrupted, numeric_api, run
from ._signals import EXIT_BY_SIGNAL, Stops, described
from .numeric import replay as replay_numeric
from .report import (
    JSON_NAME,
    MARKDOWN_NAME,
    PDF_NAME,
    Report,
    ResultsError,
    Written,
    declaration,
    describe,
    load_results,
    result_from_records,
    terminal,
    view,
    write_json,
    write_reports,
)
from .report import document as doc

if TYPE_CHECKING:
    from ._machine import RunDevices
    from ._runner import NumericApi
    from .report import TheoremResult
    from .symbolic import Theorem

    # what ``list`` and ``show`` read: each results file and its report (``_runs``)
    Runs = Sequence[tuple[Path, Report]]


def _catalog_alone(args: argparse.Namespace) -> bool:
    """Whether the arguments name the built-in catalog and no other theorem file."""
    return not args.no_catalog and not args.theorems


def _directories(args: argparse.Namespace) -> list[Path]:
    catalog = [] if args.no_catalog else [symbolic.CATALOG_DIR]
    return catalog + list(args.theorems)


def _discover(args: argparse.Namespace, render: bool = False) -> symbolic.Catalog:
    """The theorems the arguments name; a usage error when they name none at all.

    A user's files are loaded in a worker process (``_sandbox``), with ``--timeout`` seconds
    each, so that nothing they do at import ends this process; ``render`` also renders their
    statements there. ``--in-process`` (for debugging) loads them here: a file that exits,
    hangs or crashes at import then ends or stalls the run, as it would any Python program.
    """
    directories = _directories(args)
    if not directories:
        raise UsageError("nothing to check: --no-catalog without --theorems DIR")
    if (named := _catalog_files_named(args)) is not None:
        return named
    if getattr(args, "in_process", False):
        catalog = symbolic.discover(directories)
    else:
        catalog = sandbox.discover(directories, timeout=_load_timeout(args), render=render)
    if _catalog_alone(args) and not getattr(args, "no_cache", False):
        _index.remember(catalog)  # so that the next misspelt --theorem is answered at once
    if not catalog.theorems and not catalog.errors:
        raise UsageError("nothing to check: no theorem declared in "
                         + ", ".join(str(d) for d in directories))
    return catalog


def _catalog_files_named(args: argparse.Namespace) -> symbolic.Catalog | None:
    """For theorems of the built-in catalog named by ``--theorem``: only the files that declare
    them, found by the catalog's index (loading every file builds every statement: seconds).
    None where the index cannot answer (no index yet or a stale one, ``--no-cache``, other
    directories), and the whole catalog is loaded."""
    if (not _catalog_alone(args) or not getattr(args, "theorem", None)
            or getattr(args, "no_cache", False)):
        return None
    return _index.catalog_declaring(args.theorem)


def _load_timeout(args: argparse.Namespace) -> float:
    """Seconds a theorem file may take to load: ``--timeout``, else (``prove``) the profile's
    limit for a theorem."""
    return args.timeout if args.timeout is not None else profile_timeout(args.profile)


def _check_names(names: Iterable[str] | None, catalog: symbolic.Catalog) -> None:
    known = [t.name for t in catalog.theorems] + [e.theorem for e in catalog.errors if e.theorem]
    for name in names or ():
        if name not in known:
            raise UsageError(arguments.unknown_theorem(name, known))


# -- prove ---------------------------------------------------------------------------------------


def prove_command(args: argparse.Namespace) -> int:
    if args.time_limit is None:  # the parser leaves the prover's default to be read here
        args.time_limit = PROOF_TIME_LIMIT
    _check_numeric_filters(args)
    where = _run_devices(args)
    jobs = where.jobs(args.jobs) if where is not None else args.jobs
    if where is not None and where.accelerators:
        print(f"attnproof: {where.describe(jobs)}", file=sys.stderr)
    # where the reports go is fixed before any theorem file runs (with --in-process one could
    # change the working directory)
    out, out_if_interrupted = (path.absolute() for path in _destinations(args, where))
    if args.json is not None and args.json.is_dir():
        raise UsageError(f"--json {args.json} is a directory; name the results file")
    if args.json is not None:
        args.json = args.json.absolute()
    for directory in {out, out_if_interrupted, *([args.json.parent] if args.json else [])}:
        problem = arguments.unwritable(directory)
        if problem:
            raise UsageError(problem)
    catalog = _discover(args)
    _check_names(args.theorem, catalog)
    if not args.symbolic_only and numeric_api() is None:
        print("attnproof: numeric checks unavailable (numeric.check not found); "
              "symbolic proofs only", file=sys.stderr)
    if args.no_cache:
        disable_caches()
    journal = _open_journal(args, out)
    progress = Progress(expected=last_timings())
    report, stopped, late = _check_theorems(args, catalog, jobs, progress, journal)
    # from here a signal can no longer lose a finished theorem
    with Stops(received=[late] if late else []) as stops:
        progress.close()
        destination = out_if_interrupted if stopped else out
        written = _save(report, args, destination, stopped, stops)
        _end_journal(journal, stopped)
        stops.finish()  # the work is saved: a signal from here ends the process, saying so
        return _exit_code_after_saving(report, written, args, destination, stopped, stops)


def _check_theorems(args: argparse.Namespace, catalog: symbolic.Catalog, jobs: int | None,
                    progress: Progress,
                    journal: Journal) -> tuple[Report, int | None, int | None]:
    """The run's report; the signal that stopped the checks, or None; and the signal that came
    after the last theorem had finished, or None: it stopped nothing, and is taken as one that
    comes while the results are saved."""
    try:
        report = run(
            _directories(args), theorem_filter=args.theorem, backends=args.backend,
            dtypes=args.dtype, devices=args.device, modes=args.mode, profile=args.profile,
            jobs=jobs,
            progress=progress.finished, started=progress.started, planned=progress.planned,
            time_limit=args.time_limit,
            timeout=args.timeout, check_numeric=not args.symbolic_only,
            isolate=not args.in_process, catalog=catalog, journal=journal,
        )
    except RunInterrupted as interrupted:
        if interrupted.after_the_last:
            return interrupted.report, None, interrupted.signal
        return interrupted.report, interrupted.signal, None
    except BaseException:
        progress.close()
        journal.close()
        raise
    return report, None, None


def _open_journal(args: argparse.Namespace, out: Path) -> Journal:
    """This run's journal, beside its results (see ``_journal``), having taken over those of
    earlier runs with the same options that did not finish; ``--no-cache`` takes over none."""
    options = {"profile": args.profile, "backends": args.backend, "dtypes": args.dtype,
               "devices": args.device, "modes": args.mode, "time_limit": args.time_limit,
               "symbolic_only": args.symbolic_only}
    results = args.json if args.json is not None else out / JSON_NAME
    journal = Journal.open(results, run_key(options), recover=not args.no_cache)
    for earlier in journal.earlier:
        if earlier.entries:
            print(f"attnproof: {earlier.path} holds {len(earlier.entries)} result(s) of an "
                  f"earlier run that did not finish ({earlier.who()}); each theorem unchanged "
                  "since is not checked again", file=sys.stderr)
    return journal


def _end_journal(journal: Journal, stopped: int | None) -> None:
    """Say which earlier runs' results this run recovered; once the whole run's results are
    on disk, remove its journal (and those it supersedes), else keep it for the next run."""
    for earlier, count in journal.recoveries():
        print(f"attnproof: recovered {count} finished theorem(s) from the journal "
              f"{earlier.path} ({earlier.who()}); not checked again", file=sys.stderr)
    if stopped is None:
        journal.complete()
        return
    journal.close()
    if journal.path is not None:
        print(f"attnproof: the finished theorems are also in {journal.path}; the next run with "
              "the same options recovers them", file=sys.stderr)


def _save(report: Report, args: argparse.Namespace, out: Path, stopped: int | None,
          stops: Stops) -> Written:
    """Write the results, then the reports, and say what was written (and kept, if a signal
    stopped the run: ``stopped``)."""
    written = _write(report, args, out, stops)
    if stopped is not None:
        print(f"attnproof: {described(stopped)}; the {len(report.theorems)} theorems finished "
              "are kept as a partial report", file=sys.stderr)
        _print_written(written, out, args)
    else:
        _print_summary(report, written, out, args)
    return written


def _exit_code_after_saving(report: Report, written: Written, args: argparse.Namespace, out: Path,
                            stopped: int | None, stops: Stops) -> int:
    """The exit code, the work saved: a signal's if one stopped the run (``stopped``) or came
    after the last theorem (``stops``, which then says in one line what it left)."""
    first = stops.first
    if first is not None:
        print(f"attnproof: {_kept(written, out, first)}", file=sys.stderr)
    signal_number = stopped or first
    if signal_number is not None:
        return EXIT_BY_SIGNAL.get(signal_number, EXIT_INTERRUPTED)
    return _exit_code(report, written, args)


def _kept(written: Written, out: Path, signal_number: int) -> str:
    """One line: what a signal that came while the results were saved left behind."""
    how = described(signal_number)
    if written.results is None:
        return (f"{how} before the results were written; the previous report set in {out} is "
                f"unchanged, and this run's results were saved to {written.paths[0]}")
    if written.not_rendered:
        pdf = " --pdf" if PDF_NAME in written.not_rendered else ""
        return (f"{how} while rendering the reports; {written.results} holds the complete "
                f"results; not rendered: {', '.join(written.not_rendered)} (`attnproof report "
                f"--json {written.results}{pdf}` renders them)")
    return f"{how} after the reports were written; the report set in {out} is complete"


def replay_command(args: argparse.Namespace) -> int:
    """``attnproof replay``, its values checked first like those of ``prove``; with
    ``--kernel``, one case of the kernel checker (the same command for every counterexample)."""
    if args.kernel is not None or args.case is not None:
        return _replay_kernel_case(args)
    for what, value, choices in (("backend", args.backend, arguments.backend_names()),
                                 ("dtype", args.dtype, arguments.dtype_names()),
                                 ("mode", args.mode, arguments.mode_names())):
        if value is not None and value not in choices:
            raise UsageError(arguments.unknown(what, value, choices))
    try:
        arguments.device(args.device)
    except argparse.ArgumentTypeError as error:
        raise UsageError(str(error)) from None
    for source in args.theorems or ():
        if problem := symbolic.source_problem(source):
            raise UsageError(problem)
    catalog = symbolic.discover(args.theorems) if args.theorems else symbolic.discover()
    _check_names([args.theorem], catalog)
    try:
        return replay_numeric.run(args)
    except ValueError as error:  # --sizes or --integers that do not parse, or do not fit
        raise UsageError(f"cannot replay {args.theorem}: {error}") from None


def _replay_kernel_case(args: argparse.Namespace) -> int:
    """``attnproof replay PROPERTY --kernel SPEC --dtype D --device X --case JSON``: the kernel
    checker's replay, which checks the kernel, property, device and case itself."""
    from .kernels import cli as kernels_cli
    from .numeric import replay

    if args.kernel is None or args.case is None:
        raise UsageError("a kernel's case is replayed with both --kernel and --case")
    numeric_only = [f"--{name}" for name in ("mode", "seed", "batch", "sizes")
                    if getattr(args, name) is not None]
    numeric_only += ["--backend"] if args.backend != replay.DEFAULT_BACKEND else []
    if numeric_only or args.integers or args.theorems or args.profile:
        raise UsageError(f"{', '.join(numeric_only) or '--integers, --theorems, --profile'}: "
                         "for a theorem's record, not a kernel's case")
    return kernels_cli.run(argparse.Namespace(
        kernel=[args.kernel], property=[args.theorem], dtype=[args.dtype],
        device=[args.device], examples=kernels_cli.DEFAULT_EXAMPLES, out=None, budget=None,
        case=args.case))


def _check_numeric_filters(args: argparse.Namespace) -> None:
    filters = (args.backend, args.dtype, args.device, args.mode)
    if args.symbolic_only and any(filters):
        raise UsageError("--backend, --dtype, --device and --mode choose numeric checks; "
                         "they mean nothing with --symbolic-only")
    problem = (arguments.nothing_selected(*filters) if any(filters) else None) \
        or arguments.uninstalled(args.backend)
    if problem:
        raise UsageError(problem)


def _run_devices(args: argparse.Namespace) -> RunDevices | None:
    """The devices this run checks on (None with --symbolic-only): a device word that names
    no device present is a usage error naming those present. A backend that cannot start here
    is said in one line and left out; when it is every backend asked for, nothing is run."""
    api = _runner.numeric_api()  # the runner's, which tests replace with a fake
    if args.symbolic_only or api is None:
        return None
    from attnproof.numeric import DeviceError

    from ._machine import run_devices

    _leave_out_backends_that_cannot_start(api, args.backend)

    try:
        return run_devices(api.available_configurations(None), args.backend, args.device)
    except DeviceError as error:
        raise UsageError(str(error)) from None


def _leave_out_backends_that_cannot_start(api: NumericApi,
                                          chosen: Collection[str] | None) -> None:
    """One line for each backend the run would use that cannot start here (a ``JAX_PLATFORMS``
    this machine cannot serve, say); a usage error when no backend asked for can start."""
    failed = {name: reason for name, reason in api.backends_that_cannot_start().items()
              if chosen is None or name in chosen}
    if chosen is not None and set(chosen) <= set(failed):
        raise UsageError(f"nothing to check: {'; '.join(failed.values())}")
    for reason in failed.values():
        print(f"attnproof: {reason}; its numeric checks are left out of this run",
              file=sys.stderr)


def _destinations(args: argparse.Namespace,
                  where: RunDevices | None = None) -> tuple[Path, Path]:
    """Where the report goes when the run completes, and when it is interrupted.

    Only a complete run of the whole catalog, with every check, replaces ``reports/``;
    anything less goes to ``reports/partial/``, unless ``--out`` names a directory. A run
    that uses an accelerator writes beside the CPU run, in ``reports/gpu/`` (and its
    ``partial/``), never over it.
    """
    if args.out is not None:
        return args.out, args.out
    base = REPORTS
    if where is not None and where.folder() is not None:
        base = REPORTS / cast(str, where.folder())  # not None, just checked: folder() is pure
    whole = not (args.no_catalog or args.theorems or args.theorem or args.symbolic_only
                 or any((args.backend, args.dtype, args.device, args.mode)))
    return (base if whole else base / "partial"), base / "partial"


def _write(report: Report, args: argparse.Namespace, out: Path, stops: Stops) -> Written:
    """Write the report set; if the file system refuses after all (a full disk, permissions
    changed during the run), or a signal came before the results were written, the results
    are saved in a fresh temporary directory instead."""
    try:
        with time_log.phase("report"):
            written = write_reports(report, out, args.json, pdf=args.pdf, stops=stops)
    except OSError as error:
        rescue = _rescue(report)
        written = Written([rescue])
        written.failures.append(f"could not write the reports to {out} ({error}); the results "
                                f"were saved to {rescue} (`attnproof report --json {rescue} "
                                "--out DIR` renders them)")
        return written
    if written.stopped_by is not None and written.results is None:
        written.paths.append(_rescue(report))
    return written


def _rescue(report: Report) -> Path:
    """The results, saved in a fresh temporary directory."""
    rescue = Path(tempfile.mkdtemp(prefix="attnproof-results-")) / JSON_NAME
    write_json(report, rescue)
    return rescue


def _exit_code(report: Report, written: Written, args: argparse.Namespace) -> int:
    if written.failures:
        return EXIT_OUTPUT
    if not report.ok:
        return EXIT_NOT_OK
    if _numeric_filter_matched_nothing(report, args):
        return EXIT_NOT_OK
    return EXIT_OK


def _numeric_filter_matched_nothing(report: Report, args: argparse.Namespace) -> bool:
    filters = (args.backend, args.dtype, args.device, args.mode)
    if not any(filters) or any(t.numeric for t in report.theorems):
        return False
    chosen = " ".join(f"--{label} {' '.join(values)}" for label, values in
                      zip(("backend", "dtype", "device", "mode"), filters, strict=True) if values)
    print(f"attnproof: nothing checked numerically: {chosen} matched no configuration here",
          file=sys.stderr)
    return True


def _print_summary(report: Report, written: Written, out: Path,
                   args: argparse.Namespace) -> None:
    counts = [f"{n} {s}" for s, n in view.status_counts(report)]
    as_expected = sum(t.ok for t in report.theorems)
    errors = _error_lines(report)
    print(f"\n{len(report.theorems)} theorems: {', '.join(counts) or 'none'}; "
          f"{as_expected} as expected; {len(errors)} error{'' if len(errors) == 1 else 's'}")
    for t in view.inconsistent(report):
        print(f"  INCONSISTENT: {terminal.escape(t.name)}: two routes disagree (a bug in the "
              "checker, the compiler or the implementation)")
    for line in errors:
        print(f"  error: {terminal.escape(line)}")
    if report.partial:
        print(f"partial report: {terminal.escape(report.partial_reason)}")
    _print_written(written, out, args)


def _error_lines(report: Report) -> list[str]:
    """One line per error, each with its reason: every file or worker error, then every
    theorem in error that none of those already explains (a check that raised)."""
    lines = [error.message.splitlines()[0] if error.message else error.path
             for error in report.errors]
    explained = {error.theorem for error in report.errors if error.theorem}
    for theorem in report.theorems:
        if theorem.status == "error" and theorem.name not in explained:
            lines.append(f"{theorem.name}: {first_error(theorem) or 'in error'}")
    return lines


def _print_written(written: Written, out: Path | None = None,
                   args: argparse.Namespace | None = None) -> None:
    print("wrote " + ", ".join(str(p) for p in written.paths))
    if args is not None and args.out is None and out == PARTIAL.absolute():
        # a catalog report to leave unchanged is there only once the whole catalog has run
        there = any((REPORTS / name).exists() for name in (JSON_NAME, MARKDOWN_NAME))
        kept = (f"the catalog report in {REPORTS}/ is unchanged" if there
                else f"there is no catalog report in {REPORTS}/ yet (`attnproof prove` writes it)")
        print(f"note: this run is not a complete run of the whole catalog, so it wrote {PARTIAL}/; "
              f"{kept} (--out DIR writes elsewhere)")
    for note in written.notes:
        print(f"note: {note}")
    for failure in written.failures:
        print(f"attnproof: {failure}", file=sys.stderr)


# -- report --------------------------------------------------------------------------------------


def report_command(args: argparse.Namespace) -> int:
    report = _read(args.json)
    if report is None:
        return EXIT_USAGE
    out = args.out if args.out is not None else args.json.parent
    problem = arguments.unwritable(out)
    if problem:
        raise UsageError(problem)
    with Stops() as stops:
        written = write_reports(report, out, results=False, pdf=args.pdf, stops=stops)
    _print_written(written)
    if written.stopped_by is not None:
        unrendered = ", ".join(written.not_rendered) or "nothing"
        _complain(f"{described(written.stopped_by)} while rendering the reports; not rendered: "
                  f"{unrendered}; the results in {args.json} are unchanged")
        return EXIT_BY_SIGNAL[written.stopped_by]
    return EXIT_OUTPUT if written.failures else EXIT_OK


def _read(path: Path, valid: ValidResults | None = None) -> Report | None:
    """The results at ``path``, or None after saying why they cannot be read."""
    try:
        return load_results(path) if valid is None else valid.load(path)
    except FileNotFoundError:
        _complain(f"no results at {path}; run `attnproof prove` first")
    except ResultsError as error:
        _complain(str(error))
    return None


def _complain(message: str) -> None:
    print(f"attnproof: {terminal.escape(message)}", file=sys.stderr)


# -- list ----------------------------------------------------------------------------------------


def list_command(args: argparse.Namespace) -> int:
    runs = _runs(args.json)
    if runs is None:
        return EXIT_USAGE
    declared, errors = _declared(args)
    # theorems a run checked that no directory here declares (a user's own, run without
    # --theorems): listed from their results
    latest = _latest_results(runs)
    names = {name for name, _, _ in declared}
    checked = [(t.name, t.source or "—", t.expect or "—") for t in latest.values()
               if t.name not in names]
    rows = [(*row, latest[row[0]].status if row[0] in latest else "—")
            for row in declared + checked]
    titles = ("theorem", "source", "expect", "last status")
    columns = tuple(doc.Column(title) for title in titles)
    print(terminal.table(columns, _fitted(rows, titles, column=1)))
    for error in errors:
        _complain(f"error: {error}")
    return EXIT_NOT_OK if errors else EXIT_OK


def _declared(args: argparse.Namespace) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(name, source, expectation) of each theorem the arguments name, and the errors of their
    files: the catalog's from its index (``_index``: no statement is built), any other
    directory's loaded."""
    if _catalog_alone(args):
        index = _index.catalog_index()
        return ([(t["name"], t["source"], t["expect"]) for t in index.theorems],
                [error["message"] for error in index.errors])
    catalog = _discover(args)
    return ([(t.name, str(t.source), t.expect) for t in catalog.theorems],
            [error.message for error in catalog.errors])


def _runs(json_path: Path) -> list[tuple[Path, Report]] | None:
    """The results ``list`` and ``show`` read, in the order they are read: ``json_path``, then,
    where it is the default, every other run under reports/ (reports/partial/, a GPU run's),
    newest first. None when ``json_path`` is there but unreadable (already said why)."""
    runs, valid = [], ValidResults()
    if json_path.exists():
        report = _read(json_path, valid)
        if report is None:
            return None
        runs.append((json_path, report))
    if json_path == DEFAULT_JSON:
        others = sorted((p for p in REPORTS.glob(f"**/{JSON_NAME}") if p != DEFAULT_JSON),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for path in others:
            try:
                runs.append((path, valid.load(path)))
            except (ResultsError, OSError):
                continue
    valid.save()
    return runs


def _latest_results(runs: Runs) -> dict[str, TheoremResult]:
    """Each theorem's result in the first of ``runs`` that checked it (the order ``show``
    reads them in), by name."""
    latest: dict[str, TheoremResult] = {}
    for _, report in runs:
        for t in report.theorems:
            latest.setdefault(t.name, t)
    return latest


def _fitted(rows: Sequence[tuple[str, ...]], titles: tuple[str, ...],
            column: int) -> list[tuple[str, ...]]:
    """``rows`` with the text of ``column`` (the long one) cut with an ellipsis so that each
    row, padded under ``titles`` two spaces apart, fits the terminal's width."""
    width = shutil.get_terminal_size().columns
    others = sum(max(len(r[i]) for r in [titles, *rows])
                 for i in range(len(titles)) if i != column)
    room = max(12, width - 1 - 2 * (len(titles) - 1) - others)
    return [tuple(_cut(text, room) if i == column else text for i, text in enumerate(row))
            for row in rows]


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[:room - 1] + "…"


# -- show ----------------------------------------------------------------------------------------


def show_command(args: argparse.Namespace) -> int:
    runs = _runs(args.json)
    if runs is None:
        return EXIT_USAGE
    report, results = _run_with(args.name, runs, args.json)
    if args.name in results:
        assert report is not None  # results are a report's: empty without one
        fixes = view.corrections(report).get(args.name, [])
        print(terminal.section(doc.theorem_section(results[args.name], fixes)))
        return EXIT_OK
    catalog = _discover(args, render=True)
    declared = catalog.by_name().get(args.name)
    if declared is None:
        known = [t.name for t in catalog.theorems] + list(results)
        own = ("" if args.theorems else "; a theorem of your own: --theorems DIR shows its "
               "declaration, --json PATH the results of the run that checked it")
        raise UsageError(arguments.unknown_theorem(args.name, sorted(set(known))) + own)
    _show_declaration(declared, args.json)
    return EXIT_OK


def _run_with(name: str, runs: Runs,
              asked: Path) -> tuple[Report | None, dict[str, TheoremResult]]:
    """The first of ``runs`` that checked ``name`` and its results by name, said on the
    terminal when it is not the results asked for (a run of a subset or of one's own files
    writes reports/partial/, a GPU run reports/gpu/); else the first run's, or none."""
    for path, report in runs:
        by_name = {t.name: t for t in report.theorems}
        if name in by_name:
            if path != asked:
                print(f"(from {terminal.escape(path)})", file=sys.stderr)
            return report, by_name
    first = runs[0][1] if runs else None
    return first, ({t.name: t for t in first.theorems} if first else {})


def _show_declaration(theorem: Theorem | sandbox.DeclaredTheorem, json_path: Path) -> None:
    if isinstance(theorem, sandbox.DeclaredTheorem):  # loaded and rendered in a worker
        fields = {**declaration(theorem), **(theorem.rendered or {})}
    else:
        fields = describe(theorem)
    result = result_from_records(fields, None, [])  # nothing checked yet
    print(terminal.section(doc.theorem_section(result, [])))
    print(f"\nnot checked yet (no result in {terminal.escape(json_path)})")
