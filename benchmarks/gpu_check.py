"""The GPU check: what attnproof does on a machine with an accelerator, in one command.

    python benchmarks/gpu_check.py                    # writes reports/gpu/
    python benchmarks/gpu_check.py --prove-seconds 300 --examples 20

It runs, each as a user would type it and timed:

1. ``attnproof devices``: the frameworks, versions, devices and dtypes this machine has;
2. ``attnproof kernels`` for JAX's and torch's library kernels on the accelerator (``--device
   gpu``): JAX's dot_product_attention jitted, eagerly and through cuDNN; torch's SDPA as users
   call it and each CUDA backend it dispatches to, one by one. Each kernel has a time budget;
   cells not begun by then are reported as skipped, never dropped;
3. ``attnproof prove`` with the defaults, so on every device present (the CPU and the GPU),
   which on a machine with a GPU writes ``reports/gpu/`` beside the CPU run's ``reports/``.
   Stopped with SIGTERM at ``--prove-seconds``, it keeps the theorems finished as a partial
   report;
4. with ``--pytest-kernel SPEC``, the same kernel checker under pytest, as a user's test suite
   runs it: ``pytest -n W --attnproof-kernel SPEC --attnproof-device gpu`` in an empty folder
   (so that only the kernels' cells are collected), whose session matrix lands in
   ``reports/gpu/pytest/kernels/``.

and writes ``reports/gpu/gpu_check.md``: the machine, each command with its exit code and wall
time. On a machine without the device it asks for, each step says so (exit 2) and the check
still completes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "reports" / "gpu"
CLI = [sys.executable, "-m", "attnproof.cli"]

# each framework's library kernels, and the seconds each may take (the budget of every
# `attnproof kernels --budget`): JAX's jitted calls compile one program per shape
KERNELS = {"jax": (("jax", "jax-eager", "jax-cudnn"), 60.0),
           "torch": (("torch", "torch-math", "torch-flash", "torch-efficient", "torch-cudnn"),
                     35.0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="gpu", help="device word for the kernel checks")
    parser.add_argument("--examples", type=int, default=20, help="examples per kernel cell")
    parser.add_argument("--budget-scale", type=float, default=1.0,
                        help="multiply every kernel's time budget by this")
    parser.add_argument("--prove-seconds", type=float, default=240.0,
                        help="SIGTERM attnproof prove after this many seconds")
    parser.add_argument("--prove-args", default="",
                        help="extra arguments for attnproof prove (e.g. '--theorem NAME')")
    parser.add_argument("--skip", action="append", default=[],
                        help="leave out a step: devices, jax, torch, prove")
    parser.add_argument("--pytest-kernel", action="append", default=[], metavar="SPEC",
                        help="also check this kernel through the pytest plugin; repeatable")
    parser.add_argument("--pytest-select", default=None, metavar="EXPR",
                        help="pytest -k expression for those cells (e.g. 'float32')")
    parser.add_argument("--pytest-workers", type=int, default=4, help="pytest -n")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    steps: list[tuple[str, int, float]] = []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if "devices" not in args.skip:
        steps.append(_step(CLI + ["devices"], env, OUT / "devices.txt"))
    for framework, (kernels, seconds) in KERNELS.items():
        if framework in args.skip:
            continue
        command = CLI + ["kernels", "--device", args.device, "--examples", str(args.examples),
                         "--out", str(OUT / "kernels" / framework),
                         "--budget", f"{seconds * args.budget_scale:g}"]
        for name in kernels:
            command += ["--kernel", name]
        steps.append(_step(command, env, OUT / f"kernels-{framework}.log"))
    if "prove" not in args.skip:
        steps.append(_step(CLI + ["prove", *args.prove_args.split()], env, OUT / "prove.log",
                           stop_after=args.prove_seconds))
    if args.pytest_kernel:
        steps.append(_pytest_kernels(args, env))
    _summary(steps)
    return 0


def _pytest_kernels(args, env: dict):
    """The kernel checker as a pytest session: an empty folder, so that the plugin's cells are
    the only tests, with the repository importable and the plugin loaded where the package is
    not installed (its entry point then absent)."""
    folder = OUT / "pytest"
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               "-n", str(args.pytest_workers), "--attnproof-device", args.device,
               "--attnproof-kernel-examples", str(args.examples),
               "--attnproof-report", str(folder)]
    if not any(point.name == "attnproof"
               for point in importlib.metadata.entry_points(group="pytest11")):
        command += ["-p", "attnproof.pytest_plugin"]
    for spec in args.pytest_kernel:
        command += ["--attnproof-kernel", spec]
    if args.pytest_select:
        command += ["-k", args.pytest_select]
    path = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return _step(command, {**env, "PYTHONPATH": path}, OUT / "pytest-kernels.log", cwd=folder,
                 shown=" ".join(["pytest", *command[3:]]))


def _step(command: list[str], env: dict, log: Path, stop_after: float | None = None,
          cwd: Path = ROOT, shown: str | None = None):
    """Run one command, its output to the terminal and ``log``; SIGTERM at ``stop_after``."""
    shown = shown or " ".join(["attnproof", *command[len(CLI):]])
    print(f"\n$ {shown}", flush=True)
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        pump = threading.Thread(target=_copy, args=(process.stdout, sink), daemon=True)
        pump.start()
        try:
            process.wait(timeout=stop_after)
        except subprocess.TimeoutExpired:
            print(f"(stopping after {stop_after:g} s: SIGTERM)", flush=True)
            process.send_signal(signal.SIGTERM)
            process.wait()
        pump.join()
    seconds = time.perf_counter() - started
    print(f"(exit {process.returncode}, {seconds:.1f} s)", flush=True)
    return shown, process.returncode, seconds


def _copy(stream, sink) -> None:
    for line in stream:
        sys.stdout.write(line)
        sys.stdout.flush()
        sink.write(line)


def _summary(steps) -> None:
    lines = ["# GPU check", "",
             f"Run by `python benchmarks/gpu_check.py` on {platform.node() or 'a machine'} "
             f"({platform.system()} {platform.machine()}, Python {platform.python_version()}, "
             f"{os.cpu_count()} CPUs), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
             "`devices.txt` lists the frameworks and devices; `kernels/FRAMEWORK/` holds each "
             "conformance matrix; the catalog's report is in this folder.", "",
             "| command | exit | seconds |", "|---|---:|---:|"]
    lines += [f"| `{shown}` | {code} | {seconds:.1f} |" for shown, code, seconds in steps]
    (OUT / "gpu_check.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\nwrote {OUT / 'gpu_check.md'}")


if __name__ == "__main__":
    sys.exit(main())
