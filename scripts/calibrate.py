"""Calibration evidence for the tolerance model (numeric/_tolerance.py).

Runs every catalog theorem and every planted false variant on every available backend (default
mode) and dtype, across many Hypothesis seeds, and prints per theorem and dtype:

* for a true claim, the largest error ratio (error / its limit, over every comparison) any check
  needed: above 1 is a false alarm (a record with too few decided instances to pass is not);
* for a false claim, the smallest ratio (lhs-rhs error / its limit, in float64 or within the
  format) that any seed's search produced: at most 1 means the format could not see the error.

Where the two overlap in a dtype, the checker does not decide truth in that format: such records
come out "not-decisive". A false claim that *passes* anywhere is a survivor, a bug.

    python scripts/calibrate.py                       # 20 seeds, every backend and dtype
    python scripts/calibrate.py --seeds 5 --backends numpy --jobs 2
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
PLANTED = REPO / "tests" / "planted"


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--backends", default=None, help="comma-separated; default: available")
    parser.add_argument("--dtypes", default=None, help="comma-separated; default: all")
    parser.add_argument("--theorem", action="append", help="only these theorems")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--jobs", type=int, default=2)
    return parser.parse_args(argv)


def _theorems():
    from attnproof.symbolic import discover

    return discover().theorems + discover([PLANTED]).theorems


def _tasks(args) -> list[tuple[str, str, str, str, str]]:
    from attnproof import numeric
    from attnproof.numeric._backends import backend as backend_named

    backends = args.backends.split(",") if args.backends else None
    dtypes = args.dtypes.split(",") if args.dtypes else None
    tasks = []
    for theorem in _theorems():
        if args.theorem and theorem.name not in args.theorem:
            continue
        for backend, dtype, device, mode in numeric.available_configurations(theorem):
            if mode != backend_named(backend).default_mode or device != "cpu":
                continue
            if (backends and backend not in backends) or (dtypes and dtype not in dtypes):
                continue
            tasks.append((theorem.name, backend, dtype, device, mode))
    return tasks


# a lower format's failure the theorem declares with unstable_in=
DECLARED = "declared-unstable"


def _run(task, seeds: int, profile: str) -> tuple:
    """One configuration across ``seeds`` seeds: (task, expect, statuses, ratios)."""
    from attnproof.numeric._search import search

    theorem = next(t for t in _theorems() if t.name == task[0])
    statuses, needed, truth = [], [], []
    for seed in range(seeds):
        record, ratios = search(theorem, *task[1:], profile=profile, seed=seed)
        declared = (task[2] in theorem.unstable_in and record.status == "failed"
                    and not record.refutes)
        statuses.append(DECLARED if declared else record.status)
        needed.append(ratios.needed)
        truth.append(ratios.truth)
    return task, theorem.expect, statuses, needed, truth


def main(argv=None) -> int:
    args = parse(argv)
    tasks = _tasks(args)
    start = time.perf_counter()
    # spawn: the parent has loaded JAX and MLX, whose threads do not survive a fork
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(_run, tasks, [args.seeds] * len(tasks),
                                [args.profile] * len(tasks)))
    summary = _report(results)
    print(f"\n{len(tasks)} configurations x {args.seeds} seeds in "
          f"{time.perf_counter() - start:.0f} s (profile {args.profile})")
    return 0 if summary["false alarms"] == 0 and summary["survivors"] == 0 else 1


def _report(results) -> dict:
    rows = defaultdict(lambda: {"needed": 0.0, "produced": math.inf, "statuses": []})
    by_dtype = defaultdict(lambda: {"needed": 0.0, "produced": math.inf})
    false_alarms, survivors = [], []
    for (name, backend, dtype, _, _), expect, statuses, needed, truth in results:
        dtype = _label(backend, dtype)
        row = rows[(name, dtype)]
        row["expect"] = expect
        row["statuses"] += [f"{backend}:{s}" for s in statuses]
        if expect == "holds":
            row["needed"] = max(row["needed"], *needed)
            by_dtype[dtype]["needed"] = max(by_dtype[dtype]["needed"], *needed)
            # too-few is no verdict (fewer decided instances than a pass needs), and an
            # instability the theorem declares (unstable_in=) is the expected outcome: no alarm
            false_alarms += [(name, backend, dtype, s) for s in statuses
                             if s not in ("passed", "too-few", DECLARED)]
        else:
            row["produced"] = min(row["produced"], *truth)
            by_dtype[dtype]["produced"] = min(by_dtype[dtype]["produced"], *truth)
            survivors += [(name, backend, dtype) for s in statuses if s == "passed"]
    _print_rows(rows)
    _print_dtypes(by_dtype)
    print(f"\nfalse alarms (a true claim not passed): {len(false_alarms)}")
    for alarm in sorted(set(false_alarms)):
        print("  ", *alarm)
    print(f"surviving false variants (a false claim passed): {len(survivors)}")
    for survivor in sorted(set(survivors)):
        print("  ", *survivor)
    return {"false alarms": len(false_alarms), "survivors": len(survivors)}


def _label(backend_name: str, dtype: str) -> str:
    """``float64~float32`` for a dtype measured with another's epsilon (MLX float64)."""
    from attnproof.numeric._backends import backend
    from attnproof.symbolic import format_named

    measured = backend(backend_name).measured_as(format_named(dtype)).name
    return dtype if measured == dtype else f"{dtype}~{measured}"


def _print_rows(rows) -> None:
    print(f"{'theorem':44} {'dtype':9} {'expect':8} {'true needs':>11} {'false gives':>12}  "
          "outcomes")
    for (name, dtype), row in sorted(rows.items()):
        needed = f"{row['needed']:.3g}" if row["expect"] == "holds" else ""
        produced = f"{row['produced']:.3g}" if row["expect"] != "holds" else ""
        tally = defaultdict(int)
        for status in row["statuses"]:
            tally[status] += 1
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
        print(f"{name[:44]:44} {dtype:9} {row['expect']:8} {needed:>11} {produced:>12}  "
              f"{outcomes}")


def _print_dtypes(by_dtype) -> None:
    print(f"\n{'dtype':9} {'largest ratio a true check needed':>34} "
          f"{'smallest ratio a false variant gave':>36}  verdict")
    for dtype, values in sorted(by_dtype.items()):
        overlap = values["produced"] <= max(values["needed"], 1.0)
        verdict = "overlap: not decisive for some claims" if overlap else "separated"
        print(f"{dtype:9} {values['needed']:34.3g} {values['produced']:36.3g}  {verdict}")


if __name__ == "__main__":
    sys.exit(main())
