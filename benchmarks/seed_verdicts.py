"""The catalog from fresh seeds: does a verdict depend on the run's draws? ``attnproof prove``
runs ``--runs`` times, each outside CI (so every search draws a fresh seed), each into a
directory of its own; then a line per theorem whose status differs between runs (or is not the
one its ``expect`` asks for in some run), a line per numeric record whose status differs, and
each run's exit code and time.

Run: python benchmarks/seed_verdicts.py [--runs 10] [--planted] [--out DIR] [--jobs N]
     [-- extra arguments for attnproof prove, e.g. --theorem NAME]

``--planted`` adds the planted theorems of ``tests/planted`` (refuted ones must stay refuted,
true ones must stay true). Every difference is a finding: a search that misses from some seeds,
or a model that does not hold. A run is a full ``attnproof prove``: about 2-4 minutes each on
two quiet cores once the caches are warm.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(index: int, out: Path, args) -> tuple[int, float, dict]:
    """One fresh-seed ``attnproof prove``: its exit code, wall seconds and results."""
    target = out / f"run-{index}"
    command = [sys.executable, "-m", "attnproof", "prove", "--out", str(target),
               *(["--theorems", str(ROOT / "tests" / "planted")] if args.planted else []),
               *(["--jobs", str(args.jobs)] if args.jobs else []), *args.extra]
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "ATTNPROOF_PROFILE")}
    started = time.perf_counter()
    with open(target.with_suffix(".log"), "w", encoding="utf-8") as log:
        code = subprocess.run(command, cwd=ROOT, env=environment, stdout=log,
                              stderr=subprocess.STDOUT, check=False).returncode
    seconds = time.perf_counter() - started
    results = target / "results.json"
    return code, seconds, json.loads(results.read_text()) if results.exists() else {}


def _statuses(runs: list[dict]):
    """Per theorem, the statuses seen and whether each was as expected; per record, the
    statuses seen."""
    theorems: dict[str, list] = defaultdict(list)
    records: dict[tuple, list] = defaultdict(list)
    for results in runs:
        for theorem in results.get("theorems", []):
            theorems[theorem["name"]].append((theorem["status"], theorem["ok"]))
            for r in theorem["numeric"]:
                key = (theorem["name"], r["backend"], r["dtype"], r["device"], r["mode"])
                records[key].append(r["status"])
    return theorems, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--planted", action="store_true")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument("extra", nargs="*", help="after --: more arguments for attnproof prove")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="attnproof-seeds-"))
    out.mkdir(parents=True, exist_ok=True)
    runs, codes = [], []
    for index in range(args.runs):
        code, seconds, results = _run(index, out, args)
        runs.append(results)
        codes.append(code)
        print(f"run {index}: exit {code}, {seconds:.0f} s, "
              f"{len(results.get('theorems', []))} theorems ({out / f'run-{index}'})", flush=True)
    theorems, records = _statuses(runs)
    varying = {name: seen for name, seen in theorems.items()
               if len({s for s, _ in seen}) > 1 or not all(ok for _, ok in seen)}
    for name, seen in sorted(varying.items()):
        print(f"THEOREM {name}: " + " ".join(s + ("" if ok else "(not as expected)")
                                             for s, ok in seen))
    moving = {key: seen for key, seen in records.items() if len(set(seen)) > 1}
    for key, seen in sorted(moving.items()):
        print(f"RECORD {' '.join(key)}: {' '.join(seen)}")
    print(f"FIGURE {len(theorems)} theorems over {args.runs} fresh-seed runs: {len(varying)} "
          f"with more than one verdict or one not as expected; {len(moving)} of {len(records)} "
          f"records with more than one status; exit codes {sorted(set(codes))}")
    sys.exit(0 if not varying and set(codes) == {0} else 1)


if __name__ == "__main__":
    main()
