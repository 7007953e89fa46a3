"""The whole library matrix (every library kernel this machine runs x every property x every
dtype) before and after, side by side in one run on one machine: the checker at ``--before``
(a commit, checked out in a temporary worktree) and the checker here, cold (an empty cache)
then warm (the same cache again); wall seconds, programs compiled and read back, distinct
shapes, and the share of each kernel's time in compilation, in the kernel's calls and in the
checker (the truth, the judging, the drawing). Then every planted kernel of tests/kernels/
checked by its property with each checker: the same verdict, or the difference named.

Run: python benchmarks/bench_kernel_matrix.py [--before REV] [--examples 20] [--kernel K ...]
     [--property P ...] [--skip-before] [--out DIR]
     (default: the commit before the shape ladder, every installed library kernel and every
     property; the matrix each run wrote, and what this printed, stay in DIR)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the commit before the shape ladder, the lanes and the kernel checker's compilation cache
BEFORE = "3518d49"

# checks every planted kernel by its property in float32 with the checker on PYTHONPATH, and
# prints {name: [property, status, n_k of the counterexample]} as JSON
PLANTED_SCRIPT = """
import json, sys
from tests.kernels import planted
from attnproof.kernels import Case, check_kernel
expected = {name: prop for name, (prop, _) in planted.PLANTED.items()}
expected.update(getattr(planted, "SINKS_WINDOWS", {}))
found = {}
for name, prop in sorted(expected.items()):
    kernel = getattr(planted, name, None)
    if kernel is None:
        continue
    cell = check_kernel(kernel, properties=[prop], dtypes=["float32"],
                        examples=int(sys.argv[1])).cells[0]
    keys = Case.from_json(cell.counterexample["case"]).n_k if cell.counterexample else None
    found[name] = [prop, str(cell.status), keys]
print(json.dumps(found))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--kernel", action="append", help="only these library kernels")
    parser.add_argument("--property", action="append", help="only these properties")
    parser.add_argument("--skip-before", action="store_true", help="run this checker only")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-kernel-matrix-"))
    out.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict] = {}
    worktree = None if args.skip_before else _worktree(args.before, out)
    try:
        if worktree is not None:
            runs["before"] = _matrix(worktree, out / "before", out / "cache-before", args)
        runs["after, cold"] = _matrix(ROOT, out / "after-cold", out / "cache-after", args)
        runs["after, warm"] = _matrix(ROOT, out / "after-warm", out / "cache-after", args)
        planted = {"after": _planted(ROOT, args.examples)}
        if worktree is not None:
            planted["before"] = _planted(worktree, args.examples)
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT,
                           check=False, capture_output=True)
    lines = _report(runs, planted, args)
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"(the matrices and this summary are in {out})")


def _worktree(revision: str, out: Path) -> Path:
    target = out / "before-checkout"
    subprocess.run(["git", "worktree", "add", "--detach", str(target), revision], cwd=ROOT,
                   check=True, capture_output=True)
    return target


def _matrix(root: Path, target: Path, cache: Path, args) -> dict:
    """One ``attnproof kernels`` with the checker at ``root``: its wall seconds and JSON."""
    command = [sys.executable, "-m", "attnproof", "kernels", "--examples", str(args.examples),
               "--out", str(target), *(f"--kernel={k}" for k in args.kernel or ()),
               *(f"--property={p}" for p in args.property or ())]
    environment = {**os.environ, "PYTHONPATH": str(root), "ATTNPROOF_CACHE_DIR": str(cache)}
    target.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with open(target / "terminal.log", "w", encoding="utf-8") as log:
        code = subprocess.run(command, cwd=root, env=environment, stdout=log,
                              stderr=subprocess.STDOUT, check=False).returncode
    seconds = time.perf_counter() - started
    written = target / "conformance.json"
    kernels = json.loads(written.read_text())["kernels"] if written.exists() else []
    return {"seconds": seconds, "exit": code, "kernels": kernels}


def _planted(root: Path, examples: int) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", PLANTED_SCRIPT, str(examples)], cwd=root,
                          env=environment, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _report(runs: dict, planted: dict, args) -> list[str]:
    lines = [f"library matrix at {args.examples} examples a cell, {os.cpu_count()} CPUs:"]
    for name, run in runs.items():
        cells = [c for k in run["kernels"] for c in k["cells"]]
        budget = sum("time budget" in (c.get("reason") or "") for c in cells)
        lines.append(f"  {name:12} {run['seconds']:8.1f} s wall, exit {run['exit']}, "
                     f"{len(run['kernels'])} kernels, {len(cells)} cells "
                     f"({sum(c['status'] == 'fails' for c in cells)} fail, {budget} skipped for "
                     f"budget), {sum(c['cases'] for c in cells):,} cases")
    if "before" in runs:
        cold = runs["after, cold"]["seconds"]
        lines.append(f"  after (cold) / before: {cold / runs['before']['seconds']:.3f}; "
                     f"warm / cold: {runs['after, warm']['seconds'] / cold:.3f}")
    else:
        lines.append(f"  warm / cold: "
                     f"{runs['after, warm']['seconds'] / runs['after, cold']['seconds']:.3f}")
    for name in ("after, cold", "after, warm"):
        lines += [f"per kernel, {name}:", *_per_kernel(runs[name]["kernels"])]
    if "before" in runs:
        lines += ["cells whose verdict differs, before -> after (cold):",
                  *(_differences(runs["before"]["kernels"], runs["after, cold"]["kernels"])
                    or ["  none"])]
    lines += ["planted kernels (float32, by their property):", *_planted_lines(planted)]
    return lines


def _per_kernel(kernels: list[dict]) -> list[str]:
    lines = []
    for kernel in kernels:
        programs = kernel.get("programs") or {}
        seconds = sum(c["seconds"] for c in kernel["cells"]) or 1e-9
        compiling = programs.get("compile_seconds", 0.0)
        calls = programs.get("call_seconds", 0.0) - compiling
        lines.append(
            f"  {kernel['kernel']}: {kernel['seconds']:.1f} s, {len(kernel['cells'])} cells, "
            f"{programs.get('shapes', 0)} shapes, {programs.get('compiled', 0)} programs "
            f"compiled, {programs.get('loaded', 0)} read back, "
            f"{programs.get('compiled_twice', 0)} signatures compiled twice; of its cells' "
            f"time: compiling {compiling / seconds:.0%}, calls {calls / seconds:.0%}, the "
            f"checker {(seconds - compiling - calls) / seconds:.0%}")
    return lines


def _differences(before: list[dict], after: list[dict]) -> list[str]:
    def cells(kernels):
        return {(k["kernel"], c["property"], c["dtype"], c["device"]): c["status"]
                for k in kernels for c in k["cells"]}

    old, new = cells(before), cells(after)
    return [f"  {' '.join(key)}: {old.get(key, 'absent')} -> {new.get(key, 'absent')}"
            for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


def _planted_lines(planted: dict) -> list[str]:
    after = planted["after"]
    before = planted.get("before")
    if "error" in after or (before and "error" in before):
        return [f"  error: {(before or {}).get('error', '')}{after.get('error', '')}"]
    lines = []
    for name, (prop, status, keys) in sorted(after.items()):
        was = "" if before is None else \
            f"before {before[name][1]} (n_k {before[name][2]}), " if name in before else \
            "before absent, "
        lines.append(f"  {name} by {prop}: {was}after {status} (n_k {keys})")
    caught = sum(status == "fails" for _, status, _ in after.values())
    lines.append(f"  caught after: {caught} of {len(after)}" + (
        "" if before is None else
        f"; before: {sum(s == 'fails' for _, s, _ in before.values())} of {len(before)}"))
    return lines


if __name__ == "__main__":
    main()
