"""The attnproof command: prove checks theorems and writes reports; list, show and report read
the results of a previous run; replay re-runs one numeric batch from a counterexample.

Exit codes: 0 when every theorem came out as declared and every file loaded; 1 otherwise (a
claim expected to hold failed, a claim expected false was not refuted, a file or check is in
error); 2 for a usage error or an unreadable results file; 130 when interrupted (the partial
results are still written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attnproof import symbolic

from . import __version__
from . import _document as doc
from . import _terminal as terminal
from . import _view as view
from ._describe import describe
from ._progress import Progress
from ._reports import JSON_NAME, Written, write_reports
from ._results import Report, TheoremResult
from ._runner import PROFILES, RunInterrupted, numeric_api, run
from ._schema import ResultsError, load_results
from .numeric import replay as replay_command
from .numeric._compile_cache import disable as disable_caches

EXIT_OK, EXIT_NOT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_JSON = Path("reports") / JSON_NAME


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return args.command(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attnproof", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n")[1])
    parser.add_argument("--version", action="version", version=f"attnproof {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    prove = commands.add_parser("prove", help="prove and check theorems, write reports")
    _add_theorem_source(prove)
    _add_prove_options(prove)
    prove.set_defaults(command=prove_command)
    listing = commands.add_parser("list", help="list theorems and their last known status")
    _add_theorem_source(listing)
    _add_json_input(listing)
    listing.set_defaults(command=list_command)
    show = commands.add_parser("show", help="a theorem's statement, proof, evidence and replay")
    show.add_argument("name", metavar="NAME")
    _add_theorem_source(show)
    _add_json_input(show)
    show.set_defaults(command=show_command)
    report = commands.add_parser("report", help="re-render the reports from results JSON")
    _add_json_input(report)
    report.add_argument("--out", metavar="DIR", type=Path,
                        help="report directory (default: the JSON file's directory)")
    report.add_argument("--pdf", action="store_true", help="also compile report.pdf (pdflatex)")
    report.set_defaults(command=report_command)
    replay = commands.add_parser("replay", help="replay one numeric batch from its replay command")
    replay_command.add_arguments(replay)
    replay.set_defaults(command=replay_command.run)
    return parser


def _add_theorem_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theorems", metavar="DIR", type=Path, action="append", default=[],
                        help="extra directory (or file) of theorems; repeatable")
    parser.add_argument("--no-catalog", action="store_true",
                        help="leave out the built-in theorems/ catalog")


def _add_json_input(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="PATH", type=Path, default=DEFAULT_JSON,
                        help="results of a previous run (default: %(default)s)")


def _add_prove_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--out", metavar="DIR", type=Path, default=Path("reports"),
        help="report directory (default: %(default)s)")
    add("--json", metavar="PATH", type=Path, help="results JSON (default: OUT/results.json)")
    add("--theorem", metavar="NAME", action="append", help="check only NAME; repeatable")
    add("--backend", metavar="B", action="append", help="numeric backend only B; repeatable")
    add("--dtype", metavar="D", action="append", help="numeric dtype only D; repeatable")
    add("--device", metavar="D", action="append", help="numeric device only D; repeatable")
    add("--mode", metavar="M", action="append",
        help="numeric mode only M (jit, eager); repeatable; default: each backend's default "
             "mode, every mode with --profile thorough")
    add("--profile", choices=PROFILES, default="default", help="numeric effort")
    add("--jobs", metavar="N", type=int, help="worker processes (default: CPU count)")
    add("--time-limit", metavar="S", type=float, default=60.0,
        help="seconds per symbolic proof (default: %(default)s)")
    add("--timeout", metavar="S", type=float,
        help="seconds per theorem before its worker is killed (default: by profile)")
    add("--symbolic-only", action="store_true", help="skip numeric checks")
    add("--in-process", action="store_true",
        help="run in this process, one theorem at a time (for debugging)")
    add("--pdf", action="store_true", help="also compile report.pdf (needs pdflatex)")
    add("--no-cache", action="store_true",
        help="prove and compile everything again, reading and writing no cache")


def _directories(args) -> list[Path]:
    catalog = [] if args.no_catalog else [symbolic._catalog.CATALOG_DIR]
    return catalog + list(args.theorems)


# -- prove ---------------------------------------------------------------------------------------


def prove_command(args) -> int:
    if not args.symbolic_only and numeric_api() is None:
        print("attnproof: numeric checks unavailable (numeric.check not found); "
              "symbolic proofs only", file=sys.stderr)
    if args.no_cache:
        disable_caches()
    progress = Progress()
    try:
        report = run(
            _directories(args), theorem_filter=args.theorem, backends=args.backend,
            dtypes=args.dtype, devices=args.device, modes=args.mode, profile=args.profile,
            jobs=args.jobs,
            progress=progress.finished, started=progress.started, time_limit=args.time_limit,
            timeout=args.timeout, check_numeric=not args.symbolic_only,
            isolate=not args.in_process,
        )
    except ValueError as error:
        print(f"attnproof: {error}", file=sys.stderr)
        return EXIT_USAGE
    except RunInterrupted as interrupted:
        progress.close()
        _write(interrupted.report, args)
        print("attnproof: interrupted; partial results written", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    written = _write(report, args)
    _print_summary(report, written)
    return EXIT_OK if report.ok else EXIT_NOT_OK


def _write(report: Report, args) -> Written:
    return write_reports(report, args.out, args.json, pdf=args.pdf)


def _print_summary(report: Report, written: Written) -> None:
    counts = [f"{n} {s}" for s, n in view.status_counts(report)]
    as_expected = sum(t.ok for t in report.theorems)
    print(f"\n{len(report.theorems)} theorems: {', '.join(counts) or 'none'}; "
          f"{as_expected} as expected; {len(report.errors)} errors")
    for t in view.inconsistent(report):
        print(f"  INCONSISTENT: {t.name}: two routes disagree (a bug in the checker, the "
              "compiler or the implementation)")
    for error in report.errors:
        first = error.message.splitlines()[0] if error.message else error.path
        print(f"  error: {terminal.escape(first)}")
    if report.partial:
        print(f"partial report: {terminal.escape(report.partial_reason)}")
    _print_written(written)


def _print_written(written: Written) -> None:
    print("wrote " + ", ".join(str(p) for p in written.paths))
    for note in written.notes:
        print(f"note: {note}")


# -- report --------------------------------------------------------------------------------------


def report_command(args) -> int:
    report = _read(args.json)
    if report is None:
        return EXIT_USAGE
    out = args.out if args.out is not None else args.json.parent
    _print_written(write_reports(report, out, results=False, pdf=args.pdf))
    return EXIT_OK


def _read(path: Path) -> Report | None:
    """The results at ``path``, or None after saying why they cannot be read."""
    try:
        return load_results(path)
    except FileNotFoundError:
        _complain(f"no results at {path}; run `attnproof prove` first")
    except ResultsError as error:
        _complain(str(error))
    return None


def _complain(message: str) -> None:
    print(f"attnproof: {terminal.escape(message)}", file=sys.stderr)


# -- list ----------------------------------------------------------------------------------------


def list_command(args) -> int:
    catalog = symbolic.discover(_directories(args))
    last = _last_statuses(args.json)
    if last is None:
        return EXIT_USAGE
    rows = [(t.name, str(t.source), t.expect, last.get(t.name, "—")) for t in catalog.theorems]
    columns = tuple(doc.Column(title) for title in ("theorem", "source", "expect", "last status"))
    print(terminal.table(columns, rows))
    for error in catalog.errors:
        _complain(f"error: {error.message}")
    return EXIT_NOT_OK if catalog.errors else EXIT_OK


def _last_statuses(path: Path) -> dict[str, str] | None:
    """Each theorem's status in the results at ``path``; {} when there are none yet, None
    when the file is there but unreadable (already said why)."""
    if not path.exists():
        return {}
    report = _read(path)
    return None if report is None else {t.name: t.status for t in report.theorems}


# -- show ----------------------------------------------------------------------------------------


def show_command(args) -> int:
    report = _read(args.json) if args.json.exists() else None
    if args.json.exists() and report is None:
        return EXIT_USAGE
    results = {t.name: t for t in report.theorems} if report else {}
    if args.name in results:
        fixes = view.corrections(report).get(args.name, [])
        print(terminal.section(doc.theorem_section(results[args.name], fixes)))
        return EXIT_OK
    declared = symbolic.discover(_directories(args)).by_name().get(args.name)
    if declared is None:
        _complain(f"no theorem named {args.name!r}")
        return EXIT_USAGE
    _show_declaration(declared, args.json)
    return EXIT_OK


def _show_declaration(theorem, json_path: Path) -> None:
    result = TheoremResult(**describe(theorem), status="unchecked", ok=False)
    print(terminal.section(doc.theorem_section(result, [])))
    print(f"\nnot checked yet (no result in {terminal.escape(json_path)})")


if __name__ == "__main__":
    sys.exit(main())
