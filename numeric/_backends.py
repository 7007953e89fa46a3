"""The backends the numeric checker runs on: one table, one row per backend.

A row names the array module, the dtypes each device kind supports, and the few operations
that differ between backends (setup, devices, placing arrays, jit, autodiff). Compiled code
only ever calls ``xp.<function>``; adding a backend means adding a row here. Backends import on
first use, and one that cannot be imported is reported unavailable, never raised.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class Backend:
    """One array backend; ``dtypes`` maps a device kind ("cpu", "gpu", ...) to its dtypes."""

    name: str
    module: str
    dtypes: Mapping[str, tuple[str, ...]]
    modes: tuple[str, ...]
    autodiff: bool
    jit: bool
    setup: Callable[[object], None] = lambda module: None
    devices: Callable[[], dict[str, object]] = lambda: {"cpu": None}
    place: Callable = lambda xp, array, dtype, device: xp.asarray(array, dtype=dtype)
    compile: Callable = lambda function: function
    jacobian: Callable | None = None
    notes: str = field(default="")

    @property
    def default_mode(self) -> str:
        return self.modes[0]

    def load(self):
        """The array module, configured; raises ImportError when the backend is not installed."""
        return _load(self)


@functools.cache
def _load(backend: Backend):
    module = importlib.import_module(backend.module)
    backend.setup(module)
    return module


def _jax_setup(module) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_default_matmul_precision", "highest")


def _jax_devices() -> dict[str, object]:
    import jax

    found: dict[str, object] = {}
    for device in jax.devices():
        same_platform = [d for d in jax.devices() if d.platform == device.platform]
        name = device.platform if len(same_platform) == 1 else f"{device.platform}:{device.id}"
        found[name] = device
    return found


def _jax_place(xp, array, dtype, device):
    import jax

    return jax.device_put(xp.asarray(array, dtype=dtype), device)


def _jax_compile(function):
    import jax

    return jax.jit(function)


def _jax_jacobian(primal: Callable, wrt: str) -> Callable:
    """``arrays -> d primal / d arrays[wrt]`` per batch row: (batch, *out, *wrt shape)."""
    import jax

    def single(arrays):
        def of_wrt(value):
            row = {k: (v[None] if hasattr(v, "shape") else v) for k, v in arrays.items()}
            row[wrt] = value[None]
            return primal(row)[0]

        return jax.jacrev(of_wrt)(arrays[wrt])

    def batched(arrays):
        traced = {k: v for k, v in arrays.items() if hasattr(v, "shape")}
        static = {k: v for k, v in arrays.items() if not hasattr(v, "shape")}
        return jax.vmap(lambda t: single({**t, **static}))(traced)

    return batched


BACKENDS: tuple[Backend, ...] = (
    Backend(
        name="numpy",
        module="numpy",
        dtypes={"cpu": ("float64", "float32")},
        modes=("eager",),
        autodiff=False,
        jit=False,
        notes="no autodiff: derivative claims compare the SymPy derivative with the closed form",
    ),
    Backend(
        name="jax",
        module="jax.numpy",
        dtypes={"cpu": ("float64", "float32"), "gpu": ("float64", "float32")},
        modes=("jit", "eager"),
        autodiff=True,
        jit=True,
        setup=_jax_setup,
        devices=_jax_devices,
        place=_jax_place,
        compile=_jax_compile,
        jacobian=_jax_jacobian,
    ),
)


def backend(name: str) -> Backend:
    for row in BACKENDS:
        if row.name == name:
            return row
    raise KeyError(f"unknown backend {name!r}; known: {[b.name for b in BACKENDS]}")


def unavailable_reason(row: Backend) -> str | None:
    try:
        row.load()
    except ImportError as error:
        return f"{row.name} is not installed ({error})"
    return None


def device_kind(device: str) -> str:
    return device.split(":")[0]


def available_configurations(theorem=None) -> list[tuple[str, str, str, str]]:
    """Every (backend, dtype, device, mode) that can run here, default mode first per backend.

    A claim with nothing to draw (worked numbers, ``Rounds``) has no configuration: it is
    settled exactly by the symbolic side.
    """
    from symbolic import Rounds

    if theorem is not None and isinstance(theorem.claim, Rounds):
        return []
    found = []
    for row in BACKENDS:
        if unavailable_reason(row) is not None:
            continue
        for device in row.devices():
            for dtype in row.dtypes.get(device_kind(device), ()):
                found.append((row.name, dtype, device, row.default_mode))
    return found


def to_numpy(array) -> np.ndarray:
    return np.asarray(array, dtype=np.float64)
