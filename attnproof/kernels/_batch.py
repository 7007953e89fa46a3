"""Batch independence: each element of a batch run alone, so that what the kernel returns for
one element can be compared with what it returned for the same element beside the others."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING

import numpy as np

from ._call import call
from ._cases import Case
from ._declaration import Kernel
from ._frameworks import Framework
from ._truth import Inputs

if TYPE_CHECKING:
    from attnproof.symbolic import Format


def element(x: Inputs, b: int) -> Inputs:
    """``x`` with batch element ``b`` only (a batch of one)."""
    one = slice(b, b + 1)
    given = {name: array[one] for name, array in (x.given or {}).items()}
    return dataclasses.replace(x, q=x.q[one], k=x.k[one], v=x.v[one], keep=x.keep[one],
                               g=x.g[one], given=given or None,
                               bias=None if x.bias is None else x.bias[one])


def run_alone(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format, device: str,
              outputs: Collection[str]) -> dict[str, np.ndarray]:
    """The kernel's outputs with each batch element run on its own, stacked back along the
    batch axis (so they line up with the batched call's)."""
    alone = [call(kernel, fw, element(x, b), dataclasses.replace(case, batch=1,
                                                                  empty_element=None),
                  dtype, device, outputs)
             for b in range(x.q.shape[0])]
    return {name: np.concatenate([a[name] for a in alone], axis=0) for name in alone[0]}
