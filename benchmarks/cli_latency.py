"""CPU seconds the command line takes to answer, against the interpreter importing attnproof.

Each command runs as a child process from the repository root; its CPU time is user + system
of the child and the processes it waited for (``os.wait4``), so a loaded machine's waiting is
not counted. The first run of each command has an empty cache directory of its own (the
catalog's index not built yet: ``attnproof/_index.py``); the later runs share one that the
first `list` filled. Each round runs every command once, side by side, so the ratios compare
processes that ran under the same load; the table gives medians.

Run: python benchmarks/cli_latency.py [--rounds N] (about a minute with 5 rounds on 2 cores).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = ("python -c 'import attnproof'", ["-c", "import attnproof"])
UNCHECKED = "`attnproof list`, every results file checked again"
INDEX_NAME = "catalog-index.json"
COMMANDS = [
    ("attnproof --help", ["-m", "attnproof", "--help"]),
    ("attnproof devices", ["-m", "attnproof", "devices"]),
    ("attnproof list", ["-m", "attnproof", "list"]),
    ("attnproof prove --theorem softmax_jacobiann", ["-m", "attnproof", "prove", "--theorem",
                                                      "softmax_jacobiann"]),
]


def cpu_seconds(arguments: list[str], cache: Path) -> float:
    """User + system seconds of ``python ARGUMENTS`` and of the children it waited for."""
    environment = {**os.environ, "ATTNPROOF_CACHE_DIR": str(cache), "ATTNPROOF_NO_CACHE": "",
                   "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, *arguments], cwd=REPO, env=environment,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1, 2):  # the misspelt theorem exits 2, by design
        raise SystemExit(f"{' '.join(arguments)} exited {child.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="later runs (default: 5)")
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="attnproof-latency-") as folder:
        folder = Path(folder)
        first = {label: cpu_seconds(argv, folder / f"cold-{n}")
                 for n, (label, argv) in enumerate([BASELINE, *COMMANDS])}
        warm = folder / "warm"
        cpu_seconds(COMMANDS[2][1], warm)  # `list` builds the index the later runs read
        later: dict[str, list[float]] = {label: [] for label, _ in [BASELINE, *COMMANDS]}
        later[UNCHECKED] = []
        for n in range(rounds):
            for label, argv in [BASELINE, *COMMANDS]:
                later[label].append(cpu_seconds(argv, warm))
            # beside it, `list` as it was before it kept which results files it had checked:
            # the same index, no memo, so every results file under reports/ is checked again
            fresh = folder / f"unchecked-{n}"
            fresh.mkdir()
            shutil.copy(warm / INDEX_NAME, fresh / INDEX_NAME)
            later[UNCHECKED].append(cpu_seconds(COMMANDS[2][1], fresh))
    base_first, base_later = first[BASELINE[0]], statistics.median(later[BASELINE[0]])
    print(f"CPU seconds (user + system), median of {rounds} later runs; ratio to "
          f"`{BASELINE[0]}`")
    print("| command | first run (empty cache) | ratio | later runs | ratio |")
    print("|---|---|---|---|---|")
    for label, _ in [BASELINE, *COMMANDS]:
        median = statistics.median(later[label])
        print(f"| `{label}` | {first[label]:.2f} s | {first[label] / base_first:.1f}× | "
              f"{median:.2f} s | {median / base_later:.1f}× |")
    median = statistics.median(later[UNCHECKED])
    print(f"| {UNCHECKED} | | | {median:.2f} s | {median / base_later:.1f}× |")


if __name__ == "__main__":
    main()
