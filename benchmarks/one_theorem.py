"""Where the README's one-theorem path spends its time, under each profile, side by side.

`attnproof prove --theorem NAME --profile P` runs as a child process for each profile in turn,
round after round (so both profiles meet the same load), each with its own time log
(``$ATTNPROOF_TIME_LOG``: every process appends one JSON line per stage, in seconds of its own;
``numeric/_time_log.py``) and a cache directory of its own kept across its rounds, as a user's
would be. The first round of each is cold (empty caches); the table gives the medians of the
later rounds: the CPU seconds of the whole command (user + system of the child and the
processes it waited for), its wall seconds, and the seconds of each stage the time log names.

``--against DIR`` runs another checkout (an earlier commit's worktree) the same way in the same
rounds, interleaved, and adds its columns: a change's effect, side by side.

Run: python benchmarks/one_theorem.py [--theorem NAME] [--rounds N] [--against DIR] (about two
minutes with 3 rounds on 2 cores, twice that with --against).
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROFILES = ("default", "quick")


def run_once(repo: Path, theorem: str, profile: str, folder: Path,
             round_number: int) -> dict[str, float]:
    """CPU seconds of one run (key "command") and the seconds of each stage of its time log."""
    log = folder / f"{profile}-{round_number}.jsonl"
    environment = {**os.environ, "ATTNPROOF_CACHE_DIR": str(folder / f"cache-{profile}"),
                   "ATTNPROOF_NO_CACHE": "", "ATTNPROOF_TIME_LOG": str(log),
                   "PYTHONPATH": str(repo)}
    arguments = [sys.executable, "-m", "attnproof", "prove", "--theorem", theorem, "--profile",
                 profile, "--out", str(folder / f"out-{profile}")]
    began = time.perf_counter()
    child = subprocess.Popen(arguments, cwd=repo, env=environment, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(arguments)} exited {os.waitstatus_to_exitcode(status)}")
    stages: collections.Counter = collections.Counter()
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        stages[entry["stage"]] += entry["seconds"]
    return {"command": usage.ru_utime + usage.ru_stime, "wall": wall, **stages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--theorem", default="softmax_shift_invariance")
    parser.add_argument("--rounds", type=int, default=3, help="rounds after the cold one")
    parser.add_argument("--against", type=Path, help="another checkout, run beside this one")
    options = parser.parse_args()
    checkouts = {"this": REPO, **({"against": options.against.resolve()}
                                  if options.against else {})}
    columns = [(c, p) for c in checkouts for p in PROFILES]
    runs: dict[tuple[str, str], list[dict[str, float]]] = {c: [] for c in columns}
    with tempfile.TemporaryDirectory(prefix="attnproof-one-theorem-") as folder:
        for round_number in range(options.rounds + 1):
            for checkout, profile in columns:
                place = Path(folder) / checkout
                place.mkdir(exist_ok=True)
                runs[checkout, profile].append(run_once(checkouts[checkout], options.theorem,
                                                        profile, place, round_number))
    later = {c: runs[c][1:] for c in columns}
    totals = ("command", "wall")
    stages = sorted({s for c in columns for r in later[c] for s in r if s not in totals},
                    key=lambda s: -statistics.median(r.get(s, 0.0) for r in later[columns[0]]))
    names = {c: f"{c[1]}" if len(checkouts) == 1 else f"{c[1]} ({c[0]})" for c in columns}
    print(f"`attnproof prove --theorem {options.theorem}`: CPU seconds, median of "
          f"{options.rounds} warm rounds (cold round: "
          + ", ".join(f"{names[c]} {runs[c][0]['command']:.2f} s" for c in columns) + ")"
          + "".join(f"; {c} = {path}" for c, path in checkouts.items() if len(checkouts) > 1))
    print("| seconds | " + " | ".join(names[c] for c in columns) + " | quick / default |")
    print("|---|" + "---|" * (len(columns) + 1))
    for stage in ["command", "wall", *stages]:
        values = [statistics.median(r.get(stage, 0.0) for r in later[c]) for c in columns]
        ratio = f"{values[1] / values[0]:.2f}" if values[0] else "—"
        label = {"command": "whole command (CPU)", "wall": "whole command (wall)"}.get(
            stage, f"stage: {stage}")
        print(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) + f" | {ratio} |")


if __name__ == "__main__":
    main()
