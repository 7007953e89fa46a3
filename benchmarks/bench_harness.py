"""Speed of the proof harness against a baseline commit, side by side in one run.

The machine is shared and noisy, so only ratios measured in the same run mean anything. The
script installs the baseline commit (default ed9c6b7, before the import-root rename: its CLI is
also ``attnproof prove``) and the current tree into two virtual environments of their own, runs
both, and prints the five ratios of issue 15 with the figures behind them:

  cold        cold ``attnproof prove`` (empty caches), default profile: wall time per theorem,
              current / baseline                                          (goal <= 0.3)
  warm        a second run of the current tree with nothing changed / its cold run (goal <= 0.15)
  throughput  numeric instances per second of worker time (from the results JSON: instances and
              seconds per record), current / baseline                     (goal >= 5)
  compile     JAX compilation's share of numeric time in the current cold run, per backend,
              from the compile log (``$ATTNPROOF_COMPILE_LOG``)            (goal <= 0.25)
  tests       ``pytest -n auto`` / the current cold prove (goal <= 2), and the fast tier
              (``-m "not slow"``, as the README names it) in seconds       (goal <= 60 s)

It also checks that no theorem's verdict changed and that no numeric record has fewer
instances than in the baseline, and says so (exit 1 if either fails). A record that failed in
both runs is not compared: the search stops at its counterexample, and counts only the batches
before it.

Run (a full run takes tens of minutes on 2 cores; choose a subset with --only):
    python benchmarks/bench_harness.py
    python benchmarks/bench_harness.py --only cold,warm,compile --keep /tmp/attnproof-bench
``--keep DIR`` keeps the environments in DIR and reuses them on the next run (the current tree
is reinstalled each time); without it everything lives in a temporary directory.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
BASELINE_COMMIT = "ed9c6b7"
GOALS = ("cold", "warm", "throughput", "compile", "tests")
NEEDS_BASELINE = {"cold", "throughput"}
COMPILE_LOG = "ATTNPROOF_COMPILE_LOG"


# -- environments -------------------------------------------------------------------------------


@dataclass
class Environment:
    name: str
    source: Path
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def attnproof(self) -> Path:
        return self.venv / "bin" / "attnproof"


def baseline_environment(work: Path, commit: str) -> Environment:
    """The baseline commit checked out (git worktree) and installed into a venv of its own."""
    source, venv = work / f"baseline-{commit}", work / f"baseline-{commit}-venv"
    if not source.exists():
        _run(["git", "-C", str(REPOSITORY), "worktree", "add", "--detach", str(source), commit])
    if not (venv / "bin" / "attnproof").exists():
        _make_venv(venv, source)
    return Environment(f"baseline {commit}", source, venv)


def current_environment(work: Path) -> Environment:
    """The working tree as it is (uncommitted changes included), installed into its own venv."""
    venv = work / "current-venv"
    if not (venv / "bin" / "attnproof").exists():
        _make_venv(venv, REPOSITORY)
    else:  # dependencies are there; refresh only the package itself
        _run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--force-reinstall",
              str(REPOSITORY)])
    return Environment("current", REPOSITORY, venv)


def _make_venv(venv: Path, source: Path) -> None:
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "pip"), "install", "-q", f"{source}[jax,mlx]"])


def remove_worktree(source: Path) -> None:
    subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "remove", "--force", str(source)],
                   check=False, capture_output=True)


def _run(command: list[str], **options) -> None:
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **options)


# -- timed runs ---------------------------------------------------------------------------------


@dataclass
class Timed:
    """A command's wall time and its children's CPU time (user + system), in seconds."""

    wall: float
    cpu: float
    code: int
    results: dict | None = None
    compile_log: list[dict] = field(default_factory=list)


def timed(command: list[str], cwd: Path, env: dict) -> Timed:
    print("$", " ".join(map(str, command)), flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    finished = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if finished.returncode not in (0, 1):  # 1 only says a theorem did not come out as declared
        print(finished.stderr[-3000:], file=sys.stderr)
    return Timed(wall, cpu, finished.returncode)


def prove(environment: Environment, work: Path, label: str, cache: Path,
          extra: list[str]) -> Timed:
    """``attnproof prove`` of the installed catalog, run outside any repository; ``cache`` is
    the user cache directory (XDG_CACHE_HOME): empty for a cold run."""
    out = work / f"reports-{label}"
    shutil.rmtree(out, ignore_errors=True)
    log = work / f"compile-{label}.jsonl"
    log.unlink(missing_ok=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), COMPILE_LOG: str(log), "CI": "true"}
    env.pop("PYTHONPATH", None)
    result = timed([str(environment.attnproof), "prove", "--out", str(out), *extra], work, env)
    if not (out / "results.json").exists():
        raise SystemExit(f"{environment.name}: attnproof prove wrote no results (exit "
                         f"{result.code})")
    result.results = json.loads((out / "results.json").read_text())
    if log.exists():
        result.compile_log = [json.loads(line) for line in log.read_text().splitlines()
                              if line.strip()]
    return result


def pytest_run(environment: Environment, work: Path, cache: Path, extra: list[str]) -> Timed:
    """The current tree's test suite with the current environment's interpreter."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "CI": "true"}
    env.pop("PYTHONPATH", None)
    command = [str(environment.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--attnproof-report", str(work / "reports-pytest"), *extra]
    return timed(command, REPOSITORY, env)


# -- figures from results ----------------------------------------------------------------------


def numeric_records(results: dict) -> list[dict]:
    return [r for t in results["theorems"] for r in t.get("numeric", [])
            if r["status"] not in ("skipped",)]


def throughput(results: dict) -> tuple[int, float]:
    """(instances, seconds of worker time) over every numeric record that ran."""
    records = numeric_records(results)
    return sum(r["instances"] for r in records), sum(r["seconds"] for r in records)


def seconds_by_backend(results: dict) -> dict[str, float]:
    found: dict[str, float] = collections.Counter()
    for record in numeric_records(results):
        found[record["backend"]] += record["seconds"]
    return found


def by_record_kind(results: dict) -> dict[str, tuple[int, float]]:
    """(instances, seconds) per backend/dtype/mode, over every theorem."""
    found = collections.defaultdict(lambda: [0, 0.0])
    for record in numeric_records(results):
        kind = found[f"{record['backend']}/{record['dtype']}/{record['mode']}"]
        kind[0] += record["instances"]
        kind[1] += record["seconds"]
    return {k: (n, s) for k, (n, s) in found.items()}


def compile_by_backend(log: list[dict]) -> dict[str, tuple[int, float]]:
    """(compilations, seconds) per backend; a compilation is one backend-compile stage (or
    persistent-cache read), its seconds those of all its stages."""
    count: dict[str, int] = collections.Counter()
    seconds: dict[str, float] = collections.Counter()
    for entry in log:
        backend = entry.get("backend") or "jax (outside a check)"
        seconds[backend] += entry["seconds"]
        count[backend] += entry["stage"] == "compile"
    return {b: (count[b], seconds[b]) for b in seconds}


def compile_by_theorem(log: list[dict]) -> list[tuple[str, int, int, float]]:
    """(theorem, compilations, distinct dtype/shape pairs, seconds), most seconds first."""
    rows = collections.defaultdict(lambda: [0, set(), 0.0])
    for entry in log:
        row = rows[entry.get("theorem") or "(outside a check)"]
        row[0] += entry["stage"] == "compile"
        row[1].add((entry.get("dtype"), entry.get("shape")))
        row[2] += entry["seconds"]
    found = [(name, c, len(shapes), s) for name, (c, shapes, s) in rows.items()]
    return sorted(found, key=lambda row: -row[3])


def verdict_changes(baseline: dict, current: dict) -> tuple[list[str], list[str], list[str]]:
    """(changed verdicts, records with fewer instances, theorems new in the current catalog)."""
    before = {t["name"]: t for t in baseline["theorems"]}
    changed, fewer, new = [], [], []
    for theorem in current["theorems"]:
        old = before.get(theorem["name"])
        if old is None:
            new.append(theorem["name"])
            continue
        if (old["status"], old["ok"]) != (theorem["status"], theorem["ok"]):
            changed.append(f"{theorem['name']}: {old['status']} -> {theorem['status']}")
        fewer += _fewer_instances(theorem["name"], old, theorem)
    missing = sorted(set(before) - {t["name"] for t in current["theorems"]})
    changed += [f"{name}: missing from the current run" for name in missing]
    return changed, fewer, new


def _fewer_instances(name: str, old: dict, new: dict) -> list[str]:
    def key(record):
        return record["backend"], record["dtype"], record["device"], record["mode"]

    now = {key(r): r for r in new.get("numeric", [])}
    lost = []
    for record in old.get("numeric", []):
        found = now.get(key(record))
        if found and record["status"] == found["status"] == "failed":
            continue  # both found a counterexample: a search stops there, whatever it counted
        count = found["instances"] if found else 0
        if count < record["instances"]:
            lost.append(f"{name} {'/'.join(key(record))}: {record['instances']} -> {count}")
    return lost


# -- the report ----------------------------------------------------------------------------------


def per_theorem(run: Timed) -> float:
    return run.wall / max(1, len(run.results["theorems"]))


def report_cold(baseline: Timed, current: Timed) -> bool:
    ratio = per_theorem(current) / per_theorem(baseline)
    for name, run in (("baseline", baseline), ("current", current)):
        print(f"  {name:9s} {len(run.results['theorems'])} theorems, {run.wall:7.1f} s wall, "
              f"{run.cpu:7.1f} s CPU, {per_theorem(run):6.2f} s wall per theorem")
    cpu = (current.cpu / len(current.results["theorems"])) / (
        baseline.cpu / len(baseline.results["theorems"]))
    print(f"  RATIO cold wall per theorem, current / baseline: {ratio:.3f} (goal <= 0.3); "
          f"CPU per theorem: {cpu:.3f}")
    return ratio <= 0.3


def report_warm(cold: Timed, warm: Timed) -> bool:
    ratio = warm.wall / cold.wall
    print(f"  cold {cold.wall:.1f} s wall ({cold.cpu:.1f} s CPU), warm {warm.wall:.1f} s wall "
          f"({warm.cpu:.1f} s CPU)")
    for name, run in (("cold", cold), ("warm", warm)):
        proofs = sum((t.get("symbolic") or {}).get("seconds", 0.0)
                     for t in run.results["theorems"])
        print(f"  {name}: numeric {sum(seconds_by_backend(run.results).values()):.1f} s of "
              f"worker time, {len(run.compile_log)} compile-log entries")
    print(f"  proofs: {proofs:.1f} s as recorded (a warm run reports the cached attempt's time)")
    print(f"  RATIO warm / cold: {ratio:.3f} (goal <= 0.15); CPU {warm.cpu / cold.cpu:.3f}")
    return ratio <= 0.15


def report_throughput(baseline: Timed, current: Timed) -> bool:
    rates = []
    for name, run in (("baseline", baseline), ("current", current)):
        instances, seconds = throughput(run.results)
        rates.append(instances / seconds)
        print(f"  {name:9s} {instances:8d} instances in {seconds:7.1f} s of worker time: "
              f"{instances / seconds:8.0f} /s")
        for kind, (count, spent) in sorted(by_record_kind(run.results).items()):
            print(f"            {kind:22s} {count:7d} instances {spent:7.1f} s "
                  f"{count / max(spent, 1e-9):7.0f} /s")
    ratio = rates[1] / rates[0]
    print(f"  RATIO instances per worker second, current / baseline: {ratio:.2f} (goal >= 5)")
    return ratio >= 5


def report_compile(current: Timed) -> bool:
    numeric = seconds_by_backend(current.results)
    compiled = compile_by_backend(current.compile_log)
    worst = 0.0
    for backend in sorted(set(numeric) | set(compiled)):
        count, seconds = compiled.get(backend, (0, 0.0))
        share = seconds / numeric[backend] if numeric.get(backend) else float("nan")
        if backend in numeric:
            worst = max(worst, share)
        print(f"  {backend:22s} {count:4d} compilations {seconds:7.1f} s of "
              f"{numeric.get(backend, 0.0):7.1f} s numeric: share {share:.3f}")
    total = sum(s for _, s in compiled.values()) / max(1e-9, sum(numeric.values()))
    print(f"  RATIO compilation / numeric time: {total:.3f} overall, worst backend {worst:.3f} "
          "(goal <= 0.25)")
    print("  slowest theorems to compile (compilations, distinct dtype x shape, seconds):")
    for name, count, shapes, seconds in compile_by_theorem(current.compile_log)[:8]:
        print(f"    {name:48s} {count:4d} {shapes:4d} {seconds:7.1f}")
    return worst <= 0.25


def report_tests(cold: Timed, full: Timed, fast: Timed) -> bool:
    ratio = full.wall / cold.wall
    print(f"  pytest -n auto {full.wall:.1f} s (exit {full.code}); cold prove {cold.wall:.1f} s; "
          f"fast tier {fast.wall:.1f} s (exit {fast.code})")
    print(f"  RATIO pytest -n auto / cold prove: {ratio:.2f} (goal <= 2); fast tier "
          f"{fast.wall:.1f} s (goal <= 60 s)")
    return ratio <= 2 and fast.wall <= 60 and full.code == 0 and fast.code == 0


# Verdicts that changed since the baseline on purpose, by later work; each is printed with its
# reason, and any other change fails the comparison.
INTENDED_CHANGES = {
    "free_energy_variational_principle: checked -> proved":
        "the inequality claim kind proves it for all sizes",
    "online_softmax_blockwise: proved -> checked":
        "it runs user code (implementation=): code is checked, never proved",
}


def report_sameness(baseline: Timed, current: Timed) -> bool:
    changed, fewer, new = verdict_changes(baseline.results, current.results)
    intended = [c for c in changed if c in INTENDED_CHANGES]
    changed = [c for c in changed if c not in INTENDED_CHANGES]
    print(f"  verdicts changed: {len(changed)}" + "".join(f"\n    {c}" for c in changed))
    print(f"  verdicts changed on purpose since the baseline: {len(intended)}"
          + "".join(f"\n    {c} ({INTENDED_CHANGES[c]})" for c in intended))
    print(f"  records with fewer instances than the baseline: {len(fewer)}"
          + "".join(f"\n    {f}" for f in fewer[:20]))
    if new:
        print(f"  theorems new since the baseline (not compared): {len(new)}")
    return not changed and not fewer


# -- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    chosen = set(args.only.split(",")) if args.only else set(GOALS)
    unknown = chosen - set(GOALS)
    if unknown:
        raise SystemExit(f"unknown goal(s) {', '.join(sorted(unknown))}; choose from {GOALS}")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="attnproof-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    baseline = None
    try:
        current = current_environment(work)
        if chosen & NEEDS_BASELINE:
            baseline = baseline_environment(work, args.baseline)
        return _measure(chosen, current, baseline, work, args.prove_args.split())
    finally:
        if not args.keep:
            if baseline is not None:
                remove_worktree(baseline.source)
            shutil.rmtree(work, ignore_errors=True)


def _measure(chosen: set, current: Environment, baseline: Environment | None, work: Path,
             extra: list[str]) -> int:
    runs: dict[str, Timed] = {}
    if baseline is not None:  # baseline first: the current run must not get a quieter machine
        runs["baseline"] = prove(baseline, work, "baseline", _fresh(work, "cache-baseline"), extra)
    cache = _fresh(work, "cache-current")
    runs["cold"] = prove(current, work, "cold", cache, extra)
    if "warm" in chosen:
        runs["warm"] = prove(current, work, "warm", cache, extra)
    if "tests" in chosen:
        runs["pytest"] = pytest_run(current, work, _fresh(work, "cache-pytest"), ["-n", "auto"])
        runs["fast"] = pytest_run(current, work, _fresh(work, "cache-fast"),
                                  ["-n", "auto", "-m", "not slow"])
    print(f"\nattnproof harness benchmark, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, "
          f"{os.cpu_count()} CPUs, prove arguments: {' '.join(extra) or '(none)'}")
    reports = {
        "cold": ("1. cold prove", lambda: report_cold(runs["baseline"], runs["cold"])),
        "warm": ("2. warm re-run", lambda: report_warm(runs["cold"], runs["warm"])),
        "throughput": ("3. throughput",
                       lambda: report_throughput(runs["baseline"], runs["cold"])),
        "compile": ("4. compilation", lambda: report_compile(runs["cold"])),
        "tests": ("5. tests", lambda: report_tests(runs["cold"], runs["pytest"], runs["fast"])),
    }
    met = {}
    for goal in (g for g in GOALS if g in chosen):
        title, report = reports[goal]
        print(title)
        met[goal] = report()
    same = True
    if baseline is not None:
        print("same evidence")
        same = report_sameness(runs["baseline"], runs["cold"])
    print("goals met: " + ", ".join(f"{g} {'yes' if ok else 'NO'}" for g, ok in met.items()))
    if baseline is None:
        print("verdicts not compared (no baseline run)")
    else:
        print(f"no verdict changed, no record with fewer instances: {'yes' if same else 'NO'}")
    return 0 if same else 1


def _fresh(work: Path, name: str) -> Path:
    path = work / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", metavar="GOALS",
                        help=f"comma-separated subset of {','.join(GOALS)} (default: all)")
    parser.add_argument("--baseline", default=BASELINE_COMMIT, metavar="COMMIT",
                        help="baseline commit (default: %(default)s)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep environments and reports in DIR and reuse them next time")
    parser.add_argument("--prove-args", default="", metavar="ARGS",
                        help="extra arguments for both prove runs (quoted), e.g. "
                             "'--theorem softmax_jacobian'")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
