"""Proved tolerances for a kernel's own tests: the smaller of the proved bound and the rule's
allowance, per entry, with its derivation; honest kernels are within it, planted ones are not."""

from __future__ import annotations

import numpy as np
import pytest

from attnproof.kernels import assert_attention_close, proved_tolerance
from attnproof.symbolic import FLOAT16

from . import planted


def _inputs(shape=(2, 4, 33, 16), kv_heads=None, dtype=np.float32, seed=0):
    b, h, n, d = shape
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, n, d)).astype(dtype)
    k, v = (rng.standard_normal((b, kv_heads or h, n, d)).astype(dtype) for _ in range(2))
    return q, k, v


def test_an_honest_float32_kernel_is_within_its_tolerance_and_the_rule_sets_it():
    q, k, v = _inputs()
    tolerance = proved_tolerance(q, k, v)
    tolerance.assert_close(planted.correct.fn(q, k, v)[0])
    assert tolerance.proved is not None and tolerance.proved_tighter == 0
    assert np.all(tolerance.atol <= tolerance.proved)  # the rule is tighter here
    assert np.all(tolerance.atol < 1e-4)


@pytest.mark.parametrize("name", ["tf32_products", "no_max_shift"])
def test_a_planted_kernel_fails_with_the_derivation(name):
    q, k, v = _inputs()
    q = q * 30 if name == "no_max_shift" else q  # scores past exp's float32 range
    tolerance = proved_tolerance(q, k, v)
    with pytest.raises(AssertionError, match="(?s)attention output off by .*x its tolerance.*"
                                             "proved bound B·A.*the 2x rule"):
        tolerance.assert_close(getattr(planted, name).fn(q, k, v)[0])


def test_half_inputs_computed_in_float32_are_held_to_the_proved_bound():
    q, k, v = _inputs(dtype=np.float16)
    out = planted.correct.fn(q, k, v)[0]  # float32 inside, rounded to float16 at the end
    tolerance = assert_attention_close(out, q, k, v, compute="float32")
    assert tolerance.dtype == FLOAT16 and tolerance.proved_tighter == tolerance.rows.sum()
    with pytest.raises(pytest.fail.Exception, match="off by"):  # it does not compute in bf16
        assert_attention_close(planted.bfloat16_inside.fn(q, k, v)[0], q, k, v,
                               compute="float32")


def test_masks_causal_grouped_heads_and_another_layout():
    q, k, v = _inputs(shape=(2, 4, 9, 8), kv_heads=2)
    keep = np.random.default_rng(1).random((2, 4, 9, 9)) < 0.7
    keep[0, 0, 3] = False  # a row that keeps no key: left out
    out = planted.correct.fn(q, k, v, mask=keep, causal=True)[0]
    tolerance = proved_tolerance(q, k, v, mask=keep, causal=True)
    assert not tolerance.rows[0, 0, 3] and "keep no key and are left out" in str(tolerance)
    with pytest.raises(AssertionError):  # the causal flag matters
        proved_tolerance(q, k, v, mask=keep).assert_close(out)
    # planted's causal is aligned lower-right: the same as upper-left when n_q = n_k
    tolerance.assert_close(out)
    bshd = [a.transpose(0, 2, 1, 3) for a in (q, k, v)]
    proved_tolerance(*bshd, mask=keep, causal=True, layout="bshd").assert_close(
        out.transpose(0, 2, 1, 3))


def test_the_derivation_names_what_sets_the_tolerance():
    q, k, v = _inputs(shape=(1, 1, 5, 4))
    text = str(proved_tolerance(q, k, v, scale=0.5))
    assert "float32 inputs computed in float32 (u = 2^-24" in text
    assert "online_softmax_blockwise_error_bound" in text and "2 × the worst error" in text
    no_model = str(proved_tolerance(q, k, v, framework="torch"))
    assert "proved bound: none (torch has no rounding model for float32)" in no_model


def test_torch_tensors_are_taken_as_they_are():
    torch = pytest.importorskip("torch")
    q, k, v = (torch.from_numpy(a).to(torch.bfloat16) for a in _inputs(shape=(1, 2, 7, 8)))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert_attention_close(out, q, k, v, compute="float32", framework="torch")
