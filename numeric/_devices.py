"""Devices: one vocabulary for every command, backend and framework.

A device is written ``cpu``, ``gpu`` or ``tpu`` (a kind: every device of that kind, or the only
one) or ``gpu:N`` (one device of a kind). Records and reports name a present device by its kind
when the machine has one of that kind and ``KIND:N`` when it has several, whatever the
framework calls it (torch ``cuda:N``, JAX's ``cuda`` platform, MLX's ``gpu`` stream); each
framework's adapter maps the word to its own name and nothing else splits device strings.

Worker processes share an accelerator: :func:`share_accelerators` sets JAX's allocator to
allocate on demand instead of taking 75% of a GPU per process (which made every worker after
the first fail to start), before JAX initialises a backend in that process.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Collection, Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

# a framework's native device (a JAX Device, an MLX Device, torch's "cuda:N")
_Native = TypeVar("_Native")

KINDS = ("cpu", "gpu", "tpu")
ACCELERATORS = ("gpu", "tpu")

# what each kind is called by the frameworks that name it otherwise (JAX's platform names)
_PLATFORM_KIND = {"cuda": "gpu", "rocm": "gpu", "gpu": "gpu", "cpu": "cpu", "tpu": "tpu",
                  "METAL": "gpu", "metal": "gpu"}

# other frameworks' words for a kind, named in the error that refuses them
_OTHER_WORDS = {"cuda": "gpu", "rocm": "gpu", "mps": "gpu", "metal": "gpu", "host": "cpu"}

# JAX preallocates 75% of a GPU's memory in every process unless told otherwise
_SHARED_ALLOCATOR = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


class DeviceError(ValueError):
    """A device word that is not in the vocabulary, or names no device present here."""


@dataclass(frozen=True, order=True)
class Device:
    """``kind`` (cpu, gpu, tpu) and ``index`` (None: the kind as a whole, or its only device)."""

    kind: str
    index: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DeviceError(_unknown(str(self.kind)))
        if self.index is not None and self.index < 0:
            raise DeviceError(f"a device number is 0 or more, got {self.index}")

    @classmethod
    def parse(cls, text: str | Device) -> Device:
        """``cpu`` -> Device("cpu"); ``gpu:1`` -> Device("gpu", 1); anything else raises."""
        if isinstance(text, Device):
            return text
        kind, colon, number = str(text).strip().partition(":")
        if kind not in KINDS or (colon and not number.isdigit()):
            raise DeviceError(_unknown(str(text), kind))
        return cls(kind, int(number) if colon else None)

    @property
    def accelerator(self) -> bool:
        return self.kind in ACCELERATORS

    @property
    def number(self) -> int:
        """The device's number among its kind (0 for a kind's only device)."""
        return self.index or 0

    def covers(self, other: str | Device) -> bool:
        """Whether this word selects ``other``: ``gpu`` selects every GPU, ``gpu:1`` the one
        numbered 1 (and ``gpu:0`` the only GPU of a machine with one, named ``gpu``)."""
        other = Device.parse(other)
        return self.kind == other.kind and (self.index is None or self.index == other.number)

    def __str__(self) -> str:
        return self.kind if self.index is None else f"{self.kind}:{self.index}"


def _unknown(text: str, kind: str | None = None) -> str:
    """``unknown device 'cuda'; did you mean 'gpu'? (choose from ...)``"""
    kind = text if kind is None else kind
    guess = _OTHER_WORDS.get(kind.lower()) or next(
        iter(difflib.get_close_matches(kind, KINDS, n=1, cutoff=0.5)), None)
    hint = f"; did you mean {guess!r}?" if guess and guess != kind else ""
    return (f"unknown device {text!r}{hint} (choose from {', '.join(KINDS)}: the same word "
            "for every framework; one of several devices is KIND:N, e.g. gpu:1)")


def kind_of(name: str | Device) -> str:
    return Device.parse(name).kind


def platform_kind(platform: str) -> str:
    """A framework's platform name (JAX's ``cuda``, ``gpu``, ``cpu``, ...) as a device kind."""
    return _PLATFORM_KIND.get(platform, platform)


def named(devices: Sequence[_Native], kind: Callable[[_Native], str],
          number: Callable[[_Native], object]) -> dict[str, object]:
    """Present devices by their names: ``cpu`` when a kind has one device, ``gpu:0``,
    ``gpu:1``, ... when it has several. ``kind(d)`` and ``number(d)`` read a native device."""
    found: dict[str, object] = {}
    for device in devices:
        same_kind = [d for d in devices if kind(d) == kind(device)]
        name = kind(device) if len(same_kind) == 1 else f"{kind(device)}:{number(device)}"
        found[name] = device
    return found


def selected(names: Iterable[str], chosen: Iterable[str | Device] | None) -> list[str]:
    """The device names among ``names`` that any word of ``chosen`` covers (all when None)."""
    if chosen is None:
        return list(names)
    words = [Device.parse(c) for c in chosen]
    return [n for n in names if any(w.covers(n) for w in words)]


def missing(chosen: Iterable[str | Device], present: Collection[str]) -> list[str]:
    """The words of ``chosen`` that cover none of the device names ``present``."""
    return [str(c) for c in chosen if not any(Device.parse(c).covers(p) for p in present)]


def accelerator_folder(names: Iterable[str | Device]) -> str | None:
    """The report folder of a run on these device names, beside the CPU run's: ``gpu`` (or
    ``gpu-tpu``) where any is an accelerator, None for a CPU run."""
    kinds = sorted({kind_of(name) for name in names} & set(ACCELERATORS))
    return "-".join(kinds) or None


def share_accelerators(environ: MutableMapping[str, str] = os.environ) -> None:
    """Let several processes share one accelerator: JAX allocates GPU memory as it needs it
    rather than preallocating most of the card per process. Runs before any backend is
    initialised (importing attnproof calls it); a value the user set is kept."""
    for name, value in _SHARED_ALLOCATOR.items():
        environ.setdefault(name, value)


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is a device running out of memory (XLA, CUDA, torch)."""
    text = f"{type(error).__name__}: {error}"
    return any(sign in text for sign in ("RESOURCE_EXHAUSTED", "out of memory",
                                         "OutOfMemoryError", "Failed to allocate device memory"))


def out_of_memory_reason(device: str, error: BaseException) -> str:
    """The error of a check whose device ran out of memory, naming the device and the fix."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (f"device {device} ran out of memory in this worker ({type(error).__name__}: "
            f"{first[:200]}); other processes may be holding it: run with fewer --jobs, or "
            "check what else uses the device (nvidia-smi)")
