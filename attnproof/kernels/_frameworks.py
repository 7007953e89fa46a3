"""The frameworks a kernel may be written in, and how the checker hands them arrays.

The frameworks are the numeric backends and PyTorch, which kernels are written in but the
numeric checker does not run on. A backend has one adapter, its row in ``numeric/_backends.py``
(placing and reading arrays, devices, differentiating, compiling a call), which
:func:`framework` turns into the checker's view of it; PyTorch's adapter is below. Frameworks
load on first use; one that is not installed, or a backend that cannot start, is reported by
:func:`unavailable_reason`, never raised at import.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from attnproof.numeric import (
    BACKENDS,
    Device,
    DeviceError,
    backend,
    named_devices,
    prepared_module,
    selected_devices,
    start_failure,
    to_numpy,
)
from attnproof.symbolic import FORMATS, TENSORFLOAT32, Format, format_named, with_precision

if TYPE_CHECKING:
    from attnproof.numeric import Backend

# an array of any framework a kernel is written in (NumPy, JAX, MLX, PyTorch): no one type
# covers them all
Array: TypeAlias = Any


class Declared(Protocol):
    """What this module reads of a kernel's declaration (``_declaration.Kernel``, which imports
    this module, so it is named by what it has)."""

    @property
    def name(self) -> str: ...
    @property
    def framework(self) -> str: ...
    @property
    def devices(self) -> tuple[str, ...]: ...
    @property
    def enable_x64(self) -> bool: ...
    def runs_on(self, device: str) -> bool: ...

# frameworks that are not numeric backends: their module, and whether it differentiates
_OTHERS = {"torch": ("torch", True)}
_MODULES = {**{row.name: row.module for row in BACKENDS},
            **{name: module for name, (module, _) in _OTHERS.items()}}
FRAMEWORKS = tuple(_MODULES)


def unavailable_reason(framework: str) -> str | None:
    try:
        importlib.import_module(_MODULES[framework])
    except ImportError as error:
        return f"{framework} is not installed ({error})"
    return None if framework in _OTHERS else start_failure(backend(framework))


def row_of(framework: str) -> Backend | None:
    """The numeric backend's row of ``framework``; None for a framework the kernel checker
    alone knows (PyTorch)."""
    return next((row for row in BACKENDS if row.name == framework), None)


def has_autodiff(framework: str) -> bool:
    """Whether ``framework`` can differentiate a kernel itself (``gradients="autodiff"``)."""
    row = row_of(framework)
    return _OTHERS[framework][1] if row is None else row.vjp is not None


def has_x64_switch(framework: str) -> bool:
    """Whether ``framework`` has a switch for 64-bit types a declaration may ask for."""
    row = row_of(framework)
    return row is not None and row.x64_switch


# precisions a kernel may compute in that are no input dtype: TensorFloat-32 (NVIDIA tensor
# cores: float32's range, 10 fraction bits) rounds the operands of matrix products only
TF32 = TENSORFLOAT32.name


# "bitsN": a precision of N mantissa bits (the implicit one included) with float64's range,
# every result rounded to nearest, ties to even: the probes the precision estimate is
# calibrated with (``_precision``), never a declared precision
PROBE_PREFIX = "bits"


def probe(bits: int) -> Format:
    return with_precision(bits)


def precision_format(name: str) -> Format:
    """The format of a precision's name: an input dtype, TensorFloat-32 or a probe ("bitsN");
    ``ValueError`` naming the known ones for any other name."""
    digits = name[len(PROBE_PREFIX):]
    if name.startswith(PROBE_PREFIX) and digits.isdigit():
        return with_precision(int(digits))
    return format_named(name)


def rounded(array: np.ndarray, dtype: Format) -> np.ndarray:
    """``array`` rounded to ``dtype`` and back to float64: the exact values a kernel receives."""
    if dtype is TENSORFLOAT32:
        return _tf32(array)
    if dtype.name.startswith(PROBE_PREFIX):
        return _to_bits(array, dtype.precision)
    with np.errstate(over="ignore"):  # beyond the format's range rounds to ±inf, as it should
        return np.asarray(array, dtype=np.float64).astype(dtype.numpy_dtype).astype(np.float64)


def reference_unit(dtype: Format, compute: Format) -> float:
    """The unit roundoff that limits a plain reference computing in ``compute`` whose result
    is rounded to ``dtype``: the coarser of the two."""
    return max(dtype.unit_roundoff, compute.unit_roundoff)


def _to_bits(array: npt.ArrayLike, bits: int) -> np.ndarray:
    """``array`` rounded to ``bits`` mantissa bits, to nearest with ties to even, in float64's
    range; non-finite values pass through."""
    x = np.asarray(array, dtype=np.float64)
    fraction, exponent = np.frexp(x)  # x = fraction 2^exponent, 1/2 <= |fraction| < 1
    with np.errstate(all="ignore"):
        kept = np.ldexp(np.rint(np.ldexp(fraction, bits)), exponent - bits)
    return np.where(np.isfinite(x), kept, x)


def _tf32(array: npt.ArrayLike) -> np.ndarray:
    """Round to float32, then to 10 fraction bits, to nearest with ties to even (the rounding
    of cuBLAS's TF32 conversion); non-finite values pass through."""
    single = np.asarray(array, dtype=np.float64).astype(np.float32)
    bits = single.view(np.uint32).astype(np.uint64)
    drop = FORMATS["float32"].precision - TENSORFLOAT32.precision
    half, last = np.uint64(1 << (drop - 1)), (bits >> np.uint64(drop)) & np.uint64(1)
    kept = ((bits + half - np.uint64(1) + last) >> np.uint64(drop)) << np.uint64(drop)
    out = kept.astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(single), out, single).astype(np.float64)


class DtypeUnheld(Exception):  # noqa: N818 -- it reads as what the configuration does
    """Arrays of a dtype the framework's configuration in effect cannot hold (JAX's float64
    with ``jax_enable_x64`` off), with the reason naming the setting: the case is refused, as
    one the kernel does not support is, never run in another dtype."""


@dataclass(frozen=True)
class Framework:
    """How to hand arrays to one framework and differentiate a function in it."""

    name: str
    # (float64 ndarray, the NumPy name of the array's dtype: a format's storage, bool, int32;
    # device name) -> framework array
    put: Callable[[npt.ArrayLike, str, str], Array]
    get: Callable[[Array], np.ndarray]  # framework array -> float64 ndarray
    # (f, (q, k, v), g) -> (dq, dk, dv), f returning the output only
    vjp: Callable[..., tuple[Array, ...]] | None
    # (fn, keywords, mode) -> (q, k, v) -> output; mode "jit" or "eager" where it compiles
    bind: Callable[..., Callable[..., Any]] = (
        lambda fn, keywords, mode=None: _call_as_is(fn, keywords, mode))
    # (fn, keywords, first, mode) -> (q, k, v, g) -> (dq, dk, dv); first picks fn's output
    bind_vjp: Callable[..., Callable[..., Any]] | None = None
    # (array, axis order) -> the same memory seen in that axis order; None: the framework's
    # arrays have no strides a user can see (JAX), so views are not drawn
    permute: Callable[[Array, Any], Array] | None = None
    # (dtype, whether the declaration asks for 64-bit types) -> the context a kernel's call
    # runs in: the user's own configuration of the framework, restored when it returns
    scope: Callable[[str, bool], contextlib.AbstractContextManager] = (
        lambda dtype, asks_x64: contextlib.nullcontext())
    # dtype -> why arrays of it cannot be made under the configuration in effect (None: they
    # can): JAX's float64 with jax_enable_x64 off
    dtype_reason: Callable[[str], str | None] = lambda dtype: None

    def gradients(self, fn: Callable[..., Any], keywords: dict[str, Any],
                  first: Callable[[Any], Array], mode: str | None = None
                  ) -> Callable[[Array, Array, Array, Any], tuple[Array, ...]]:
        if self.bind_vjp is not None:
            return self.bind_vjp(fn, keywords, first, mode)
        forward = self.bind(fn, keywords, mode)
        # set wherever gradients="autodiff" is declared: the declaration refuses that
        # framework without it (``has_autodiff``), and only such kernels come here
        vjp = cast("Callable[..., tuple[Array, ...]]", self.vjp)
        return lambda q, k, v, g: vjp(lambda *p: first(forward(*p)), (q, k, v), g)


def framework(name: str) -> Framework:
    """The checker's view of framework ``name``: a backend's from its row, else its adapter."""
    if name in _OTHERS:
        return ADAPTERS[name]()
    return _from_row(name)


def _from_row(name: str) -> Framework:
    """A numeric backend's adapter as the kernel checker uses it: arrays placed on the device
    asked for (made the default for the kernel's own code), read back as float64 NumPy; an
    array of a dtype the configuration in effect cannot hold (JAX's float64 with x64 off) is
    refused, never made in another dtype."""
    from ._programs import listen

    row = backend(name)
    module = prepared_module(row)
    listen(row)  # counts the programs its calls compile (``_programs``)

    def put(array: npt.ArrayLike, array_dtype: str, device: str) -> Array:
        reason = row.kernel_dtype_reason(array_dtype)
        if reason is not None:
            raise DtypeUnheld(reason)
        native = native_device(name, device)
        row.select(native)
        return row.place(module, array, array_dtype, native)

    return Framework(name, put, to_numpy, row.vjp, bind=row.bind or _call_as_is,
                     bind_vjp=row.bind_vjp, permute=row.permute, scope=row.kernel_scope,
                     dtype_reason=row.kernel_dtype_reason)


def dtype_unavailable_reason(kernel: Declared, dtype: Format) -> str | None:
    """Why ``kernel``'s cells of ``dtype`` cannot run under the configuration its calls get
    (``Framework.scope``), None when they can: JAX's float64 where the user has x64 off and
    the declaration does not ask for it."""
    if unavailable_reason(kernel.framework) is not None:
        return None  # reported as the framework's absence
    fw = framework(kernel.framework)
    with fw.scope(dtype.name, kernel.enable_x64):
        return fw.dtype_reason(dtype.name)


def _call_as_is(fn: Callable[..., Any], keywords: dict[str, Any], mode: str | None = None
                ) -> Callable[[Array, Array, Array], Any]:
    return lambda q, k, v: fn(q, k, v, **keywords)


def devices(framework_name: str) -> dict[str, object]:
    """The devices ``framework_name`` has here, by their names in the one vocabulary (cpu, gpu,
    gpu:N), each with the framework's own device object or name."""
    return DEVICES[framework_name]()


def native_device(framework_name: str, device: str) -> object:
    """The framework's own device for a device name, or a DeviceError naming those present:
    a kernel never runs on another device than the one asked for."""
    present = devices(framework_name)
    if device in present:
        return present[device]
    covered = [name for name in present if Device.parse(device).covers(name)]
    if len(covered) == 1:  # gpu:0 on a machine whose only GPU is named gpu
        return present[covered[0]]
    raise DeviceError(f"{framework_name} has no device {device} here (devices: "
                      f"{', '.join(present) or 'none'})" if not covered else
                      f"{device} names {len(covered)} devices of {framework_name}: "
                      f"{', '.join(covered)}; name one")


# -- torch ---------------------------------------------------------------------------------------


def _torch() -> Framework:
    import torch

    def put(array: npt.ArrayLike, array_dtype: str, device: str) -> Array:
        where = native_device("torch", device)  # gpu:N is torch's cuda:N
        if array_dtype == "bool":
            return torch.from_numpy(np.asarray(array, dtype=bool)).to(device=where)
        values = np.asarray(array, dtype=np.float64 if array_dtype == "float64" else np.float32)
        return torch.from_numpy(values).to(device=where, dtype=getattr(torch, array_dtype))

    def get(array: Array) -> np.ndarray:
        return array.detach().to(device="cpu", dtype=torch.float64).numpy()

    def vjp(f: Callable[..., Any], primals: tuple[Array, ...],
            g: Array | tuple[Array, ...]) -> tuple[Array, ...]:
        # .backward(), as users train: torch.autograd.grad is refused by reentrant
        # checkpointing (torch.utils.checkpoint with use_reentrant=True: "Checkpointing is not
        # compatible with .grad()"), which memory-efficient attention libraries use
        leaves = [p.detach().requires_grad_(True) for p in primals]
        result = f(*leaves)
        # a function of several outputs (O and its lse) takes a cotangent for each; one the
        # kernel detached from its inputs passes none (its inputs' gradients stay as they are)
        outputs, cotangents = (result, g) if isinstance(g, tuple) else ((result,), (g,))
        pairs = [(out, cot) for out, cot in zip(outputs, cotangents, strict=True)
                 if out.requires_grad]
        if pairs:
            torch.autograd.backward([out for out, _ in pairs], [cot for _, cot in pairs])
        return tuple(torch.zeros_like(p) if p.grad is None else p.grad for p in leaves)

    return Framework("torch", put, get, vjp, permute=lambda array, axes: array.permute(*axes))


def _torch_devices() -> dict[str, object]:
    """torch's CPU, and its CUDA devices (``cuda:N``) as gpu or gpu:N."""
    import torch

    cuda = [f"cuda:{n}" for n in range(torch.cuda.device_count())] \
        if torch.cuda.is_available() else []
    return {"cpu": "cpu", **named_devices(cuda, lambda d: "gpu", lambda d: int(d.split(":")[1]))}


# the adapters of the frameworks that are no numeric backend (a test checks every framework
# has one adapter: its row's or one here)
ADAPTERS = {"torch": _torch}
# every framework's devices: a backend's by its row
DEVICES: dict[str, Callable[[], dict[str, object]]] = {
    **{row.name: row.devices for row in BACKENDS}, "torch": _torch_devices}


def cell_devices(kernel: Declared, chosen: Iterable[str] | None = None) -> list[tuple[str, str
                                                                                   | None]]:
    """The devices to check ``kernel`` on, each with why it is skipped (None: it runs): the
    present devices of its framework that both its declaration and ``chosen`` (device words;
    default: the declaration) cover. A word that covers no present device is one skipped
    entry naming the devices present, so a GPU asked for is never run on the CPU instead;
    a declared device the machine lacks is left out unless asked for."""
    reason = unavailable_reason(kernel.framework)
    if reason is not None:
        return [(d, reason) for d in (chosen or ("cpu",))]
    present = devices(kernel.framework)
    if chosen is None:  # the declared devices this machine has
        return [(name, None) for name in present if kernel.runs_on(name)]
    found: list[tuple[str, str | None]] = []
    for word in chosen:
        covered = [name for name in selected_devices(present, [word]) if kernel.runs_on(name)]
        if covered:
            found += [(name, None) for name in covered if (name, None) not in found]
        elif not selected_devices(present, [word]):
            found.append((str(word), f"{kernel.framework} has no device {word} here (devices: "
                                     f"{', '.join(present)})"))
        else:
            found.append((str(word), f"{kernel.name} is declared for {', '.join(kernel.devices)}"
                                     f", not {word}"))
    return found
