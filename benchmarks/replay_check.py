"""Does each counterexample's replay command reproduce it? Runs them and counts.

    python benchmarks/replay_check.py reports/results.json
    python benchmarks/replay_check.py reports/gpu/results.json \
        reports/gpu/kernels/torch/conformance.json --device gpu --jobs 8 --out replays.md

A failed record of ``attnproof prove`` (``results.json``) and a failing cell of ``attnproof
kernels`` (``conformance.json``) each carry the one command that replays their counterexample.
This runs those commands as a user would paste them (never through a shell, and only
``attnproof replay`` and ``attnproof kernels``; one that would import code named by the report,
a ``--theorems`` file or a ``--kernel module:attribute``, only with ``--allow-code``: a report
is text, and its text alone runs nothing else), and a replay reproduces its failure when
the command exits 1 (``attnproof replay`` exits 1 when the replayed case fails again, 0 when it
passes, 2 on a usage error). A replay that passes where its record failed is the finding this
looks for: a counterexample that depends on something the command does not carry (a device's
kernel choice, a thread count, an uncarried seed).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from attnproof.numeric import CellStatus, Device, DeviceError

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "attnproof.cli"]
# the kernel matrix's words for a failing cell: fails, raised, layout, declaration
FAILING_CELL = tuple(status for status in CellStatus if status.failing)


class Replay(NamedTuple):
    what: str        # the theorem or the kernel and property
    where: str       # dtype and device (and backend, mode)
    command: str     # as the report printed it


class Outcome(NamedTuple):
    replay: Replay
    exit_code: int
    seconds: float
    last_line: str


def failed_records(results: dict, device: str | None) -> list[Replay]:
    """The replay of each failed numeric record of a catalog run."""
    found = []
    for theorem in results.get("theorems", []):
        for record in theorem.get("numeric", []):
            if record.get("status") != "failed" or not _on(record.get("device", ""), device):
                continue
            where = (f"{record['backend']} {record['dtype']} {record['device']} "
                     f"{record['mode']}")
            found.append(Replay(theorem["name"], where, record.get("replay") or ""))
    return found


def failing_cells(conformance: dict, device: str | None) -> list[Replay]:
    """The replay of each failing cell of a kernel matrix, and of each further failure of
    another mechanism the cell kept (``other_failures``)."""
    found = []
    for kernel in conformance.get("kernels", []):
        for cell in kernel.get("cells", []):
            if cell.get("status") not in FAILING_CELL or not _on(cell.get("device", ""), device):
                continue
            what, where = f"{kernel['kernel']} {cell['property']}", \
                f"{cell['dtype']} {cell['device']}"
            found.append(Replay(what, where, cell.get("replay") or ""))
            found += [Replay(f"{what} ({other['mechanism']['status']}, "
                             f"{other['mechanism']['regime']})", where, other["replay"])
                      for other in cell.get("other_failures", [])]
    return found


def _on(device: str, wanted: str | None) -> bool:
    """Whether a record's device is the one asked for, in the one device vocabulary (gpu
    selects gpu:1 too); a device the vocabulary does not know is not selected."""
    try:
        return wanted is None or Device.parse(wanted).covers(device)
    except DeviceError:
        return False


RUNNABLE = ("replay", "kernels")  # the attnproof commands a report's replay may name


def refusal(argv: list[str], allow_code: bool) -> str | None:
    """Why a replay's arguments are not run, or None: another program or command, or code
    that the report names (a theorem file, a kernel's module) without ``allow_code``."""
    if len(argv) < 2 or argv[0] != "attnproof" or argv[1] not in RUNNABLE:
        return "no replay command"
    if allow_code:
        return None
    words = [part for word in argv for part in word.split("=", 1)]  # --flag=value as two
    for flag, value in zip(words, words[1:], strict=False):
        if flag == "--theorems" or (flag == "--kernel" and ":" in value):
            return f"not run: it imports {value} ({flag}); --allow-code runs it"
    return None


def run_replay(replay: Replay, seconds: float, allow_code: bool = False) -> Outcome:
    """Run one replay command; exit 124 when it runs past ``seconds``, -1 when it is not run
    (none, or one :func:`refusal` names)."""
    try:
        argv = shlex.split(replay.command)
    except ValueError:
        argv = []
    refused = refusal(argv, allow_code)
    if refused:
        return Outcome(replay, -1, 0.0, refused)
    started = time.perf_counter()
    try:
        done = subprocess.run(CLI + argv[1:], cwd=ROOT, text=True, capture_output=True,
                              timeout=seconds)
    except subprocess.TimeoutExpired:
        return Outcome(replay, 124, time.perf_counter() - started, f"over {seconds:g} s")
    lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    return Outcome(replay, done.returncode, time.perf_counter() - started,
                   lines[-1][:160] if lines else "")


def table(outcomes: list[Outcome]) -> str:
    reproduced = sum(outcome.exit_code == 1 for outcome in outcomes)
    lines = [f"{reproduced} of {len(outcomes)} replays reproduce their failure (exit 1).", "",
             "| failure | where | replay exit | seconds | note |", "|---|---|---:|---:|---|"]
    order = sorted(outcomes, key=lambda outcome: (outcome.exit_code == 1, outcome.replay))
    for outcome in order:
        note = "" if outcome.exit_code == 1 else outcome.last_line.replace("|", "\\|")
        lines.append(f"| {outcome.replay.what} | {outcome.replay.where} | {outcome.exit_code} "
                     f"| {outcome.seconds:.1f} | {note} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path,
                        help="results.json of attnproof prove or conformance.json of kernels")
    parser.add_argument("--device", help="only failures on this device or kind (gpu, cpu)")
    parser.add_argument("--jobs", type=int, default=2, help="replays run at once")
    parser.add_argument("--seconds", type=float, default=120.0, help="limit of one replay")
    parser.add_argument("--limit", type=int, help="at most this many replays of each report")
    parser.add_argument("--allow-code", action="store_true",
                        help="also run replays that import a theorem file or a kernel module "
                             "named in the report (only for reports you trust)")
    parser.add_argument("--out", type=Path, help="write the table here too")
    args = parser.parse_args()
    replays: list[Replay] = []
    for path in args.reports:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = (failing_cells(data, args.device) if "kernels" in data
                 else failed_records(data, args.device))
        replays += found[:args.limit]
    with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        outcomes = list(pool.map(
            lambda replay: run_replay(replay, args.seconds, args.allow_code), replays))
    text = table(outcomes)
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0 if all(outcome.exit_code == 1 for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
