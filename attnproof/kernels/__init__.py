"""Conformance checks of attention kernels against the catalog's proved statements.

Declare a kernel with :class:`Kernel` and run :func:`check_kernel`: each property (forward,
backward dQ/dK/dV, masks of each declared kind, finite biases, tile-pattern masks, fully
masked rows, score offsets across the format's range and below finite -inf sentinels, garbage
in unused K/V, block-edge lengths, d_v != d_k, n_q != n_k, strided input views, grouped- and
multi-query heads, split-KV merging and the kernel's own merge, soft-capping, attention sinks,
sliding windows, a declared score_mod, batch elements against themselves run alone, calls
against the same call made on a fresh kernel) is searched with Hypothesis in every dtype the
kernel accepts, and judged by flash-attention's rule against the float64 truth, lse included
wherever the kernel returns it. Kernels are *checked*, never proved. A kernel raises
:class:`Refused` for a case outside what it supports; such cases are counted and shown, never
decided.

For a kernel's own tests, :func:`proved_tolerance` (and :func:`assert_attention_close` under
pytest) gives the tolerance its output may be held to on given inputs: the proved error bound
of its precision, or the conformance rule's allowance where that is tighter, with the
derivation.

Importing this package imports none of it: each name below loads its module on first use, so
that ``attnproof devices`` can read a library kernel's declaration without loading the checker
(SymPy, Hypothesis). Type checkers and editors read the same names, imported eagerly, from the
``TYPE_CHECKING`` block below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# public name -> (module, its name there)
_EXPORTS = {
    "Case": ("_cases", "Case"),
    "Cell": ("_check", "Cell"),
    "Conformance": ("_check", "Conformance"),
    "check_kernel": ("_check", "check_kernel"),
    "replay": ("_check", "replay"),
    "Kernel": ("_declaration", "Kernel"),
    "KernelError": ("_declaration", "KernelError"),
    "Refused": ("_declaration", "Refused"),
    "PROPERTIES": ("_properties", "PROPERTIES"),
    "KernelCell": ("_pytest", "KernelCell"),
    "assert_attention_close": ("_pytest", "assert_attention_close"),
    "assert_conforms": ("_pytest", "assert_conforms"),
    "conformance_cells": ("_pytest", "conformance_cells"),
    "Tolerance": ("_tolerance", "Tolerance"),
    "proved_tolerance": ("_tolerance", "proved_tolerance"),
}
__all__ = [
    "Case", "Cell", "Conformance", "check_kernel", "replay", "Kernel", "KernelError", "Refused",
    "PROPERTIES", "KernelCell", "assert_attention_close", "assert_conforms", "conformance_cells",
    "Tolerance", "proved_tolerance",
]

if TYPE_CHECKING:  # what type checkers and editors see: _EXPORTS, imported eagerly
    from ._cases import Case as Case
    from ._check import Cell as Cell
    from ._check import Conformance as Conformance
    from ._check import check_kernel as check_kernel
    from ._check import replay as replay
    from ._declaration import Kernel as Kernel
    from ._declaration import KernelError as KernelError
    from ._declaration import Refused as Refused
    from ._properties import PROPERTIES as PROPERTIES
    from ._pytest import KernelCell as KernelCell
    from ._pytest import assert_attention_close as assert_attention_close
    from ._pytest import assert_conforms as assert_conforms
    from ._pytest import conformance_cells as conformance_cells
    from ._tolerance import Tolerance as Tolerance
    from ._tolerance import proved_tolerance as proved_tolerance

else:  # at run time: each name imported on first use

    def __getattr__(name: str) -> object:
        if name not in _EXPORTS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, attribute = _EXPORTS[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_EXPORTS})
