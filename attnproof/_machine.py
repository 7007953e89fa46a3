"""What this machine can run: each backend and framework, its version, its devices and the
dtypes on each, the library kernels each device runs, and why something is missing
(``attnproof devices``); and the devices a ``prove`` run uses, with how many workers share an
accelerator.

Devices are named in the one vocabulary of :mod:`attnproof.numeric._devices` (cpu, gpu,
gpu:N); the frameworks' own names (torch ``cuda:N``, JAX's ``cuda`` platform) stay in their
adapters.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attnproof.numeric import (
    ACCELERATORS,
    Device,
    DeviceError,
    accelerator_folder,
    missing_devices,
    selected_devices,
)

if TYPE_CHECKING:
    import argparse

    from ._workers import ConfigurationNames

# workers that may share one accelerator in a `prove` run (each holds a context and its own
# memory on it); measured on one H200: 12 workers ran the catalog in 83 s with on-demand memory
WORKERS_PER_ACCELERATOR = 12

# how to get an accelerator kind a framework lacks here
_HOW_TO_GET = {
    "jax": {"gpu": "jaxlib has no GPU plugin or sees no GPU here (NVIDIA: pip install "
                   "'jax[cuda12]'); the CUDA driver must see the card",
            "tpu": "no TPU here (pip install 'jax[tpu]' on a TPU host)"},
    "mlx": {"gpu": "this MLX build has no GPU (MLX's GPU is Metal on macOS, or the mlx[cuda] "
                   "build on Linux)"},
    "torch": {"gpu": "this torch build has no CUDA or sees no GPU (a CUDA build of torch and "
                     "a visible NVIDIA GPU)"},
}
_TORCH_DTYPES = ("float64", "float32", "float16", "bfloat16")


@dataclass
class Framework:
    """One backend or framework as this machine has it."""

    name: str
    role: str  # "numeric backend" or "kernels only"
    version: str | None = None
    modes: tuple[str, ...] = ()
    # device name -> (what it is, dtypes on it)
    devices: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "version": self.version,
                "modes": list(self.modes),
                "devices": {name: {"description": what, "dtypes": list(dtypes)}
                            for name, (what, dtypes) in self.devices.items()},
                "missing": self.missing}


def survey() -> list[Framework]:
    """Every numeric backend, then torch (kernels only), as this machine has them."""
    from attnproof.numeric import BACKENDS, unavailable_reason

    found = []
    for row in BACKENDS:
        entry = Framework(row.name, "numeric backend", _version(row.package), row.modes)
        reason = unavailable_reason(row)
        if reason is not None:
            entry.missing.append(reason)
        else:
            for name, native in row.devices().items():
                kind = Device.parse(name).kind
                entry.devices[name] = (_describe(native, kind),
                                       tuple(f.name for f in row.dtypes.get(kind, ())))
            entry.missing += _absent_kinds(row.name, row.dtypes, entry.devices)
        found.append(entry)
    found.append(_torch())
    return found


def _torch() -> Framework:
    from attnproof.kernels._frameworks import devices, unavailable_reason

    entry = Framework("torch", "kernels only", _version("torch"))
    reason = unavailable_reason("torch")
    if reason is not None:
        entry.missing.append(reason)
        return entry
    import torch

    for name, native in devices("torch").items():
        what = _host() if native == "cpu" else f"{torch.cuda.get_device_name(native)} ({native})"
        entry.devices[name] = (what, _TORCH_DTYPES)
    entry.missing += _absent_kinds("torch", {"gpu": _TORCH_DTYPES}, entry.devices)
    return entry


def _absent_kinds(name: str, dtypes_by_kind: Mapping[str, object],
                  present: Iterable[str]) -> list[str]:
    kinds = {Device.parse(device).kind for device in present}
    return [f"no {kind}: {_HOW_TO_GET.get(name, {}).get(kind, 'none found here')}"
            for kind in dtypes_by_kind if kind in ACCELERATORS and kind not in kinds]


def _describe(native: object, kind: str) -> str:  # native: a framework's own device object
    if kind == "cpu":
        return _host()
    return str(getattr(native, "device_kind", None) or native)


def _host() -> str:
    return f"host CPU, {platform.machine()}, {os.cpu_count()} cores"


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def library_kernels_by_device() -> dict[str, list[str]]:
    """Device name -> the library kernels (``attnproof kernels --kernel NAME``) that run on it."""
    from attnproof.kernels._frameworks import cell_devices, unavailable_reason
    from attnproof.kernels.library import FRAMEWORK_OF, LIBRARY

    found: dict[str, list[str]] = {}
    for name, declare in LIBRARY.items():
        if unavailable_reason(FRAMEWORK_OF[name]) is not None:
            continue
        for device, absent in cell_devices(declare()):
            if absent is None:
                found.setdefault(device, []).append(name)
    return found


def render(frameworks: list[Framework], kernels: dict[str, list[str]]) -> str:
    lines = [f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, "
             f"{os.cpu_count()} CPUs", ""]
    for entry in frameworks:
        version = entry.version or "not installed"
        modes = f", modes {', '.join(entry.modes)}" if entry.modes else ""
        lines.append(f"{entry.name} {version} ({entry.role}{modes})")
        width = max((len(n) for n in entry.devices), default=0)
        for name, (what, dtypes) in entry.devices.items():
            lines.append(f"  {name:<{width}}  {' '.join(dtypes) or 'no dtype'}  — {what}")
        lines += [f"  {reason}" for reason in entry.missing]
    if kernels:
        lines += ["", "library kernels (attnproof kernels --kernel NAME), by device:"]
        lines += [f"  {device}: {', '.join(names)}" for device, names in kernels.items()]
    return "\n".join(lines)


def devices_command(args: argparse.Namespace) -> int:
    """``attnproof devices``: what this machine can run."""
    frameworks = survey()
    kernels = library_kernels_by_device()
    if args.json:
        print(json.dumps({"frameworks": [f.to_json() for f in frameworks],
                          "library_kernels": kernels}, indent=1))
    else:
        print(render(frameworks, kernels))
    return 0


# -- the devices of a prove run -------------------------------------------------------------------


@dataclass(frozen=True)
class RunDevices:
    """The devices a ``prove`` run checks on, with the backends on each."""

    present: dict[str, tuple[str, ...]]  # every device here -> the installed backends on it
    used: dict[str, tuple[str, ...]]  # those the run's --device and --backend select

    @property
    def accelerators(self) -> list[str]:
        return [name for name in self.used if Device.parse(name).accelerator]

    def jobs(self, asked: int | None) -> int | None:
        """``asked``, else at most WORKERS_PER_ACCELERATOR per accelerator where the run uses
        one (None: the runner's default, one per CPU)."""
        if asked is not None or not self.accelerators:
            return asked
        return min(os.cpu_count() or 1, WORKERS_PER_ACCELERATOR * len(self.accelerators))

    def folder(self) -> str | None:
        """The report folder beside reports/'s CPU run (``gpu``), or None for a CPU run."""
        return accelerator_folder(self.used)

    def describe(self, jobs: int | None) -> str:
        used = ", ".join(f"{name} ({', '.join(rows)})" for name, rows in self.used.items())
        line = f"devices {used}"
        if self.accelerators and jobs is not None:
            line += (f"; {jobs} workers share {', '.join(self.accelerators)} (at most "
                     f"{WORKERS_PER_ACCELERATOR} per accelerator; --jobs N to choose)")
        return line


def run_devices(configurations: Iterable[ConfigurationNames],
                backends: Collection[str] | None = None,
                devices: Collection[str] | None = None) -> RunDevices:
    """The devices present (read from every configuration that can run here) and those a run
    with these filters uses; a device word that names none present raises DeviceError naming
    the devices present."""
    present: dict[str, tuple[str, ...]] = {}
    for backend, _, device, _ in configurations:
        if (backends is None or backend in backends) and backend not in present.get(device, ()):
            present[device] = (*present.get(device, ()), backend)
    absent = missing_devices(devices or (), present)
    if absent:
        listed = ", ".join(f"{name} ({', '.join(rows)})" for name, rows in present.items())
        raise DeviceError(f"no device {' or '.join(absent)} here; devices present: "
                          f"{listed or 'none'} (attnproof devices lists what this machine "
                          "can run)")
    used = {name: present[name] for name in selected_devices(present, devices)}
    return RunDevices(present, used)
