"""``attnproof kernels``: check attention kernels and write their conformance matrix.

With no ``--kernel``, checks the library kernels whose framework is installed (jax, mlx,
torch); ``--kernel module:attribute`` names a :class:`Kernel` of one's own. Each cell is checked
in a worker process (``_isolated``), ``--in-process`` checks them here. ``--case`` replays one
case printed by a failure, here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from attnproof._arguments import positive_int, positive_seconds
from attnproof.numeric import Device, DeviceError, accelerator_folder
from attnproof.report.view import format_number

from ._cases import Case
from ._check import DEFAULT_EXAMPLES, cell_devices, check_kernel, replay
from ._declaration import DTYPES, Kernel
from ._frameworks import devices as devices_of
from ._frameworks import unavailable_reason
from ._isolated import DEFAULT_CASE_TIMEOUT, check_all_isolated
from ._matrix import MARKS, STOPPED, write
from ._properties import by_name, property_named
from ._schema import ConformanceError
from ._spec import load
from ._warnings import total as warnings_total
from .library import FRAMEWORK_OF, LIBRARY

if TYPE_CHECKING:
    from ._check import Cell, Conformance

__all__ = ["DEFAULT_EXAMPLES", "add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--kernel", metavar="SPEC", action="append",
        help=f"a library kernel ({', '.join(LIBRARY)}) or module:attribute of a Kernel; "
             "repeatable (default: the installed library kernels)")
    add("--property", metavar="P", action="append",
        help=f"check only property P; repeatable (one of {', '.join(by_name())})")
    add("--dtype", metavar="D", action="append", choices=DTYPES, help="only dtype D; repeatable")
    add("--device", metavar="D", action="append",
        help="only device D: cpu, gpu or gpu:N (the same words as attnproof prove); "
             "repeatable (default: every device each kernel is declared for that is present)")
    add("--examples", metavar="N", type=positive_int, default=DEFAULT_EXAMPLES,
        help="Hypothesis examples per cell (default: %(default)s)")
    add("--out", metavar="DIR", type=Path,
        help="where conformance.md and conformance.json go (default: reports/kernels, or "
             "reports/gpu/kernels when a GPU is among the devices checked)")
    add("--budget", metavar="S", type=positive_seconds,
        help="seconds per kernel; cells not begun by then are skipped, saying so")
    add("--case-timeout", metavar="S", type=positive_seconds, default=DEFAULT_CASE_TIMEOUT,
        help="seconds one case may run before its worker is killed and its cell reads "
             "timed-out (default: %(default)g)")
    add("--jobs", metavar="N", type=positive_int,
        help="worker processes checking kernels side by side, each kernel's cells in one "
             "(default: one per CPU, at most 12 per accelerator checked on, as for prove)")
    add("--in-process", action="store_true",
        help="check the kernels in this process, not in worker processes (for debugging: a "
             "kernel that crashes or hangs then ends or stalls the run)")
    add("--case", metavar="JSON", help="replay one case (needs one --kernel, --property, --dtype)")


def run(args: argparse.Namespace) -> int:
    try:
        for name in args.property or ():
            property_named(name)
        for word in args.device or ():
            Device.parse(word)
        specs = args.kernel or [s for s in LIBRARY if unavailable_reason(FRAMEWORK_OF[s]) is None]
        kernels = [(spec, load(spec)) for spec in specs]
        if not args.kernel:  # library kernels of implementations this machine lacks stay out
            kernels = [(s, k) for s, k in kernels if _runs_here(k, args.device)]
        _check_devices(kernels, args.device)
    except (ImportError, AttributeError, ValueError, TypeError) as error:
        print(f"attnproof kernels: {error}", file=sys.stderr)
        return 2
    if args.case is not None:
        return _replay(kernels, args)
    if args.out is None:
        args.out = _default_out(kernels, args.device)
    options = dict(properties=args.property, dtypes=args.dtype, devices=args.device,
                   examples=args.examples, budget=args.budget)
    if args.in_process:
        results = [check_kernel(kernel, spec=spec, progress=_progress(kernel), **options)
                   for spec, kernel in kernels]
    else:
        results = check_all_isolated(kernels, jobs=_jobs(kernels, args), progress=_progress,
                                     case_timeout=args.case_timeout, **options)
    try:
        written = write(results, args.out)
    except ConformanceError as error:  # written all the same; a bug of the checker, said so
        print(f"attnproof kernels: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    for line in summary_lines(results, written[0] if written else args.out):
        print(line)
    for result in results:  # every cell may conform, yet the kernel not be ok: say why
        for finding in result.convention_findings():
            print(f"{result.kernel}: {finding['finding']}: a convention read differently in "
                  "two dtypes or devices (not ok)")
    return 0 if all(r.ok for r in results) else 1


def summary_lines(results: Sequence[Conformance], report: Path) -> list[str]:
    """After the matrix: one line per failing cell, what failed and its replay command, and
    the warnings the kernel raised, counted (they are in the report, not printed as raised)."""
    failed = [(result.kernel, cell) for result in results for cell in result.failures()]
    lines = [f"{len(failed)} failing cell{'s' * (len(failed) != 1)}, each with the command "
             f"that replays it (the counterexamples in {report}):",
             *(line for kernel, cell in failed for line in _failure_lines(kernel, cell))
             ] if failed else []
    for result in results:
        programs = result.programs()
        if programs["compiled"] or programs["loaded"]:
            lines.append(f"{result.kernel}: {programs['shapes']} shapes, "
                         f"{programs['compiled']:,} programs compiled "
                         f"({programs['compile_seconds']:.0f} s), {programs['loaded']:,} read "
                         "from the persistent compilation cache")
        raised = warnings_total(result.cells)
        if raised:
            lines.append(f"{result.kernel}: the kernel raised {raised:,} warning"
                         f"{'s' * (raised != 1)} while checked; listed in {report}")
    return lines


def _failure_lines(kernel: str, cell: Cell) -> list[str]:
    """The failing cell's line, the shortest statement of what failed, and its replay."""
    what = (cell.counterexample or {}).get("message") or cell.reason or cell.status
    line = (f"{kernel} {cell.property} {cell.dtype} {cell.device}: {MARKS[cell.status]} "
            f"{cell.status}: {what.splitlines()[0]}")
    return [line, f"    {cell.replay}"] if cell.replay else [line]


def _jobs(kernels: Sequence[tuple[str, Kernel]], args: argparse.Namespace) -> int:
    """``--jobs``, else one worker per CPU, at most WORKERS_PER_ACCELERATOR per accelerator
    among the devices checked on where there is one, and never more than the kernels."""
    if args.jobs is not None:
        return args.jobs
    import os

    from attnproof._machine import WORKERS_PER_ACCELERATOR

    accelerators = {name for _, kernel in kernels
                    for name, absent in cell_devices(kernel, args.device)
                    if absent is None and Device.parse(name).accelerator}
    jobs = os.cpu_count() or 1
    if accelerators:
        jobs = min(jobs, WORKERS_PER_ACCELERATOR * len(accelerators))
    return max(1, min(jobs, len(kernels)))


def _runs_here(kernel: Kernel, chosen: Iterable[str] | None) -> bool:
    return any(absent is None for _, absent in cell_devices(kernel, chosen))


def _check_devices(kernels: Sequence[tuple[str, Kernel]], chosen: Sequence[str] | None) -> None:
    """A device word that no kernel can run on here, or a kernel with no device here, is a
    usage error naming what is present."""
    for _, kernel in kernels:
        if chosen is None and not _runs_here(kernel, None):
            raise DeviceError(f"{kernel.name} is declared for {', '.join(kernel.devices)}; "
                              f"{kernel.framework} has {_present(kernel)} here")
    for word in chosen or ():
        if not any(absent is None for _, kernel in kernels
                   for _, absent in cell_devices(kernel, [word])):
            present = {k.framework: _present(k) for _, k in kernels
                       if unavailable_reason(k.framework) is None}
            listed = "; ".join(f"{f}: {d}" for f, d in present.items()) or "none"
            raise DeviceError(f"no kernel checked here can run on {word} (devices present: "
                              f"{listed})")


def _present(kernel: Kernel) -> str:
    reason = unavailable_reason(kernel.framework)
    return f"no device ({reason})" if reason else ", ".join(devices_of(kernel.framework))


def _default_out(kernels: Sequence[tuple[str, Kernel]],
                 chosen: Sequence[str] | None) -> Path:
    """reports/kernels, or reports/KIND/kernels when an accelerator is among the devices, so a
    GPU run is written beside the CPU one."""
    folder = accelerator_folder(name for _, kernel in kernels
                                for name, absent in cell_devices(kernel, chosen)
                                if absent is None)
    return Path("reports", *([folder] if folder else []), "kernels")


def _progress(kernel: Kernel) -> Callable[[Cell], None]:
    def show(cell: Cell) -> None:
        ratio = f" {format_number(cell.ratio, '.2f')}x" if cell.ratio is not None else ""
        # why a worker stopped is said at once: the matrix is written only at the end
        why = f": {cell.reason}" if cell.status in STOPPED else ""
        others = len(getattr(cell, "other_failures", ()))
        more = f", {others} more failure{'s' * (others > 1)}" if others else ""
        print(f"{kernel.name} {cell.property} {cell.dtype} {cell.device}: "
              f"{MARKS[cell.status]} {cell.status}{ratio} ({cell.cases} cases, "
              f"{cell.seconds:.1f} s{more}){why}", flush=True)

    return show


def _replay(kernels: Sequence[tuple[str, Kernel]], args: argparse.Namespace) -> int:
    if len(kernels) != 1 or not args.property or not args.dtype:
        print("attnproof kernels: --case needs one --kernel, --property and --dtype",
              file=sys.stderr)
        return 2
    try:
        case = Case.from_json(args.case)
    except (ValueError, TypeError) as error:  # not JSON, or a field Case does not have
        print(f"attnproof kernels: --case {args.case!r} is not a case: {error}",
              file=sys.stderr)
        return 2
    try:
        result = replay(kernels[0][1], args.property[0], args.dtype[0], case,
                        (args.device or ["cpu"])[0])
    except ValueError as error:  # a case, property or dtype the check never asks this kernel
        print(f"attnproof kernels: --case: {error}", file=sys.stderr)
        return 2
    print(json.dumps({"case": case.sizes(), "status": result.status, "ratio": result.ratio,
                      "message": result.message, **result.detail}, indent=1, default=str))
    return 1 if result.failed else 0
