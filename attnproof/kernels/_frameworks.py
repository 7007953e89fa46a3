"""One adapter per framework: moving NumPy arrays in and out, and differentiating a kernel.

The frameworks a kernel may be written in are the numeric backends (their rows in
``numeric/_backends.py`` name the module and say whether it differentiates) and PyTorch, which
kernels are written in but the numeric checker does not run on. Each has its adapter below.
Frameworks load on first use; one that is not installed is reported by
:func:`unavailable_reason`, never raised at import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnproof.numeric import BACKENDS, Device, DeviceError, named_devices

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
    return None


def has_autodiff(framework: str) -> bool:
    """Whether ``framework`` can differentiate a kernel itself (``gradients="autodiff"``)."""
    for row in BACKENDS:
        if row.name == framework:
            return row.autodiff
    return _OTHERS[framework][1]


# precisions a kernel may compute in that are no input dtype: TensorFloat-32 (NVIDIA tensor
# cores: float32's range, 10 fraction bits) rounds the operands of matrix products only
TF32 = "tensorfloat32"
TF32_FRACTION_BITS = 10


# "bitsN": a precision of N mantissa bits (the implicit one included) with float64's range,
# every result rounded to nearest, ties to even: the probes the precision estimate is
# calibrated with (``_precision``), never a declared precision
PROBE_PREFIX = "bits"


def probe(bits: int) -> str:
    return f"{PROBE_PREFIX}{bits}"


def _probe_bits(name: str) -> int | None:
    if name.startswith(PROBE_PREFIX) and name[len(PROBE_PREFIX):].isdigit():
        return int(name[len(PROBE_PREFIX):])
    return None


def numpy_dtype(name: str):
    """The NumPy dtype of ``name``; a compute-only precision is stored in its container."""
    if name == "bool":
        return np.dtype(bool)
    if name == TF32:
        return np.dtype(np.float32)
    if _probe_bits(name) is not None:
        return np.dtype(np.float64)
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def rounded(array: np.ndarray, dtype: str) -> np.ndarray:
    """``array`` rounded to ``dtype`` and back to float64: the exact values a kernel receives."""
    if dtype == TF32:
        return _tf32(array)
    if _probe_bits(dtype) is not None:
        return _to_bits(array, _probe_bits(dtype))
    return np.asarray(array, dtype=np.float64).astype(numpy_dtype(dtype)).astype(np.float64)


def machine_epsilon(dtype: str) -> float:
    """The machine epsilon of ``dtype`` (2^-fraction bits), compute-only precisions included."""
    if dtype == TF32:
        return 2.0 ** -TF32_FRACTION_BITS
    if _probe_bits(dtype) is not None:
        return 2.0 ** (1 - _probe_bits(dtype))
    import ml_dtypes

    return float(ml_dtypes.finfo(numpy_dtype(dtype)).eps)


def _to_bits(array, bits: int) -> np.ndarray:
    """``array`` rounded to ``bits`` mantissa bits, to nearest with ties to even, in float64's
    range; non-finite values pass through."""
    x = np.asarray(array, dtype=np.float64)
    fraction, exponent = np.frexp(x)  # x = fraction 2^exponent, 1/2 <= |fraction| < 1
    with np.errstate(all="ignore"):
        kept = np.ldexp(np.rint(np.ldexp(fraction, bits)), exponent - bits)
    return np.where(np.isfinite(x), kept, x)


def _tf32(array) -> np.ndarray:
    """Round to float32, then to 10 fraction bits, to nearest with ties to even (the rounding
    of cuBLAS's TF32 conversion); non-finite values pass through."""
    single = np.asarray(array, dtype=np.float64).astype(np.float32)
    bits = single.view(np.uint32).astype(np.uint64)
    drop = 23 - TF32_FRACTION_BITS
    half, last = np.uint64(1 << (drop - 1)), (bits >> np.uint64(drop)) & np.uint64(1)
    kept = ((bits + half - np.uint64(1) + last) >> np.uint64(drop)) << np.uint64(drop)
    out = kept.astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(single), out, single).astype(np.float64)


@dataclass(frozen=True)
class Framework:
    """How to hand arrays to one framework and differentiate a function in it."""

    name: str
    put: Callable  # (float64 ndarray, dtype name, device name) -> framework array
    get: Callable  # framework array -> float64 ndarray
    vjp: Callable | None  # (f, (q, k, v), g) -> (dq, dk, dv), f returning the output only
    # (fn, keywords, mode) -> (q, k, v) -> output; mode "jit" or "eager" where it compiles
    bind: Callable = lambda fn, keywords, mode=None: lambda q, k, v: fn(q, k, v, **keywords)
    # (fn, keywords, first, mode) -> (q, k, v, g) -> (dq, dk, dv); first picks fn's output
    bind_vjp: Callable | None = None
    # (array, axis order) -> the same memory seen in that axis order; None: the framework's
    # arrays have no strides a user can see (JAX), so views are not drawn
    permute: Callable | None = None

    def gradients(self, fn, keywords, first, mode=None):
        if self.bind_vjp is not None:
            return self.bind_vjp(fn, keywords, first, mode)
        forward = self.bind(fn, keywords, mode)
        return lambda q, k, v, g: self.vjp(lambda *p: first(forward(*p)), (q, k, v), g)


def framework(name: str) -> Framework:
    return ADAPTERS[name]()


def devices(framework_name: str) -> dict[str, object]:
    """The devices ``framework_name`` has here, by their names in the one vocabulary (cpu, gpu,
    gpu:N), each with the framework's own device object or name."""
    return DEVICES[framework_name]()


def native_device(framework_name: str, device: str):
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


# -- numpy ---------------------------------------------------------------------------------------


def _numpy() -> Framework:
    def put(array, dtype, device):
        native_device("numpy", device)
        return np.asarray(array).astype(numpy_dtype(dtype))

    return Framework("numpy", put, _float64, None, permute=np.transpose)


def _numpy_devices() -> dict[str, object]:
    return {"cpu": "cpu"}


def _float64(array) -> np.ndarray:
    return np.asarray(array).astype(np.float64)


# -- jax -----------------------------------------------------------------------------------------


def _jax() -> Framework:
    import jax

    jax.config.update("jax_enable_x64", True)  # float64 inputs stay float64

    def put(array, dtype, device):
        return jax.device_put(np.asarray(array).astype(numpy_dtype(dtype)),
                              native_device("jax", device))

    def vjp(f, primals, g):
        _, pullback = jax.vjp(f, *primals)
        return pullback(g)

    return Framework("jax", put, lambda a: np.asarray(a).astype(np.float64), vjp, _jax_bind,
                     _jax_bind_vjp)


_JITTED: dict = {}


def _split_keywords(keywords):
    """Array keywords (traced) apart from the others (static, closed over), or None for the
    statics when one of them cannot be hashed."""
    import jax

    arrays = {k: v for k, v in keywords.items() if isinstance(v, jax.Array)}
    statics = tuple(sorted((k, v) for k, v in keywords.items() if k not in arrays))
    try:
        hash(statics)
    except TypeError:
        return arrays, None
    return arrays, statics


def _jax_bind(fn, keywords, mode=None):
    """``fn`` with its keywords, under ``jit`` (the default mode): compiled once per shape,
    dtype and static keyword, where eager dispatch would compile every primitive anew for each
    shape. ``mode="eager"`` calls it as it stands, as a user's eager code does."""
    import jax

    arrays, statics = _split_keywords(keywords)
    if statics is None or mode == "eager":  # an unhashable keyword: run eagerly
        return lambda q, k, v: fn(q, k, v, **keywords)
    key = ("forward", fn, statics)
    if key not in _JITTED:
        _JITTED[key] = jax.jit(lambda q, k, v, arrays: fn(q, k, v, **arrays, **dict(statics)))
    return lambda q, k, v: _JITTED[key](q, k, v, arrays)


def _jax_bind_vjp(fn, keywords, first, mode=None):
    """The VJP of ``fn`` as one jitted program (forward and backward compiled together), or
    eagerly with ``mode="eager"``."""
    import jax

    arrays, statics = _split_keywords(keywords)
    if statics is None or mode == "eager":
        return lambda q, k, v, g: jax.vjp(lambda *p: first(fn(*p, **keywords)), q, k, v)[1](g)
    key = ("vjp", fn, statics, first)
    if key not in _JITTED:
        def pullback(q, k, v, g, arrays):
            def forward(*p):
                return first(fn(*p, **arrays, **dict(statics)))

            return jax.vjp(forward, q, k, v)[1](g)

        _JITTED[key] = jax.jit(pullback)
    return lambda q, k, v, g: _JITTED[key](q, k, v, g, arrays)


def _jax_devices() -> dict[str, object]:
    from attnproof.numeric import jax_devices as every_platform

    return every_platform()


# -- mlx -----------------------------------------------------------------------------------------


def _mlx() -> Framework:
    import mlx.core as mx

    def put(array, dtype, device):
        mx.set_default_device(native_device("mlx", device))
        if dtype == "bool":
            return mx.array(np.asarray(array, dtype=bool))
        values = np.asarray(array, dtype=np.float64 if dtype == "float64" else np.float32)
        return mx.array(values).astype(getattr(mx, dtype))

    def get(array):
        return np.asarray(array.astype(mx.float64 if array.dtype == mx.float64 else mx.float32),
                          dtype=np.float64)

    def vjp(f, primals, g):
        _, grads = mx.vjp(lambda q, k, v: f(q, k, v), list(primals), [g])
        return tuple(grads)

    return Framework("mlx", put, get, vjp, permute=mx.transpose)


def _mlx_devices() -> dict[str, object]:
    from attnproof.numeric import mlx_devices

    return mlx_devices()


# -- torch ---------------------------------------------------------------------------------------


def _torch() -> Framework:
    import torch

    def put(array, dtype, device):
        where = native_device("torch", device)  # gpu:N is torch's cuda:N
        if dtype == "bool":
            return torch.from_numpy(np.asarray(array, dtype=bool)).to(device=where)
        values = np.asarray(array, dtype=np.float64 if dtype == "float64" else np.float32)
        return torch.from_numpy(values).to(device=where, dtype=getattr(torch, dtype))

    def get(array):
        return array.detach().to(device="cpu", dtype=torch.float64).numpy()

    def vjp(f, primals, g):
        leaves = [p.detach().requires_grad_(True) for p in primals]
        out = f(*leaves)
        grads = torch.autograd.grad(out, leaves, g, allow_unused=True)
        return tuple(torch.zeros_like(p) if d is None else d for p, d in zip(leaves, grads,
                                                                             strict=True))

    return Framework("torch", put, get, vjp, permute=lambda array, axes: array.permute(*axes))


def _torch_devices() -> dict[str, object]:
    """torch's CPU, and its CUDA devices (``cuda:N``) as gpu or gpu:N."""
    import torch

    cuda = [f"cuda:{n}" for n in range(torch.cuda.device_count())] \
        if torch.cuda.is_available() else []
    return {"cpu": "cpu", **named_devices(cuda, lambda d: "gpu", lambda d: int(d.split(":")[1]))}


# one per name in FRAMEWORKS (a test checks none is missing)
ADAPTERS = {"numpy": _numpy, "jax": _jax, "mlx": _mlx, "torch": _torch}
DEVICES = {"numpy": _numpy_devices, "jax": _jax_devices, "mlx": _mlx_devices,
           "torch": _torch_devices}
