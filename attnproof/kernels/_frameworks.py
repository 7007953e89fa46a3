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

from attnproof.numeric import BACKENDS

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


def numpy_dtype(name: str):
    if name == "bool":
        return np.dtype(bool)
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def rounded(array: np.ndarray, dtype: str) -> np.ndarray:
    """``array`` rounded to ``dtype`` and back to float64: the exact values a kernel receives."""
    return np.asarray(array, dtype=np.float64).astype(numpy_dtype(dtype)).astype(np.float64)


@dataclass(frozen=True)
class Framework:
    """How to hand arrays to one framework and differentiate a function in it."""

    name: str
    put: Callable  # (float64 ndarray, dtype name, device) -> framework array
    get: Callable  # framework array -> float64 ndarray
    vjp: Callable | None  # (f, (q, k, v), g) -> (dq, dk, dv), f returning the output only
    bind: Callable = lambda fn, keywords: lambda q, k, v: fn(q, k, v, **keywords)
    # (fn, keywords, first) -> (q, k, v, g) -> (dq, dk, dv); first picks the output from fn's
    bind_vjp: Callable | None = None
    # (array, axis order) -> the same memory seen in that axis order; None: the framework's
    # arrays have no strides a user can see (JAX), so views are not drawn
    permute: Callable | None = None

    def gradients(self, fn, keywords, first):
        if self.bind_vjp is not None:
            return self.bind_vjp(fn, keywords, first)
        forward = self.bind(fn, keywords)
        return lambda q, k, v, g: self.vjp(lambda *p: first(forward(*p)), (q, k, v), g)


def framework(name: str) -> Framework:
    return ADAPTERS[name]()


# -- numpy ---------------------------------------------------------------------------------------


def _numpy() -> Framework:
    def put(array, dtype, device):
        return np.asarray(array).astype(numpy_dtype(dtype))

    return Framework("numpy", put, _float64, None, permute=np.transpose)


def _float64(array) -> np.ndarray:
    return np.asarray(array).astype(np.float64)


# -- jax -----------------------------------------------------------------------------------------


def _jax() -> Framework:
    import jax

    jax.config.update("jax_enable_x64", True)  # float64 inputs stay float64

    def put(array, dtype, device):
        placed = jax.device_put(np.asarray(array).astype(numpy_dtype(dtype)), _jax_device(device))
        return placed

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


def _jax_bind(fn, keywords):
    """``fn`` with its keywords, under ``jit``: compiled once per shape, dtype and static
    keyword, where eager dispatch would compile every primitive anew for each shape."""
    import jax

    arrays, statics = _split_keywords(keywords)
    if statics is None:  # an unhashable keyword: run eagerly
        return lambda q, k, v: fn(q, k, v, **keywords)
    key = ("forward", fn, statics)
    if key not in _JITTED:
        _JITTED[key] = jax.jit(lambda q, k, v, arrays: fn(q, k, v, **arrays, **dict(statics)))
    return lambda q, k, v: _JITTED[key](q, k, v, arrays)


def _jax_bind_vjp(fn, keywords, first):
    """The VJP of ``fn`` as one jitted program (forward and backward compiled together)."""
    import jax

    arrays, statics = _split_keywords(keywords)
    if statics is None:
        return lambda q, k, v, g: jax.vjp(lambda *p: first(fn(*p, **keywords)), q, k, v)[1](g)
    key = ("vjp", fn, statics, first)
    if key not in _JITTED:
        def pullback(q, k, v, g, arrays):
            def forward(*p):
                return first(fn(*p, **arrays, **dict(statics)))

            return jax.vjp(forward, q, k, v)[1](g)

        _JITTED[key] = jax.jit(pullback)
    return lambda q, k, v, g: _JITTED[key](q, k, v, g, arrays)


def _jax_device(device: str):
    import jax

    kind, _, number = device.partition(":")
    return jax.devices(kind)[int(number or 0)]


# -- mlx -----------------------------------------------------------------------------------------


def _mlx() -> Framework:
    import mlx.core as mx

    def put(array, dtype, device):
        mx.set_default_device(mx.gpu if device.startswith("gpu") else mx.cpu)
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


# -- torch ---------------------------------------------------------------------------------------


def _torch() -> Framework:
    import torch

    def put(array, dtype, device):
        if dtype == "bool":
            return torch.from_numpy(np.asarray(array, dtype=bool)).to(device=device)
        values = np.asarray(array, dtype=np.float64 if dtype == "float64" else np.float32)
        return torch.from_numpy(values).to(device=device, dtype=getattr(torch, dtype))

    def get(array):
        return array.detach().to(device="cpu", dtype=torch.float64).numpy()

    def vjp(f, primals, g):
        leaves = [p.detach().requires_grad_(True) for p in primals]
        out = f(*leaves)
        grads = torch.autograd.grad(out, leaves, g, allow_unused=True)
        return tuple(torch.zeros_like(p) if d is None else d for p, d in zip(leaves, grads,
                                                                             strict=True))

    return Framework("torch", put, get, vjp, permute=lambda array, axes: array.permute(*axes))


# one per name in FRAMEWORKS (a test checks none is missing)
ADAPTERS = {"numpy": _numpy, "jax": _jax, "mlx": _mlx, "torch": _torch}
