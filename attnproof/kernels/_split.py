"""Split-KV: the keys cut in two, each half run alone, merged by log-sum-exp (the checker's
own arithmetic, or the kernel's declared merge)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ._call import call, letters_of, read
from ._cases import Case, split_point
from ._declaration import Kernel, to_layout
from ._frameworks import Framework
from ._truth import Inputs
from ._warnings import raised_by_kernel

if TYPE_CHECKING:
    from attnproof.symbolic import Format


def merged_halves(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format,
                  device: str) -> dict[str, np.ndarray]:
    """Out and lse of the keys split in two, each half run alone, merged by log-sum-exp."""
    (o1, l1), (o2, l2) = ((h["out"], h["lse"][..., None])
                          for h in _halves(kernel, fw, x, case, dtype, device))
    top = np.maximum(l1, l2)
    w1, w2 = np.exp(l1 - top), np.exp(l2 - top)
    return {"out": (w1 * o1 + w2 * o2) / (w1 + w2), "lse": (top + np.log(w1 + w2))[..., 0]}


def _halves(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format,
            device: str) -> list[dict[str, np.ndarray]]:
    split = split_point(case)
    return [call(kernel, fw, _keys(x, part), case, dtype, device, ("out",))
            for part in (slice(0, split), slice(split, None))]


def merged_by_kernel(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format,
                     device: str) -> dict[str, np.ndarray]:
    """Out and lse of the keys split in two, each half run alone, merged by the kernel's own
    ``merge(o1, lse1, o2, lse2)``, which gets the halves as the kernel returned them."""
    arguments = []
    for half in _halves(kernel, fw, x, case, dtype, device):
        arguments.append(fw.put(to_layout(half["out"], letters_of(kernel, "out")),
                                dtype.storage, device))
        arguments.append(fw.put(_lse_to_layout(kernel, half["lse"]), dtype.storage, device))
    # set: the property "merge" applies only to a kernel that declares one (_properties)
    merge = cast(Callable[..., Any], kernel.merge)
    with raised_by_kernel():  # the kernel's own code, as its forward is
        out, lse = merge(*arguments)
    b, h, n_q, _ = x.q.shape
    return {"out": read(fw, out, kernel, "out", (b, h, n_q, x.v.shape[3])),
            "lse": read(fw, lse, kernel, "lse", (b, h, n_q, 1))[..., 0]}


def _lse_to_layout(kernel: Kernel, lse: np.ndarray) -> np.ndarray:
    letters = letters_of(kernel, "lse")
    return np.squeeze(to_layout(lse[..., None], letters), axis=letters.index("d"))


def _keys(x: Inputs, part: slice) -> Inputs:
    """``x`` with the keys in ``part`` only (axis 2 of K and V, the last of masks and biases)."""
    given = {a: array[..., part] if a in ("bias", "mask") else array[:, :, part]
             for a, array in (x.given or {}).items()}
    return dataclasses.replace(x, k=x.k[:, :, part], v=x.v[:, :, part], keep=x.keep[..., part],
                               given=given or None,
                               bias=None if x.bias is None else x.bias[..., part])
