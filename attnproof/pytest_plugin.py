"""A pytest plugin that turns the proof harness's records into an attnproof report.

Harness tests attach JSON records to their report (``user_properties`` under
``attnproof.symbolic`` and ``attnproof.numeric``); this plugin adds each test's theorem
description under ``attnproof.theorem``. User properties travel with every test report from an
xdist worker to the controller, which is the only process that writes: at the end of the
session it assembles one result per theorem and writes results JSON, Markdown, LaTeX and figures
atomically into ``reports/pytest/`` (``--attnproof-report DIR`` to choose, ``none`` to skip), so
a test run never overwrites the output of ``attnproof prove`` in ``reports/``.

The report is marked partial when some harness test did not run: deselected (``-k``, ``-m``,
``--attnproof-theorem``, ``--lf``), chosen by node id, stopped early (``-x``, Ctrl-C), or lost
with a crashed worker. A session whose tests attached no record writes nothing.

The plugin is installed with attnproof (a ``pytest11`` entry point) and does nothing until asked:
``--attnproof-theorems DIR`` (or ``attnproof_theorems = DIR`` in the pytest configuration) adds
the generic harness test (``_harness.py``) over the theorems of DIR, and over the built-in
catalog too with ``--attnproof-catalog``.

``--attnproof-kernel SPEC`` (repeatable, or ``attnproof_kernels`` in the configuration) adds
the kernel checker's generic test (``kernels/_harness.py``): one test per property × dtype ×
device of each kernel, as ``attnproof kernels --kernel SPEC`` checks them
(``--attnproof-kernel-examples N`` draws per cell), and the controller writes the session's
conformance matrix into ``kernels/`` of the report folder.

The harness's numeric tests are the configurations ``attnproof prove`` checks, from the same
function: under the default profile each backend's default mode; ``--attnproof-profile NAME``
chooses another profile (``thorough`` adds every other mode, eager JAX) for the modes and the
search effort alike, and ``--attnproof-device D`` keeps the configurations on device D (a kind
such as ``cpu`` or ``gpu``, or ``gpu:1``), which marks the report partial as ``prove --device``
does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import pytest

from attnproof.numeric import NumericRecord, NumericStatus

from . import _harness as harness
from .report import (
    MARKDOWN_NAME,
    ErrorEntry,
    Report,
    describe,
    environment,
    now_iso,
    result_from_records,
    view,
    write_reports,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Theorem

    from .report import TheoremResult

SYMBOLIC_KEY = "attnproof.symbolic"
NUMERIC_KEY = "attnproof.numeric"
THEOREM_KEY = "attnproof.theorem"
KERNEL_KEY = "attnproof.kernel"  # a kernel cell's record (kernels._pytest.KERNEL_KEY)
EXPECTED_KEY = "attnproof.expected"  # a worker's collected harness tests, sent at its end
DEFAULT_REPORT_DIR = Path("reports") / "pytest"
CONFIGURATION = ("backend", "dtype", "device", "mode")
_COLLECTOR = pytest.StashKey["_Collector"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attnproof")
    group.addoption("--attnproof-report", metavar="DIR", default=None,
                    help="where the controller writes the harness report "
                         f"(default: {DEFAULT_REPORT_DIR} under the rootdir of a configuration "
                         "file, else the folder pytest runs in; 'none' to skip)")
    group.addoption("--attnproof-theorem", metavar="NAME", action="append", default=None,
                    help="run only the harness tests of theorem NAME; repeatable")
    group.addoption("--attnproof-theorems", metavar="DIR", action="append", default=None,
                    help="run the proof harness over the theorem files of DIR (or a file); "
                         "repeatable")
    group.addoption("--attnproof-catalog", action="store_true", default=None,
                    help="with --attnproof-theorems, run the built-in catalog too")
    group.addoption("--attnproof-profile", metavar="NAME", default=None,
                    help="the harness's numeric profile, as 'attnproof prove --profile': its "
                         "modes (each backend's default mode; every mode with 'thorough') and "
                         "its search effort (default: $ATTNPROOF_PROFILE, else 'default')")
    group.addoption("--attnproof-device", metavar="D", action="append", default=None,
                    help="run the harness's numeric tests only on device D (a kind such as cpu "
                         "or gpu, or gpu:N), as 'attnproof prove --device'; repeatable")
    group.addoption("--attnproof-kernel", metavar="SPEC", action="append", default=None,
                    help="check kernel SPEC (a library kernel, or module:attribute of a Kernel) "
                         "as 'attnproof kernels --kernel SPEC': one test per property, dtype "
                         "and device; repeatable")
    group.addoption("--attnproof-kernel-examples", metavar="N", type=int, default=None,
                    help="Hypothesis examples per kernel cell (default: as 'attnproof "
                         "kernels')")
    parser.addini("attnproof_kernels", type="linelist", default=[],
                  help="kernels to check, as --attnproof-kernel")
    parser.addini("attnproof_theorems", type="paths", default=[],
                  help="theorem directories for the proof harness, as --attnproof-theorems")
    parser.addini("attnproof_catalog", type="bool", default=False,
                  help="run the built-in catalog too, as --attnproof-catalog")


def pytest_configure(config: pytest.Config) -> None:
    devices = _check_selection(config)
    if not _is_worker(config):
        config.stash[_COLLECTOR] = _Collector(restrictions=[
            f"numeric checks only on devices {', '.join(devices)}"] if devices else [])
    directories = _theorem_directories(config)
    configured = cast(harness.Configured, config)  # the attributes it is given here
    configured.attnproof_catalog = harness.load(directories, _include_catalog(config)) \
        if directories else None
    specs = config.getoption("attnproof_kernel") or config.getini("attnproof_kernels")
    configured.attnproof_kernels = kernel_harness().load(specs) if specs else None


def _check_selection(config: pytest.Config) -> list[str]:
    """A usage error for an unknown --attnproof-profile or --attnproof-device word (the checks
    of ``attnproof prove``); the devices chosen, if any, as that check writes them."""
    from attnproof.numeric import PROFILE_NAMES

    from . import _arguments as arguments

    profile = config.getoption("attnproof_profile")
    if profile is not None:
        _checked("--attnproof-profile", arguments.one_of("profile", PROFILE_NAMES), profile)
    devices = [_checked("--attnproof-device", arguments.device, value)
               for value in config.getoption("attnproof_device") or []]
    if devices:
        config.option.attnproof_device = devices
    return devices


def _checked(option: str, check: Callable[[str], str], value: str) -> str:
    import argparse

    try:
        return check(value)
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(f"{option}: {error}") from None


def _theorem_directories(config: pytest.Config) -> list[Path]:
    given = config.getoption("attnproof_theorems")
    if given:
        return [Path(d) for d in given]
    return list(config.getini("attnproof_theorems"))


def _include_catalog(config: pytest.Config) -> bool:
    given = config.getoption("attnproof_catalog")
    return bool(given if given is not None else config.getini("attnproof_catalog"))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# -- collection: remember what a complete run would check, then apply --theorem -----------------


def kernel_harness() -> ModuleType:
    """The kernel checker's harness module, imported only when a session names a kernel."""
    from .kernels import _harness as kernels

    return kernels


@pytest.hookimpl(tryfirst=True)  # before -k, -m, --lf and --deselect remove anything
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                   items: list[pytest.Item]) -> None:
    configured = cast(harness.Configured, config)  # by ``pytest_configure``, xdist on a worker
    if configured.attnproof_catalog is not None:
        items.extend(_harness_items(session))
    if configured.attnproof_kernels is not None:
        items.extend(_harness_items(session, kernel_harness()))
    expected = [(item.nodeid, theorem.name) for item in items
                if (theorem := _theorem_of(item)) is not None]
    if _is_worker(config):
        configured.workeroutput[EXPECTED_KEY] = expected
    else:
        config.stash[_COLLECTOR].expect(expected)
    _select_theorems(config, items)


def _harness_items(session: pytest.Session, module: ModuleType = harness
                   ) -> list[pytest.Item]:
    """The generic test over the configured theorems (or kernels), and one failing test for
    the files (or specs) that did not load, so that a broken one fails the run without hiding
    the others."""
    # a harness module is loaded from its file, so it has one
    collected = pytest.Module.from_parent(session, path=Path(cast(str, module.__file__)))
    return list(session.genitems(collected))


def _select_theorems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = config.getoption("attnproof_theorem")
    if not names:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        theorem = _theorem_of(item)
        (dropped if theorem is not None and theorem.name not in names else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _theorem_of(item: pytest.Item) -> Theorem | None:
    """The theorem a harness test is parametrized with, or None for any other test."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    theorem = params.get("theorem")
    return theorem if hasattr(theorem, "claim") and hasattr(theorem, "name") else None


# -- on every process that runs tests: attach the theorem's description --------------------------

_descriptions: dict[int, str] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    theorem = _theorem_of(item)
    if theorem is None:
        return
    if id(theorem) not in _descriptions:
        _descriptions[id(theorem)] = json.dumps(describe(theorem), default=str)
    params = cast(pytest.Function, item).callspec.params  # it has a theorem: parametrized
    case = {key: str(params[key]) for key in CONFIGURATION if key in params}
    item.user_properties.append((THEOREM_KEY, _descriptions[id(theorem)]))
    item.user_properties.append((THEOREM_KEY + ".case", json.dumps(case)))


# -- on the controller: gather, then write once ------------------------------------------------


# The controller's collector, for the hooks that receive no config; empty on workers.
_active: list[_Collector] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _is_worker(session.config):
        _active[:] = [session.config.stash[_COLLECTOR]]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for collector in _active:
        collector.take(report)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """xdist: a worker ended; it sends what it collected, or it crashed."""
    output = getattr(node, "workeroutput", None) or {}
    for collector in _active:
        collector.expect(output.get(EXPECTED_KEY, []))
        if error:
            collector.crashes.append(f"a worker crashed: {error}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    config = session.config
    if _is_worker(config) or _COLLECTOR not in config.stash:
        return
    _active.clear()
    collector = config.stash[_COLLECTOR]
    out_dir = _report_dir(config)
    if out_dir is None:
        return
    if collector.has_records():
        _write_theorem_report(session, exitstatus, collector, out_dir)
    if collector.kernel_records():
        _write_conformance(collector, out_dir / "kernels")


def _write_theorem_report(session: pytest.Session, exitstatus: int | pytest.ExitCode,
                          collector: _Collector, out_dir: Path) -> None:
    config = session.config
    report = collector.report(_stopped_early(session, exitstatus), _node_id_arguments(config))
    report.run = {"by": "pytest", "args": list(config.invocation_params.args),
                  **_selection(config),
                  # as `attnproof prove` records them: never listed as errata of the documents
                  "user_theorems": sorted(t.name for t in report.theorems
                                          if not view.in_catalog(t))}
    try:
        write_reports(report, out_dir)
        collector.written.append(f"attnproof: wrote {out_dir / MARKDOWN_NAME}" + (
            f" (partial: {report.partial_reason})" if report.partial else ""))
    except Exception as error:  # a report that cannot be written must not hide test results
        collector.written.append(f"attnproof: could not write the report to {out_dir}: {error}")


def _write_conformance(collector: _Collector, out_dir: Path) -> None:
    """The session's conformance matrix: every kernel cell whose test ran, as its test
    recorded it (a cell whose test did not run is not in it)."""
    from .kernels._matrix import write
    from .kernels._pytest import conformance_from_records

    try:
        paths = write(conformance_from_records(collector.kernel_records()), out_dir)
        collector.written.append(f"attnproof: wrote {paths[0]}")
    except Exception as error:  # a matrix that cannot be written must not hide test results
        collector.written.append(f"attnproof: could not write the conformance matrix to "
                                 f"{out_dir}: {error}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            exitstatus: int | pytest.ExitCode, config: pytest.Config) -> None:
    collector = config.stash.get(_COLLECTOR, None)
    for line in collector.written if collector is not None else ():
        terminalreporter.write_line(line)


def _selection(config: pytest.Config) -> dict[str, Any]:
    """The profile and devices the harness ran with, for the report's ``run``."""
    try:
        profile, devices = harness.selection(config)
    except ValueError:  # an unknown $ATTNPROOF_PROFILE: the numeric tests said so already
        return {}
    return {"profile": profile, "devices": list(devices) if devices else None}


def _report_dir(config: pytest.Config) -> Path | None:
    chosen = config.getoption("attnproof_report")
    if chosen and chosen.lower() == "none":
        return None
    return Path(chosen) if chosen else _project_folder(config) / DEFAULT_REPORT_DIR


def _project_folder(config: pytest.Config) -> Path:
    """The rootdir where a configuration file fixed it; else the folder pytest ran in. Without
    a configuration file pytest takes the common ancestor of the command's path arguments, and
    it reads them before this plugin's options are known, so ``--attnproof-theorems ../mine``
    alone would move the report one folder up."""
    return config.rootpath if config.inipath is not None else config.invocation_params.dir


def _stopped_early(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> bool:
    return bool(session.shouldstop or session.shouldfail
                or exitstatus == pytest.ExitCode.INTERRUPTED)


def _node_id_arguments(config: pytest.Config) -> bool:
    return any("::" in str(arg) for arg in config.args)


@dataclass
class _Collector:
    """What the controller has heard: records per test, descriptions, what should have run."""

    expected: dict[str, str] = field(default_factory=dict)  # node id -> theorem, in order
    ran: set[str] = field(default_factory=set)
    properties: dict[str, dict[str, str]] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    restrictions: list[str] = field(default_factory=list)  # options that check less
    written: list[str] = field(default_factory=list)  # what the controller wrote, a line each

    def expect(self, expected: Iterable[tuple[str, str]]) -> None:
        for nodeid, theorem in expected:
            self.expected.setdefault(nodeid, theorem)

    def take(self, report: pytest.TestReport) -> None:
        # Every phase of a test carries the same user_properties; keep one copy per test.
        # read back are only the harness's own properties, JSON strings (``json.dumps``)
        properties = cast("list[tuple[str, str]]", report.user_properties)
        self.properties.setdefault(report.nodeid, {}).update(dict(properties))
        if report.when == "call" or report.skipped or report.failed:
            self.ran.add(report.nodeid)
        if report.failed and report.when != "teardown":
            self.failures.append((report.nodeid, _failure_text(report)))

    def has_records(self) -> bool:
        return any(SYMBOLIC_KEY in p or NUMERIC_KEY in p for p in self.properties.values())

    def kernel_records(self) -> list[str]:
        """The kernel cells' records (``kernels._pytest.KERNEL_KEY``), in the order their
        tests reported."""
        return [p[KERNEL_KEY] for p in self.properties.values() if KERNEL_KEY in p]

    def report(self, stopped_early: bool, by_node_id: bool) -> Report:
        theorems, errors = self._results()
        reasons = self._partial_reasons(stopped_early, by_node_id)
        return Report(theorems, errors, bool(reasons), now_iso(), environment(theorems),
                      "; ".join(reasons))

    def _results(self) -> tuple[list[TheoremResult], list[ErrorEntry]]:
        gathered: dict[str, _Gathered] = {}
        for name in self.expected.values():
            gathered.setdefault(name, _Gathered())
        errors: list[ErrorEntry] = []
        for nodeid, props in self.properties.items():
            if THEOREM_KEY not in props:
                continue
            description = json.loads(props[THEOREM_KEY])
            entry = gathered.setdefault(description["name"], _Gathered())
            entry.add(description, props)
            if nodeid in self._harness_tests():
                errors += entry.add_failure(nodeid, props, self._failure_of(nodeid))
        theorems = [g.result() for g in gathered.values() if g.has_evidence()]
        # A test lost with its worker reaches us as a failure with no properties at all.
        lost = [ErrorEntry(nodeid, self.expected.get(nodeid), text)
                for nodeid, text in self.failures
                if nodeid in self._harness_tests() and THEOREM_KEY not in self.properties[nodeid]]
        return theorems, errors + lost

    def _harness_tests(self) -> set[str]:
        """Theorem-parametrized tests in the modules that attached records: other test
        modules also take a ``theorem`` parameter (unit tests of the layers) and report
        nothing."""
        modules = {nodeid.split("::")[0] for nodeid, props in self.properties.items()
                   if SYMBOLIC_KEY in props or NUMERIC_KEY in props}
        return {nodeid for nodeid in self.expected if nodeid.split("::")[0] in modules}

    def _failure_of(self, nodeid: str) -> str | None:
        return next((text for n, text in self.failures if n == nodeid), None)

    def _partial_reasons(self, stopped_early: bool, by_node_id: bool) -> list[str]:
        reasons = []
        harness = self._harness_tests()
        missing = [n for n in harness if n not in self.ran]
        if missing:
            reasons.append(f"{len(missing)} of {len(harness)} harness tests did not run")
        if stopped_early:
            reasons.append("the session stopped early")
        if by_node_id:
            reasons.append("tests were chosen by node id")
        reasons += self.restrictions
        reasons += self.crashes
        return reasons


@dataclass
class _Gathered:
    """One theorem's description and records, as they arrive from its tests."""

    description: dict[str, Any] | None = None
    symbolic: dict[str, Any] | None = None
    numeric: list[NumericRecord] = field(default_factory=list)

    def add(self, description: dict[str, Any], props: dict[str, str]) -> None:
        self.description = description
        if SYMBOLIC_KEY in props:
            self.symbolic = json.loads(props[SYMBOLIC_KEY])
        if NUMERIC_KEY in props:
            self.numeric.append(NumericRecord.from_json(json.loads(props[NUMERIC_KEY])))

    def add_failure(self, nodeid: str, props: dict[str, str],
                    failure: str | None) -> list[ErrorEntry]:
        """A test that failed before attaching its record: an error record and an error entry.

        A failed assertion after the record was attached is already in the record's status.
        """
        if failure is None or SYMBOLIC_KEY in props or NUMERIC_KEY in props:
            return []
        case = json.loads(props.get(THEOREM_KEY + ".case", "{}"))
        if all(key in case for key in CONFIGURATION):
            self.numeric.append(NumericRecord(**case, status=NumericStatus.ERROR,
                                              reason=failure))
        assert self.description is not None  # ``_results`` calls ``add`` first
        return [ErrorEntry(nodeid, self.description["name"], failure)]

    def has_evidence(self) -> bool:
        return self.description is not None and (self.symbolic is not None or bool(self.numeric))

    def result(self) -> TheoremResult:
        assert self.description is not None  # asked only of one that ``has_evidence``
        return result_from_records(self.description, self.symbolic, self.numeric)


def _failure_text(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return f"{crash.message}"
    return str(report.longrepr).strip().splitlines()[-1] if report.longrepr else "failed"

