"""The ``attnproof`` command: ``prove`` checks theorems and writes reports; ``list`` shows them.

Exit codes: 0 when every theorem came out as declared and every file loaded; 1 otherwise (a
claim expected to hold failed, a claim expected false was not refuted, a file or check is in
error); 2 for a usage error; 130 when interrupted (the partial results are still written).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import symbolic

from . import _markdown
from ._results import STATUSES, Report, TheoremResult, read_json, write_atomic, write_json
from ._runner import PROFILES, RunInterrupted, numeric_api, run

EXIT_OK, EXIT_NOT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return args.command(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attnproof", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    prove = commands.add_parser("prove", help="prove and check theorems, write reports")
    _add_theorem_source(prove)
    _add_prove_options(prove)
    prove.set_defaults(command=prove_command)
    listing = commands.add_parser("list", help="list theorems and their last known status")
    _add_theorem_source(listing)
    listing.add_argument("--json", type=Path, default=Path("reports/results.json"),
                         help="results to read the last status from (default: %(default)s)")
    listing.set_defaults(command=list_command)
    return parser


def _add_theorem_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theorems", metavar="DIR", type=Path, action="append", default=[],
                        help="extra directory (or file) of theorems; repeatable")
    parser.add_argument("--no-catalog", action="store_true",
                        help="leave out the built-in theorems/ catalog")


def _add_prove_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--out", metavar="DIR", type=Path, default=Path("reports"),
        help="report directory (default: %(default)s)")
    add("--json", metavar="PATH", type=Path, help="results JSON (default: OUT/results.json)")
    add("--theorem", metavar="NAME", action="append", help="check only NAME; repeatable")
    add("--backend", metavar="B", action="append", help="numeric backend only B; repeatable")
    add("--dtype", metavar="D", action="append", help="numeric dtype only D; repeatable")
    add("--profile", choices=PROFILES, default="default", help="numeric effort")
    add("--jobs", metavar="N", type=int, help="worker processes (default: CPU count)")
    add("--time-limit", metavar="S", type=float, default=60.0,
        help="seconds per symbolic proof (default: %(default)s)")
    add("--timeout", metavar="S", type=float,
        help="seconds per theorem before its worker is killed (default: by profile)")
    add("--symbolic-only", action="store_true", help="skip numeric checks")
    add("--in-process", action="store_true",
        help="run in this process, one theorem at a time (for debugging)")


def _directories(args) -> list[Path]:
    catalog = [] if args.no_catalog else [symbolic._catalog.CATALOG_DIR]
    return catalog + list(args.theorems)


# -- prove ---------------------------------------------------------------------------------------


def prove_command(args) -> int:
    if not args.symbolic_only and numeric_api() is None:
        print("attnproof: numeric checks unavailable (numeric.check not found); "
              "symbolic proofs only", file=sys.stderr)
    try:
        report = run(
            _directories(args), theorem_filter=args.theorem, backends=args.backend,
            dtypes=args.dtype, profile=args.profile, jobs=args.jobs, progress=_print_progress,
            time_limit=args.time_limit, timeout=args.timeout,
            check_numeric=not args.symbolic_only, isolate=not args.in_process,
        )
    except ValueError as error:
        print(f"attnproof: {error}", file=sys.stderr)
        return EXIT_USAGE
    except RunInterrupted as interrupted:
        _write_reports(interrupted.report, args)
        print("attnproof: interrupted; partial results written", file=sys.stderr)
        return EXIT_INTERRUPTED
    _write_reports(report, args)
    _print_summary(report, args)
    return EXIT_OK if report.ok else EXIT_NOT_OK


def _write_reports(report: Report, args) -> None:
    json_path = args.json or args.out / "results.json"
    write_json(report, json_path)
    write_atomic(args.out / "summary.md", _markdown.render(report))


def _print_progress(result: TheoremResult, done: int, total: int) -> None:
    width = len(str(total))
    mark = " " if result.ok else "✗"
    print(f"[{done:>{width}}/{total}] {mark} {result.status:<14} {result.name}  "
          f"{_detail(result)}", flush=True)


def _detail(result: TheoremResult) -> str:
    parts = []
    if result.symbolic is not None:
        parts.append(f"{result.symbolic.method} ({result.symbolic.seconds:.2f} s)")
    tally = Counter(r.status for r in result.numeric)
    if tally:
        parts.append("numeric " + ", ".join(f"{n} {status}" for status, n in sorted(tally.items())))
    return "; ".join(parts)


def _print_summary(report: Report, args) -> None:
    counts = [f"{sum(t.status == s for t in report.theorems)} {s}" for s in STATUSES
              if any(t.status == s for t in report.theorems)]
    as_expected = sum(t.ok for t in report.theorems)
    print(f"\n{len(report.theorems)} theorems: {', '.join(counts) or 'none'}; "
          f"{as_expected} as expected; {len(report.errors)} errors")
    for error in report.errors:
        print(f"  error: {error.message.splitlines()[0] if error.message else error.path}")
    print(f"wrote {args.json or args.out / 'results.json'} and {args.out / 'summary.md'}")


# -- list ----------------------------------------------------------------------------------------


def list_command(args) -> int:
    catalog = symbolic.discover(_directories(args))
    last = _last_statuses(args.json)
    rows = [(t.name, str(t.source), t.expect, last.get(t.name, "—")) for t in catalog.theorems]
    _print_table(("theorem", "source", "expect", "last status"), rows)
    for error in catalog.errors:
        print(f"error: {error.message}", file=sys.stderr)
    return EXIT_NOT_OK if catalog.errors else EXIT_OK


def _last_statuses(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    try:
        report = read_json(path)
    except (ValueError, KeyError, TypeError) as error:
        print(f"attnproof: ignoring {path}: {error}", file=sys.stderr)
        return {}
    return {t.name: t.status for t in report.theorems}


def _print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(row[c])) for row in [header, *rows]) for c in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    sys.exit(main())
