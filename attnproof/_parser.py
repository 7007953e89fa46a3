"""The command line's parser and its dispatch, which import nothing heavy.

``attnproof --help``, a usage error and a misspelt theorem name answer at once: SymPy, NumPy,
the array backends and Hypothesis load only with the command that needs them. Each command's
options are added when that command is parsed (``_Command``), so the kernel checker's and the
replay's option modules load only for ``kernels`` and ``replay``; each command's body lives in
``_commands`` (or ``kernels.cli``, ``_machine``) and is imported when it runs. A theorem name
given to ``prove`` is checked against the catalog's index (``_index``) before any of that.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar, overload

from . import __version__
from . import _arguments as arguments
from ._exits import EXIT_USAGE

REPORTS = Path("reports")
PARTIAL = REPORTS / "partial"
# attnproof.report.JSON_NAME, named here so that parsing loads no report module
# (tests/cli/test_fast_start.py holds the two together)
DEFAULT_JSON = REPORTS / "results.json"
# Seconds a file of --theorems may take to load for `list` and `show` (which check nothing, so
# have no profile); loading a file takes well under a second.
LOAD_TIMEOUT = 60.0

# what a command runs: ``command(args)``, the exit code
CommandFunction = Callable[[argparse.Namespace], int]
# what adds a command's options to its parser, or shows its defaults in its help
OnParser = Callable[[argparse.ArgumentParser], None]
_N = TypeVar("_N")


class UsageError(Exception):
    """A value that names nothing that exists; exit 2 before any work."""


def run_command(argv: list[str] | None = None, doc: str = "") -> int:
    """Parse ``argv`` and run its command; ``doc`` (the entry point's) heads the help."""
    args = parser(doc).parse_args(argv)
    try:
        return args.command(args)
    except UsageError as error:
        print(f"attnproof: {error}", file=sys.stderr)
        return EXIT_USAGE


class _Command(argparse.ArgumentParser):
    """A command's parser whose options are added when it first parses or prints its help
    (``options(parser)``), and whose help may show defaults read only then (``on_help``)."""

    def __init__(self, *args: Any, options: OnParser | None = None,
                 on_help: OnParser | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._options, self._on_help = options, on_help

    def _add_options(self) -> None:
        options, self._options = self._options, None
        if options is not None:
            options(self)

    # argparse's own overloads: a namespace given is the one filled and returned
    @overload
    def parse_known_args(self, args: Iterable[str] | None = None,
                         namespace: None = None) -> tuple[argparse.Namespace, list[str]]: ...

    @overload
    def parse_known_args(self, args: Iterable[str] | None,
                         namespace: _N) -> tuple[_N, list[str]]: ...

    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: _N | None = None
                         ) -> tuple[argparse.Namespace | _N, list[str]]:
        self._add_options()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._add_options()
        if self._on_help is not None:
            self._on_help(self)
        return super().format_help()


def _run(module: str, function: str) -> CommandFunction:
    """A command that imports ``module`` (relative to attnproof) only when it runs."""

    def command(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(module, __package__), function)(args)

    command.__name__ = function
    return command


def parser(doc: str = "") -> argparse.ArgumentParser:
    description, _, epilog = doc.partition("\n\n")
    top = argparse.ArgumentParser(prog="attnproof", description=description or None,
                                  epilog=epilog or None)
    top.add_argument("--version", action="version", version=f"attnproof {__version__}")
    commands = top.add_subparsers(required=True, metavar="COMMAND", parser_class=_Command)
    commands.add_parser("prove", help="prove and check theorems, write reports",
                        options=_prove_options, on_help=_show_proof_time_limit)
    commands.add_parser("list", help="list theorems and their last known status",
                        options=_list_options)
    commands.add_parser("show", help="a theorem's statement, proof, evidence and replay",
                        options=_show_options)
    commands.add_parser("report", help="re-render the reports from results JSON",
                        options=_report_options)
    commands.add_parser("replay", help="replay a counterexample from its replay command: a "
                        "theorem's numeric record, or a kernel's case", options=_replay_options)
    commands.add_parser("kernels", help="check attention kernels, write their conformance "
                        "matrix to reports/kernels/", options=_kernels_options)
    commands.add_parser("devices", help="what this machine can run: backends, frameworks, "
                        "devices and dtypes", options=_devices_options)
    return top


# -- each command's options ----------------------------------------------------------------------


def _prove_options(prove: argparse.ArgumentParser) -> None:
    _add_theorem_source(prove)
    _add_prove_options(prove)
    prove.set_defaults(command=_prove)


def _list_options(listing: argparse.ArgumentParser) -> None:
    _add_theorem_source(listing)
    _add_load_timeout(listing)
    _add_json_input(listing)
    listing.set_defaults(command=_run("._commands", "list_command"))


def _show_options(show: argparse.ArgumentParser) -> None:
    show.add_argument("name", metavar="NAME")  # checked against the theorems found
    _add_theorem_source(show)
    _add_load_timeout(show)
    _add_json_input(show)
    show.set_defaults(command=_run("._commands", "show_command"))


def _report_options(report: argparse.ArgumentParser) -> None:
    _add_json_input(report)
    report.add_argument("--out", metavar="DIR", type=Path,  # checked writable before rendering
                        help="report directory (default: the JSON file's directory)")
    report.add_argument("--pdf", action="store_true", help="also compile report.pdf (pdflatex)")
    report.set_defaults(command=_run("._commands", "report_command"))


def _replay_options(replay: argparse.ArgumentParser) -> None:
    from .numeric import replay as replay_command

    replay_command.add_arguments(replay)
    replay.add_argument("--kernel", metavar="SPEC",
                        help="replay a kernel checker's case: NAME is then the property, and "
                             "--case the case (jax, mlx, torch, or module:attribute)")
    replay.add_argument("--case", metavar="JSON", help="the case a kernel's failure printed")
    replay.set_defaults(command=_run("._commands", "replay_command"))


def _kernels_options(kernels: argparse.ArgumentParser) -> None:
    """``attnproof kernels``: the conformance matrix of attention kernels (attnproof.kernels)."""
    from .kernels import cli as kernels_cli

    kernels_cli.add_arguments(kernels)
    kernels.set_defaults(command=kernels_cli.run)


def _devices_options(devices: argparse.ArgumentParser) -> None:
    devices.add_argument("--json", action="store_true", help="as JSON")
    devices.set_defaults(command=_run("._machine", "devices_command"))


def _add_theorem_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theorems", metavar="DIR", type=arguments.theorem_source,
                        action="append", default=[],
                        help="extra directory (or .py file) of theorems; repeatable")
    parser.add_argument("--no-catalog", action="store_true",
                        help="leave out the built-in theorems/ catalog")


def _add_load_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", metavar="S", type=arguments.positive_seconds,
                        default=LOAD_TIMEOUT, help="seconds each file of --theorems may take to "
                        "load before its worker is killed (default: %(default)s)")


def _add_json_input(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="PATH", type=Path, default=DEFAULT_JSON,
                        help="results of a previous run (default: %(default)s)")


def _add_prove_options(parser: argparse.ArgumentParser) -> None:
    from .numeric import PROFILE_NAMES  # the profiles' table alone, no numeric code

    add = parser.add_argument
    add("--out", metavar="DIR", type=Path,
        help=f"report directory (default: {REPORTS}/ for a full catalog run, {PARTIAL}/ for a "
             "run of a subset or of other directories, or one that was interrupted)")
    add("--json", metavar="PATH", type=Path, help="results JSON (default: OUT/results.json)")
    add("--theorem", metavar="NAME", action="append", help="check only NAME; repeatable")
    add("--backend", metavar="B", action="append", help="numeric backend only B; repeatable",
        type=arguments.one_of("backend", arguments.backend_names))
    add("--dtype", metavar="D", action="append", help="numeric dtype only D; repeatable",
        type=arguments.one_of("dtype", arguments.dtype_names))
    add("--device", metavar="D", action="append", type=arguments.device,
        help="numeric device only D (a kind such as cpu or gpu, or gpu:N); repeatable")
    add("--mode", metavar="M", action="append", type=arguments.one_of("mode", arguments.mode_names),
        help="numeric mode only M (jit, eager); repeatable; default: each backend's default "
             "mode, every mode with --profile thorough")
    add("--profile", metavar="{" + ",".join(PROFILE_NAMES) + "}", default="default",
        type=arguments.one_of("profile", PROFILE_NAMES),
        help="numeric effort (default: %(default)s)")
    add("--jobs", metavar="N", type=arguments.positive_int,
        help="worker processes (default: CPU count)")
    # default None, read as the prover's limit when the run starts (prove_command): the limit
    # is SymPy's side's, which a misspelt --theorem must not wait for
    add("--time-limit", metavar="S", type=arguments.positive_seconds,
        help="CPU seconds per symbolic proof, so that a busy machine reaches the same "
             "verdicts (default: %(default)s)")
    add("--timeout", metavar="S", type=arguments.positive_seconds,
        help="seconds per theorem before its worker is killed (default: by profile)")
    add("--symbolic-only", action="store_true", help="skip numeric checks")
    add("--in-process", action="store_true",
        help="run in this process, one theorem at a time (for debugging)")
    add("--pdf", action="store_true", help="also compile report.pdf (needs pdflatex)")
    add("--no-cache", action="store_true",
        help="prove and compile everything again, reading and writing no cache")


def _show_proof_time_limit(prove: argparse.ArgumentParser) -> None:
    from .symbolic import PROOF_TIME_LIMIT

    prove.set_defaults(time_limit=PROOF_TIME_LIMIT)


# -- prove: the names first ----------------------------------------------------------------------


def _prove(args: argparse.Namespace) -> int:
    check_names_by_index(args)
    return _run("._commands", "prove_command")(args)


def check_names_by_index(args: argparse.Namespace) -> None:
    """A usage error for a ``--theorem`` the catalog does not declare, read from the catalog's
    index, before any theorem file loads. Nothing is decided here where the index cannot
    answer: other directories, ``--no-cache``, or no index yet (the run then loads the
    catalog and checks the names itself, as it did before any index)."""
    if not args.theorem or args.theorems or args.no_catalog or args.no_cache:
        return
    from ._index import read_index

    index = read_index()
    if index is None:
        return
    known = index.names()
    for name in args.theorem:
        if name not in known:
            raise UsageError(arguments.unknown_theorem(name, known))
