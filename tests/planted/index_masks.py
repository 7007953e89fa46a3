"""Planted masks written as expressions of indices: a causal running sum that drops the
diagonal, and a strided mask whose rows can keep nothing, must be refuted; strided, local-window
and block masks that keep what they say beside them must not be. Test fixtures, never in the
catalog."""

import sympy as sp

from attnproof import Equals, Integer, Scalar, Source, Theorem, indicator, masked_softmax
from attnproof.theorems import index_masks as masks

PLANTED = Source("tests/planted/index_masks.py", "planted index masks")
i, j, k, b, n = masks.i, masks.j, masks.k, masks.b, masks.positions
S, V = masks.S, masks.V
stride = Scalar("s", Integer(1, 4))
window = Scalar("w", Integer(0, 4))


def rows_sum_to_one(name, mask, expect="holds"):
    weights = masked_softmax(S[i, j], mask, j)
    return Theorem(name=name, source=PLANTED, claim=Equals(sp.Sum(weights, (j, 0, j.upper)), 1),
                   inputs=(S, stride, window), expect=expect)


def outside_gets_zero_weight(name, mask):
    weights = masked_softmax(S[i, j], mask, j)
    return Theorem(name=name, source=PLANTED, claim=Equals((1 - mask) * weights, 0),
                   inputs=(S, stride, window))


planted_causal_running_sum_without_the_diagonal = Theorem(
    name="planted_causal_running_sum_without_the_diagonal",
    source=PLANTED,
    claim=Equals(masks.causal_attention_output_is_a_running_sum.claim.lhs,
                 sp.Sum(sp.exp(S[i, j]) * V[j, b], (j, 0, i - 1))
                 / sp.Sum(sp.exp(S[i, k]), (k, 0, i))),
    inputs=(S, V),
    definitions=(masks.A,),
    expect="refuted",
)

strided = indicator(sp.Eq(sp.Mod(j, stride.symbol), 0))  # keep every s-th key, from 0
local = indicator((j <= i) & (j >= i - window.symbol))  # keep the w keys before i, and i
block = indicator(sp.Eq(sp.floor(i / stride.symbol), sp.floor(j / stride.symbol)))

planted_strided_rows_from_one_can_be_empty = rows_sum_to_one(
    "planted_strided_rows_from_one_can_be_empty",
    indicator(sp.Eq(sp.Mod(j, stride.symbol), 1)), expect="refuted")
planted_strided_rows_sum_to_one = rows_sum_to_one("planted_strided_rows_sum_to_one", strided)
planted_local_window_rows_sum_to_one = rows_sum_to_one(
    "planted_local_window_rows_sum_to_one", local)
planted_block_rows_sum_to_one = rows_sum_to_one("planted_block_rows_sum_to_one", block)
planted_strided_mask_zeroes_the_rest = outside_gets_zero_weight(
    "planted_strided_mask_zeroes_the_rest", strided)
planted_block_mask_zeroes_the_rest = outside_gets_zero_weight(
    "planted_block_mask_zeroes_the_rest", block)

# dilated masks written as Kronecker deltas on a modulus: keep the keys a multiple of s behind
# or ahead of the query, δ(0, (i − j) mod s); the row always keeps j = i, so its weights sum to
# 1 for every size. Keeping (i − j) mod s = 1 instead leaves every row empty when s = 1.
dilated = sp.KroneckerDelta(0, sp.Mod(i - j, stride.symbol))

planted_dilated_delta_rows_sum_to_one = rows_sum_to_one(
    "planted_dilated_delta_rows_sum_to_one", dilated)
planted_dilated_delta_off_by_one_rows_can_be_empty = rows_sum_to_one(
    "planted_dilated_delta_off_by_one_rows_can_be_empty",
    sp.KroneckerDelta(1, sp.Mod(i - j, stride.symbol)), expect="refuted")
planted_dilated_delta_zeroes_the_rest = outside_gets_zero_weight(
    "planted_dilated_delta_zeroes_the_rest", dilated)
