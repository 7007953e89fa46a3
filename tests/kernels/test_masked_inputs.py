"""What unused K/V entries may hold (``masked_inputs``): anything, finite values, or ordinary
values of the inputs' own scale; each checked with such values."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, Kernel, KernelError, check_kernel
from attnproof.kernels._cases import instance, unused_keys
from attnproof.symbolic import FLOAT32, format_named

from . import planted


def _variant(**changes) -> Kernel:
    return dataclasses.replace(planted.correct, **changes)


def test_a_declaration_names_one_of_the_three():
    assert _variant(masked_inputs="ordinary").masked_inputs == "ordinary"
    with pytest.raises(KernelError, match="masked_inputs: 'normal' is not one of"):
        _variant(masked_inputs="normal")


@pytest.mark.parametrize(("declared", "allowed", "among"), [
    ("any", {"nan", "inf", "-inf", "huge", "ordinary"}, {"nan", "ordinary"}),
    ("finite", {"huge", "ordinary"}, {"huge", "ordinary"}),
    ("ordinary", {"ordinary"}, {"ordinary"}),
])
def test_the_garbage_drawn_is_what_the_declaration_allows(declared, allowed, among):
    seen = set()
    check_kernel(_variant(masked_inputs=declared, gradients=None),
                 properties=["masked_garbage"], examples=40,
                 on_case=lambda case, dtype: seen.add(case.garbage))
    assert among <= seen <= allowed


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_ordinary_values_are_finite_of_the_inputs_scale_and_only_where_no_query_looks(dtype):
    case = Case(n_q=3, n_k=9, batch=2, heads=2, kv_heads=2, mask="padding", fill="spikes",
                garbage="ordinary", seed=3)
    dtype = format_named(dtype)
    x = instance(case, dtype, FLOAT32)
    clean = instance(dataclasses.replace(case, garbage=None), dtype, FLOAT32)
    unused = unused_keys(x.keep, x.group)[..., None]
    for name in "kv":
        given, own = x.passed(name), getattr(clean, name)
        top = np.max(np.abs(own[np.broadcast_to(~unused, own.shape)]))
        spoiled = given != own
        assert np.all(np.isfinite(given)) and np.max(np.abs(given[spoiled])) <= top
        assert np.any(spoiled) and not np.any(spoiled & ~unused)
        assert np.array_equal(getattr(x, name), own)  # the truth keeps its own values


def _mask_added_to_the_scores(q, k, v, mask=None, scale=None, **keywords):
    """Adds a 0/-inf mask to the scores: K/V of masked keys reach the softmax through a zero
    weight, so ordinary values there do no harm, but a score that overflows to +inf meets
    the mask's -inf and gives NaN."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    with np.errstate(all="ignore"):
        s = np.float32(scale) * np.einsum("bhqd,bhkd->bhqk", q, k)
        if mask is not None:
            s = s + np.where(mask, np.float32(0), np.float32(-np.inf))
        top = np.max(s, axis=-1, keepdims=True)
        e = np.exp(s - np.where(np.isfinite(top), top, 0))
        a = e / np.maximum(np.sum(e, axis=-1, keepdims=True), np.finfo(np.float32).tiny)
        out = np.einsum("bhqk,bhkd->bhqd", a, np.where(np.isfinite(v), v, 0))
    return out.astype(q.dtype)


def test_a_kernel_adding_its_mask_conforms_with_ordinary_padding_and_fails_with_huge_values():
    kernel = _variant(fn=_mask_added_to_the_scores, returns_lse=False, merge=None,
                      gradients=None, masked_inputs="ordinary")
    ordinary = check_kernel(kernel, properties=["masked_garbage"], examples=20).cells[0]
    assert ordinary.status == "conforms", ordinary
    finite = check_kernel(dataclasses.replace(kernel, masked_inputs="finite"),
                          properties=["masked_garbage"], examples=20).cells[0]
    assert finite.status == "fails", finite
    assert '"garbage":"huge"' in finite.counterexample["case"]


def test_a_kernel_that_reads_padded_values_fails_with_ordinary_ones():
    kernel = _variant(fn=_leaks_ordinary, gradients=None, masked_inputs="ordinary")
    seen = set()
    cell = check_kernel(kernel, properties=["masked_garbage"], examples=20,
                        on_case=lambda case, dtype: seen.add(case.garbage)).cells[0]
    assert seen == {"ordinary"} and cell.status == "fails", cell


def _leaks_ordinary(q, k, v, mask=None, **keywords):
    """Adds the mean of the masked keys' V to every output row (a correction meant for
    padding that holds zeros)."""
    out, lse = planted.attention(q, k, v, mask=mask, **keywords)
    if mask is not None:
        unused = ~np.any(mask, axis=2)[..., None]  # (b, h, n_k, 1)
        out = out + np.sum(np.where(unused, v, 0), axis=2, keepdims=True) / v.shape[2]
    return out.astype(q.dtype), lse
