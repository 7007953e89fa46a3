"""The calling conventions of real kernels, each a declaration field: a kernel that is always
causal, one that takes key lengths instead of a mask array, one that fills its additive mask
with the format's lowest finite number, one that maps grouped heads h % kv_heads, one that
returns its lse in base 2, one with a dropout keyword. Each correct kernel conforms when it
declares its convention, and the same kernel declared the default way fails where the
convention shows (no false alarm, and the field is what makes the difference)."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from attnproof.kernels import Kernel, KernelError, check_kernel

from . import planted

pytestmark = pytest.mark.slow
EXAMPLES = 10


def _failing(result) -> list:
    return [(c.property, c.status, c.reason[:200]) for c in result.cells
            if c.status not in ("conforms", "n/a")]


def _vjp(forward_keywords: dict):
    def vjp(q, k, v, g, **keywords):
        return planted.attention_vjp(q, k, v, g, **forward_keywords, **keywords)

    return vjp


# -- always causal, no switch ---------------------------------------------------------------------


def _always_causal(q, k, v, **keywords):
    return planted.attention(q, k, v, causal=True, **keywords)


ALWAYS_CAUSAL = dataclasses.replace(
    planted.correct, name="always_causal", fn=_always_causal, gradients=_vjp({"causal": True}),
    causal_argument=None, always_causal=True, merge=None)


def test_a_kernel_that_is_always_causal_conforms_when_it_says_so():
    result = check_kernel(ALWAYS_CAUSAL, examples=EXAMPLES,
                          properties=["forward", "mask", "padding", "backward_dk", "nq_ne_nk",
                                      "gqa", "block_lengths", "causal", "causal_nq_ne_nk"])
    assert not _failing(result)
    assert result.cell("forward", "float32").decided >= 3
    alignment = result.cell("causal_nq_ne_nk", "float32")
    assert alignment.status == "conforms"
    assert alignment.conventions["causal_alignment"] == "lower_right"


def test_the_same_kernel_declared_as_taking_no_causal_mask_fails():
    undeclared = dataclasses.replace(ALWAYS_CAUSAL, always_causal=False)
    result = check_kernel(undeclared, examples=EXAMPLES, properties=["forward"])
    assert result.cell("forward", "float32").status == "fails"


def test_an_always_causal_kernel_aligned_otherwise_than_declared_fails_the_alignment():
    upper_left = dataclasses.replace(ALWAYS_CAUSAL, causal_alignment="upper_left")
    result = check_kernel(upper_left, examples=EXAMPLES, properties=["causal_nq_ne_nk"])
    assert result.cell("causal_nq_ne_nk", "float32").status == "fails"


def test_always_causal_and_a_causal_keyword_contradict_each_other():
    with pytest.raises(KernelError, match="always_causal"):
        dataclasses.replace(ALWAYS_CAUSAL, causal_argument="causal")


# -- key lengths instead of a mask array ----------------------------------------------------------


def _keep(q, k, lengths):
    """The boolean mask of key lengths (None: every key)."""
    if lengths is None:
        return None
    keep = np.arange(k.shape[2])[None, None, None, :] < np.asarray(lengths)[:, None, None, None]
    return np.broadcast_to(keep, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))


def _by_lengths(q, k, v, lengths=None, **keywords):
    return planted.attention(q, k, v, mask=_keep(q, k, lengths), **keywords)


def _lengths_vjp(q, k, v, g, lengths=None, **keywords):
    return planted.attention_vjp(q, k, v, g, mask=_keep(q, k, lengths), **keywords)


BY_LENGTHS = dataclasses.replace(planted.correct, name="by_lengths", fn=_by_lengths,
                                 gradients=_lengths_vjp, mask="lengths",
                                 mask_argument="lengths", merge=None)


def test_a_kernel_taking_key_lengths_is_checked_on_padding_and_refuses_other_masks():
    result = check_kernel(BY_LENGTHS, examples=EXAMPLES,
                          properties=["padding", "backward_dv", "mask", "masked_garbage"])
    assert not _failing(result)
    assert result.cell("padding", "float32").status == "conforms"
    assert result.cell("padding", "float32").decided >= 3
    mask = result.cell("mask", "float32")  # random masks: no lengths say them, so refused
    assert mask.refused > 0 and "padding only" in mask.refusal
    assert mask.status == "conforms" and f"{mask.refused} of {mask.cases} cases refused" \
        in mask.reason


def test_key_lengths_the_kernel_misreads_fail_padding():
    def off_by_one(q, k, v, lengths=None, **keywords):
        return _by_lengths(q, k, v, lengths=None if lengths is None else np.asarray(lengths) - 1,
                           **keywords)

    wrong = dataclasses.replace(BY_LENGTHS, fn=off_by_one, gradients=None)
    result = check_kernel(wrong, examples=EXAMPLES, properties=["padding"])
    assert result.cell("padding", "float32").status == "fails"


# -- masks filled with the format's lowest finite number ------------------------------------------


def _lowest_filled(q, k, v, mask=None, **keywords):
    lowest = float(ml_dtypes.finfo(np.float32).min)
    assert mask is None or np.all((mask == 0) | (mask == lowest)), "a finite fill was passed"
    return planted.attention(q, k, v, mask=mask, **keywords)[0]


LOWEST = dataclasses.replace(planted.correct, name="lowest_fill", fn=_lowest_filled,
                             gradients=None, mask="additive", mask_fill="lowest",
                             fully_masked="mean_v", returns_lse=False, merge=None,
                             mask_dtype="float32")


def test_a_mask_filled_with_the_formats_lowest_number_conforms_declared_so():
    result = check_kernel(LOWEST, examples=EXAMPLES,
                          properties=["mask", "padding", "fully_masked_rows"])
    assert not _failing(result)
    assert result.cell("fully_masked_rows", "float32").conventions["fully_masked"] == "mean_v"


# -- grouped heads mapped h % kv_heads ------------------------------------------------------------


def _canonical_heads(q, k):
    """Where each head h of an interleaved kernel (reading K/V head h % kv) stands among the
    grouped heads (reading c // group): c = (h % kv)·group + h // kv."""
    kv, h = k.shape[1], np.arange(q.shape[1])
    return (h % kv) * (q.shape[1] // kv) + h // kv


def _grouped(array, heads):
    placed = np.empty_like(array)
    placed[:, heads] = array
    return placed


def _interleaved(q, k, v, mask=None, **keywords):
    heads = _canonical_heads(q, k)
    mask = None if mask is None or mask.shape[1] == 1 else _grouped(mask, heads)
    out, lse = planted.attention(_grouped(q, heads), k, v, mask=mask, **keywords)
    return out[:, heads], lse[:, heads]


def _interleaved_vjp(q, k, v, g, mask=None, **keywords):
    heads = _canonical_heads(q, k)
    mask = None if mask is None or mask.shape[1] == 1 else _grouped(mask, heads)
    dq, dk, dv = planted.attention_vjp(_grouped(q, heads), k, v, _grouped(g, heads), mask=mask,
                                       **keywords)
    return dq[:, heads], dk, dv


INTERLEAVED = dataclasses.replace(planted.correct, name="interleaved", fn=_interleaved,
                                  gradients=_interleaved_vjp, gqa_mapping="interleaved",
                                  merge=None)


def test_interleaved_heads_conform_when_declared_and_fail_when_not():
    declared = check_kernel(INTERLEAVED, examples=EXAMPLES,
                            properties=["gqa", "mqa", "forward", "backward_dk"])
    assert not _failing(declared)
    assert declared.cell("gqa", "float32").decided >= 3
    grouped = check_kernel(dataclasses.replace(INTERLEAVED, gqa_mapping="grouped"),
                           examples=EXAMPLES, properties=["gqa"])
    assert grouped.cell("gqa", "float32").status == "fails"


def test_a_grouped_kernel_declared_interleaved_fails():
    wrong = dataclasses.replace(planted.correct, gqa_mapping="interleaved")
    result = check_kernel(wrong, examples=EXAMPLES, properties=["gqa"])
    assert result.cell("gqa", "float32").status == "fails"


# -- lse in base 2 -------------------------------------------------------------------------------


def _lse_base_2(q, k, v, **keywords):
    out, lse = planted.attention(q, k, v, **keywords)
    return out, (lse / np.log(2.0)).astype(lse.dtype)


BASE_2 = dataclasses.replace(planted.correct, name="lse_base_2", fn=_lse_base_2, lse_base="2",
                             merge=None)


def test_an_lse_in_base_2_conforms_declared_so_and_fails_read_as_natural():
    declared = check_kernel(BASE_2, examples=EXAMPLES,
                            properties=["forward", "split_kv", "fully_masked_rows"])
    assert not _failing(declared)
    natural = check_kernel(dataclasses.replace(BASE_2, lse_base="e"), examples=EXAMPLES,
                           properties=["forward"])
    cell = natural.cell("forward", "float32")
    assert cell.status == "fails" and "lse" in cell.reason


# -- dropout, declared off ------------------------------------------------------------------------


def _with_dropout(q, k, v, dropout_p=0.1, **keywords):
    out, lse = planted.attention(q, k, v, **keywords)
    if dropout_p:
        kept = np.random.default_rng().random(out.shape) >= dropout_p
        out = (out * kept / (1 - dropout_p)).astype(out.dtype)
    return out, lse


DROPOUT = dataclasses.replace(planted.correct, name="dropout", fn=_with_dropout, gradients=None,
                              dropout_argument="dropout_p", merge=None)


def test_a_dropout_keyword_is_passed_zero_and_its_default_would_fail():
    declared = check_kernel(DROPOUT, examples=EXAMPLES, properties=["forward", "mask"])
    assert not _failing(declared)
    undeclared = check_kernel(dataclasses.replace(DROPOUT, dropout_argument=None),
                              examples=EXAMPLES, properties=["forward"])
    assert undeclared.cell("forward", "float32").status == "fails"


@pytest.mark.parametrize(("field", "value"), [("mask_fill", "-1e9"), ("gqa_mapping", "modulo"),
                                              ("lse_base", "10")])
def test_a_convention_outside_the_vocabulary_is_refused_naming_the_field(field, value):
    with pytest.raises(KernelError, match=field):
        Kernel("k", planted.correct.fn, "numpy", **{field: value})


# -- gradients as users take them ----------------------------------------------------------------


def test_a_torch_kernel_under_reentrant_checkpointing_is_differentiated_as_users_do():
    # torch.autograd.grad raises under torch.utils.checkpoint(use_reentrant=True), which
    # memory-efficient attention libraries use; .backward(), as users train, does not
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint

    def attention(q, k, v, scale=None, **keywords):
        scale = q.shape[-1] ** -0.5 if scale is None else scale
        def inner(q, k, v):
            return torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1) @ v
        return checkpoint(inner, q, k, v, use_reentrant=True)

    kernel = Kernel("checkpointed", attention, "torch", gradients="autodiff",
                    dtypes=("float32",))
    result = check_kernel(kernel, examples=EXAMPLES, properties=["forward", "backward_dq",
                                                                  "backward_dv"])
    assert torch is not None and not _failing(result)
    assert result.cell("backward_dq", "float32").decided >= 3
