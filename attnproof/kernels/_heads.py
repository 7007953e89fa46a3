"""Shared K/V heads: a kernel that raises with them but runs with another sharing (a declaration
to fix, gqa or mqa, told apart from a bug), and the head counts a kernel must refuse."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from ._call import call, with_query_heads
from ._cases import Case, instance
from ._declaration import Kernel
from ._frameworks import Framework
from ._truth import Inputs

if TYPE_CHECKING:
    from attnproof.symbolic import Format


def heads_declared_wrongly(kernel: Kernel, fw: Framework, case: Case, dtype: Format,
                            device: str) -> str | None:
    """Why a kernel that raised with shared K/V heads is declared wrongly, when it runs with
    another sharing: its head sharing is a declaration to fix, not a bug to report."""
    shared = f"{case.kv_heads} K/V head{'s' if case.kv_heads > 1 else ''} for {case.heads} " \
             "query heads"
    if case.kv_heads > 1 and _only_runs(kernel, fw, case, 1, dtype, device):
        return (f"declaration: raised with {shared} but runs with one K/V head: the kernel "
                "shares a single K/V head only (declare mqa=True, gqa=False)")
    if _only_runs(kernel, fw, case, case.heads, dtype, device):
        return (f"declaration: raised with {shared} but runs with as many K/V heads as query "
                "heads: the kernel shares no K/V head (declare gqa=False, mqa=False)")
    return None


def _only_runs(kernel: Kernel, fw: Framework, case: Case, kv_heads: int, dtype: Format,
               device: str) -> bool:
    """Whether the kernel runs ``case`` with ``kv_heads`` K/V heads where it raises with the
    case's own, both at the case's sizes and at plain ones (4 of each, no mask): a kernel that
    raises at some shapes for other reasons is not read as sharing heads otherwise."""
    plain = dataclasses.replace(case, n_q=4, n_k=4, d_k=4, d_v=4, mask="none",
                                causal_flag=False)
    return all(_runs(kernel, fw, dataclasses.replace(c, kv_heads=kv_heads), dtype, device)
               for c in (case, plain)) and not _runs(kernel, fw, plain, dtype, device)


def _runs(kernel: Kernel, fw: Framework, case: Case, dtype: Format, device: str) -> bool:
    x = instance(case, dtype, kernel.compute_for(dtype, device))
    try:
        call(kernel, fw, x, case, dtype, device, ("out",))
    except Exception:  # noqa: BLE001 -- any failure means this sharing does not run
        return False
    return True


def one_query_head_less(x: Inputs) -> tuple[Inputs, str]:
    """``x`` without its last query head, and why a kernel must refuse it: with two or more
    K/V heads, kv_heads·group − 1 query heads are no whole number of query heads per K/V
    head (a count such as 5 over 2), so no head mapping is the grouped-query one. A kernel
    that answers maps heads by arithmetic of its own (a rounded ratio, h % kv_heads) where
    the caller has made an error."""
    heads, kv_heads = x.q.shape[1], x.k.shape[1]
    fewer = with_query_heads(x, np.arange(heads - 1))
    return fewer, (f"{heads - 1} query heads over {kv_heads} K/V heads, no whole number of "
                   "query heads per K/V head")
