"""Speed of the proof harness as users run it: ``attnproof prove`` and ``pytest -n auto``, side by
side in one run, with where the time goes.

The machine may be shared and noisy, so only ratios measured in the same run mean anything.
Every run uses the installed ``attnproof`` (this tree, installed with ``pip install -e .``), a
user cache directory of the benchmark's own (``XDG_CACHE_HOME``), ``CI=true`` (derandomized
searches) and a time log (``$ATTNPROOF_TIME_LOG``, ``numeric/_time_log.py``). It prints five
figures:

  1 compiled twice  in a cold ``attnproof prove``, programs JAX compiled more than once, by
                    JAX's cache key (program source, shapes, dtypes, devices), across every
                    worker and route (goal 0); beside it, the programs traced and lowered
                    again (read back from JAX's cache), and in a warm run, the programs traced
                    and lowered at all
  2 overhead        the cold run's time per phase; the share outside compilation, evaluation,
                    the search and the proofs: start-up and imports, tracing, lowering, the
                    ground truth and the reports (goal <= 0.15)
  3 harness         cold ``pytest -n auto`` (every test, empty caches) / cold ``attnproof
                    prove`` (goal <= 2), and ``pytest -n auto -m harness`` run again with the
                    caches that left / warm ``attnproof prove`` (goal <= 1.5); eager JAX's
                    compilations in both, and where the warm harness's time goes
  4 cache keys      for each source file of the prover and the numeric package, how many stored
                    proofs and programs a change to it recomputes (the keys digest the code)
  5 parallel        cold ``attnproof prove`` with one worker on one CPU against the default
                    (one worker per CPU): efficiency T1 / (n * Tn) (goal >= 0.85); beside it,
                    one worker free to use every CPU

It then compares the cold run's verdicts and instances with the committed
``reports/reference/results.json`` of ``--baseline`` (default HEAD): exit 1 if a verdict changed
or a record has fewer instances.

Run (about 40 minutes on 2 cores; choose a subset with --only):
    python benchmarks/bench_harness.py
    python benchmarks/bench_harness.py --only compiled,overhead,parallel --keep /tmp/bench
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
FIGURES = ("compiled", "overhead", "harness", "keys", "parallel")
TIME_LOG = "ATTNPROOF_TIME_LOG"
# phases outside compilation, evaluation, the search and the proofs (numeric/_time_log.py)
OVERHEAD_PHASES = ("start-up", "imports", "theorem file", "rendering", "trace", "lower",
                   "ground truth", "report")
# phases whose seconds are compiling or loading a program
COMPILE_PHASES = ("compile", "executable-load")


# -- timed runs ---------------------------------------------------------------------------------


@dataclass
class Timed:
    """A command's wall time, its children's CPU time (user + system), its exit code, and what
    it left: the results JSON of a prove run, the time log's lines."""

    label: str
    wall: float
    cpu: float
    code: int
    results: dict | None = None
    log: list[dict] = field(default_factory=list)

    def seconds_by_phase(self) -> dict[str, float]:
        found: dict[str, float] = collections.Counter()
        for entry in self.log:
            found[entry["stage"]] += entry["seconds"]
        return found

    def requests(self, **where) -> list[dict]:
        return [e for e in self.log if e["stage"] == "request"
                and all(e.get(k) == v for k, v in where.items())]


def timed(label: str, command: list[str], cwd: Path, cache: Path, work: Path,
          one_cpu: bool = False) -> Timed:
    """Run ``command`` with ``cache`` as the user cache directory and a fresh time log; with
    ``one_cpu``, it and every process it starts may run on one CPU only."""
    log = work / f"time-{_slug(label)}.jsonl"
    log.unlink(missing_ok=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), TIME_LOG: str(log), "CI": "true"}
    for variable in ("PYTHONPATH", "ATTNPROOF_CACHE_DIR", "ATTNPROOF_NO_CACHE"):
        env.pop(variable, None)
    print("$", " ".join(map(str, command)), f"  [{label}]", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(work / f"{_slug(label)}.out", "w") as output:  # kept: which test failed, and why
        finished = subprocess.run(command, cwd=cwd, env=env, stdout=output,
                                  stderr=subprocess.PIPE, text=True,
                                  preexec_fn=_pin_to_one_cpu if one_cpu else None)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if finished.returncode not in (0, 1):  # 1 only says a theorem or a test did not pass
        print(finished.stderr[-3000:], file=sys.stderr)
    run = Timed(label, wall, cpu, finished.returncode)
    if log.exists():
        run.log = _read_log(log)
    print(f"  {label}: {wall:.1f} s wall, {cpu:.1f} s CPU, exit {finished.returncode}",
          flush=True)
    return run


def _pin_to_one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in label)


def _read_log(path: Path) -> list[dict]:
    entries = []
    for line in path.read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a killed process
            continue
    return entries


def prove(label: str, work: Path, cache: Path, extra: list[str],
          one_cpu: bool = False) -> Timed:
    """``attnproof prove`` of the installed catalog, run outside any repository."""
    out = work / f"reports-{_slug(label)}"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "attnproof", "prove", "--out", str(out), *extra]
    run = timed(label, command, work, cache, work, one_cpu)
    if not (out / "results.json").exists():
        raise SystemExit(f"{label}: attnproof prove wrote no results (exit {run.code})")
    run.results = json.loads((out / "results.json").read_text())
    return run


def pytest_run(label: str, work: Path, cache: Path, extra: list[str]) -> Timed:
    """The repository's test suite, as the README runs it."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--attnproof-report", str(work / f"reports-{_slug(label)}"), "-n", "auto", *extra]
    return timed(label, command, REPOSITORY, cache, work)


# -- 1. programs compiled more than once -----------------------------------------------------


def repeats(requests: list[dict]) -> tuple[int, int]:
    """(keys seen more than once, requests beyond each key's first)."""
    counts = collections.Counter(entry["key"] for entry in requests)
    return sum(1 for n in counts.values() if n > 1), sum(n - 1 for n in counts.values())


def report_compiled(cold: Timed, warm: Timed | None) -> bool:
    requested = cold.requests()
    compiled = [e for e in requested if not e["hit"]]
    twice, extra = repeats(compiled)
    print(f"  cold: {len(requested)} compilation requests, {len(set(e['key'] for e in requested))}"
          f" distinct programs; {len(compiled)} compiled, {len(requested) - len(compiled)} read "
          "back from JAX's cache")
    relowered, again = repeats(requested)
    print(f"  cold: {relowered} programs traced and lowered more than once ({again} times "
          "beyond the first; each read back, not compiled): "
          + _top_modules(requested))
    if warm is not None:
        warm_requests = warm.requests()
        warm_compiled = sum(1 for e in warm_requests if not e["hit"])
        print(f"  warm: {len(warm_requests)} programs traced and lowered "
              f"({warm_compiled} compiled), by route: {_by_route(warm_requests)}")
    print(f"  FIGURE programs compiled more than once in the cold run: {twice} "
          f"({extra} extra compilations) (goal 0)")
    return twice == 0


def _top_modules(requests: list[dict]) -> str:
    counts = collections.Counter(e["key"] for e in requests)
    by_module = collections.Counter(e["module"] for e in requests if counts[e["key"]] > 1)
    return ", ".join(f"{m} {n}" for m, n in by_module.most_common(5)) or "none"


def _by_route(requests: list[dict]) -> str:
    routes = collections.Counter(
        f"{e.get('backend') or 'outside a record'}/{e.get('mode') or '-'}" for e in requests)
    return ", ".join(f"{r} {n}" for r, n in routes.most_common(6)) or "none"


# -- 2. where a cold run's time goes ---------------------------------------------------------


def report_overhead(cold: Timed) -> bool:
    phases = cold.seconds_by_phase()
    total = sum(phases.values())
    print(f"  cold run: {cold.wall:.1f} s wall, {total:.1f} s in logged phases "
          f"({cold.cpu:.1f} s CPU of all processes)")
    for name, seconds in sorted(phases.items(), key=lambda item: -item[1]):
        if seconds > 0:
            kind = "overhead" if name in OVERHEAD_PHASES else "work"
            print(f"    {name:16s} {seconds:8.1f} s  {seconds / total:6.1%}  {kind}")
    overhead = sum(phases.get(name, 0.0) for name in OVERHEAD_PHASES)
    share = overhead / total if total else float("nan")
    print(f"  FIGURE overhead share of the cold run's time: {share:.3f} (goal <= 0.15)")
    return share <= 0.15


# -- 3. the harness against attnproof prove ----------------------------------------------------


def report_harness(cold: Timed, warm: Timed, harness_warm: Timed,
                   pytest_cold: Timed) -> bool:
    warm_ratio = harness_warm.wall / warm.wall
    cold_ratio = pytest_cold.wall / cold.wall
    print(f"  warm prove {warm.wall:.1f} s; warm pytest -n auto -m harness {harness_warm.wall:.1f}"
          f" s (exit {harness_warm.code})")
    print(f"  cold prove {cold.wall:.1f} s; cold pytest -n auto {pytest_cold.wall:.1f} s "
          f"(exit {pytest_cold.code})")
    for run in (pytest_cold, harness_warm):
        eager = run.requests(backend="jax", mode="eager")
        compiled = [e for e in eager if not e["hit"]]
        twice, _ = repeats(compiled)
        print(f"  eager JAX in {run.label}: {len(eager)} primitive programs requested, "
              f"{len(compiled)} compiled, {twice} compiled more than once")
    print("  where the warm harness's time goes, against the warm prove's:")
    _phase_table(harness_warm, warm)
    print(f"  FIGURE warm harness / warm prove: {warm_ratio:.2f} (goal <= 1.5); "
          f"cold pytest -n auto / cold prove: {cold_ratio:.2f} (goal <= 2)")
    return (warm_ratio <= 1.5 and cold_ratio <= 2 and harness_warm.code == 0
            and pytest_cold.code == 0)


def _phase_table(run: Timed, against: Timed) -> None:
    ours, theirs = run.seconds_by_phase(), against.seconds_by_phase()
    eager = collections.Counter()
    for entry in run.log:
        if entry.get("backend") == "jax" and entry.get("mode") == "eager":
            eager[entry["stage"]] += entry["seconds"]
    for name in sorted(set(ours) | set(theirs), key=lambda n: -ours.get(n, 0.0)):
        if ours.get(name, 0.0) or theirs.get(name, 0.0):
            print(f"    {name:16s} {ours.get(name, 0.0):8.1f} s (eager JAX records "
                  f"{eager.get(name, 0.0):6.1f} s)  prove {theirs.get(name, 0.0):8.1f} s")


# -- 4. what a change to the code recomputes -------------------------------------------------


def report_keys() -> bool:
    """For each source file, the stored entries whose key digests it (computed here, in this
    process, from the same functions the caches use)."""
    from attnproof import _cache
    from attnproof.numeric import _executables
    from attnproof.symbolic import discover

    theorems = discover().theorems
    counts: dict[str, int] = collections.Counter()
    for theorem in theorems:
        for path in _cache._core_files() + _cache._kind_files(theorem):
            counts[str(path.relative_to(_cache._symbolic_root()))] += 1
    core = len(_cache._core_files())
    kinds = sorted(name for name in counts if counts[name] < len(theorems))
    print(f"  stored proofs ({len(theorems)} theorems): a change to any of the prover's "
          f"{core} core files recomputes all {len(theorems)}; a change to a kind module "
          "recomputes the theorems built from it:")
    for name in kinds:
        print(f"    symbolic/{name:28s} {counts[name]:4d}")
    numeric_root = Path(_executables.__file__).resolve().parent
    assembling = sorted(p.name for p in numeric_root.glob("*.py"))
    print(f"  stored programs: a change to any of numeric/'s {len(assembling)} modules "
          "recomputes every stored program; a change to numeric/kinds/ only the programs of "
          "the kinds' routes")
    print("  FIGURE keys digest the source (tests/cli/test_cache.py and "
          "tests/numeric/test_executables.py change a function and see it recomputed)")
    return True


# -- 5. parallel efficiency ---------------------------------------------------------------------


def report_parallel(cold: Timed, serial: Timed, alone: Timed, workers: int) -> bool:
    efficiency = serial.wall / (workers * cold.wall)
    print(f"  1 worker on 1 CPU {serial.wall:.1f} s; 1 worker free to use every CPU "
          f"{alone.wall:.1f} s ({alone.cpu / alone.wall:.2f} CPUs busy on average); "
          f"{workers} workers {cold.wall:.1f} s")
    busy = {}
    for run in (serial, alone, cold):
        phases = run.seconds_by_phase()
        busy[run.label] = sum(v for k, v in phases.items() if k != "report")
        print(f"  {run.label}: {busy[run.label]:.1f} s of worker phases, "
              f"{phases.get('report', 0.0):.1f} s writing reports in the parent")
    print(f"  speed-up over one free worker: {alone.wall / cold.wall:.2f}")
    print(f"  FIGURE parallel efficiency T1 / ({workers} x T{workers}), T1 on one CPU: "
          f"{efficiency:.2f} (goal >= 0.85)")
    return efficiency >= 0.85


# -- the verdicts and instances against the committed results --------------------------------


def numeric_records(results: dict) -> list[dict]:
    return [r for t in results["theorems"] for r in t.get("numeric", [])
            if r["status"] not in ("skipped",)]


def verdict_changes(baseline: dict, current: dict,
                    partial: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(changed verdicts, records with fewer instances, theorems new in the current catalog);
    a ``partial`` run (chosen theorems) is not blamed for the theorems it left out."""
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
    missing = [] if partial else sorted(set(before) - {t["name"] for t in current["theorems"]})
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


def committed_results(revision: str) -> dict:
    shown = subprocess.run(["git", "-C", str(REPOSITORY), "show",
                            f"{revision}:reports/reference/results.json"],
                           check=True, capture_output=True, text=True)
    return json.loads(shown.stdout)


def report_sameness(baseline: dict, current: dict, revision: str, partial: bool) -> bool:
    changed, fewer, new = verdict_changes(baseline, current, partial)
    instances = sum(r["instances"] for r in numeric_records(current))
    before = sum(r["instances"] for r in numeric_records(baseline))
    print(f"  against the committed reports/reference/results.json of {revision}: "
          f"{len(current['theorems'])} theorems, {instances:,} instances ({before:,} before)")
    print(f"  verdicts changed: {len(changed)}" + "".join(f"\n    {c}" for c in changed))
    print(f"  records with fewer instances: {len(fewer)}"
          + "".join(f"\n    {f}" for f in fewer[:20]))
    if new:
        print(f"  theorems new since {revision} (not compared): {len(new)}")
    return not changed and not fewer


# -- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    chosen = set(args.only.split(",")) if args.only else set(FIGURES)
    unknown = chosen - set(FIGURES)
    if unknown:
        raise SystemExit(f"unknown figure(s) {', '.join(sorted(unknown))}; choose from "
                         f"{', '.join(FIGURES)}")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="attnproof-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _measure(chosen, work, args.prove_args.split(), args.baseline)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _measure(chosen: set, work: Path, extra: list[str], revision: str) -> int:
    runs: dict[str, Timed] = {}
    cache = _fresh(work, "cache-prove")
    runs["cold"] = prove("cold prove", work, cache, extra)
    if chosen & {"compiled", "harness"}:
        runs["warm"] = prove("warm prove", work, cache, extra)
    if "harness" in chosen:  # every test from empty caches, then the harness again, warm
        tests_cache = _fresh(work, "cache-pytest")
        runs["pytest"] = pytest_run("cold pytest", work, tests_cache, [])
        runs["harness"] = pytest_run("warm harness", work, tests_cache, ["-m", "harness"])
    workers = os.cpu_count() or 1
    if "parallel" in chosen:
        # one worker alone would also use a second CPU (XLA's and NumPy's threads), so the
        # baseline is one worker on one CPU: what each of n workers has when all are busy
        runs["serial"] = prove("cold prove, 1 worker on 1 CPU", work,
                               _fresh(work, "cache-serial"), [*extra, "--jobs", "1"],
                               one_cpu=True)
        runs["alone"] = prove("cold prove, 1 worker", work, _fresh(work, "cache-alone"),
                              [*extra, "--jobs", "1"])
    print(f"\nattnproof harness benchmark, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, "
          f"{workers} CPUs, prove arguments: {' '.join(extra) or '(none)'}")
    reports = {
        "compiled": lambda: report_compiled(runs["cold"], runs.get("warm")),
        "overhead": lambda: report_overhead(runs["cold"]),
        "harness": lambda: report_harness(runs["cold"], runs["warm"], runs["harness"],
                                          runs["pytest"]),
        "keys": report_keys,
        "parallel": lambda: report_parallel(runs["cold"], runs["serial"], runs["alone"],
                                            workers),
    }
    met = {}
    for number, figure in enumerate(FIGURES, 1):
        if figure in chosen:
            print(f"{number}. {figure}")
            met[figure] = reports[figure]()
    print("same evidence")
    same = report_sameness(committed_results(revision), runs["cold"].results, revision,
                           partial=bool(extra))
    print("goals met: " + ", ".join(f"{g} {'yes' if ok else 'NO'}" for g, ok in met.items()))
    print(f"no verdict changed, no record with fewer instances: {'yes' if same else 'NO'}")
    return 0 if same else 1


def _fresh(work: Path, name: str) -> Path:
    path = work / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", metavar="FIGURES",
                        help=f"comma-separated subset of {','.join(FIGURES)} (default: all)")
    parser.add_argument("--baseline", default="HEAD", metavar="REVISION",
                        help="compare with this revision's committed "
                             "reports/reference/results.json (default: %(default)s)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the caches, logs and reports in DIR")
    parser.add_argument("--prove-args", default="", metavar="ARGS",
                        help="extra arguments for every prove run (quoted), e.g. "
                             "'--theorem softmax_jacobian'")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
