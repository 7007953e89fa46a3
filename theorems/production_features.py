"""Attention as production kernels ship it: attention sinks and packed sequences (claims none
of the documents writes down; attnproof kernels' sinks and packed_sequences properties judge
kernels against the truth they define).

A sink is one more logit s per head in every row's softmax denominator, with no value of its
own (gpt-oss, StreamingLLM's "attention sinks", MLX's ``sinks=``): the weights are
a_j = e^{x_j} / (e^s + Σ_k e^{x_k}), so a row may give the keys less than all of its weight.

Two statements are not here yet: that attention with a sink is softmax attention with the sink
appended as a key of value 0, and the sliding window's band identities (keys outside the band
get no weight; a window looking back over every key is causal; a window of size W is (W − 1,
0); the output is the softmax average over the band). The prover reaches them only for small
sizes (it does not split a sum at its last term below a symbolic bound, nor decide indicators
with symbolic offsets), and the catalog's identities are proved for all sizes
(tests/test_harness.py); tests/kernels/test_sinks_windows.py checks the kernel checker's truth
against both directly.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Equals,
    Permutation,
    Permuted,
    Real,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
    fully_masked,
    lse,
    rowmax,
    softmax,
)

from . import attention_backward as bw
from . import masking as mk
from ._dims import OUTSIDE, d_v, n_k

SINKS = Source(OUTSIDE, "attention sinks: a per-head logit in the softmax denominator (gpt-oss; "
               "Xiao et al. (2023), StreamingLLM; MLX's scaled_dot_product_attention(sinks=))")

exp = sp.exp
j, k, t = n_k.indices("j k t")
b = d_v.index("b")
x = Tensor("x", (n_k,))  # one row's scores
V = Tensor("V", (n_k, d_v))
s = Scalar("s", Real(-30, 30))  # the row's head's sink logit


def _over_keys(expr: sp.Expr, index: sp.Idx = j) -> sp.Expr:
    return sp.Sum(expr, (index, 0, n_k.symbol - 1))


# the weights with a sink, spelt about M = max(s, max x) as kernels compute them (e^{−M}
# cancels: the same weights for any reference point, and no exponent above 0)
M = sp.Max(s.symbol, rowmax(x[t], t))
denominator = exp(s.symbol - M) + _over_keys(exp(x[k] - M), k)
a = Defined("a", (j,), exp(x[j] - M) / denominator)
p_sink = exp(s.symbol - M) / denominator  # the weight the sink takes

sink_weights_sum_to_one_minus_the_sinks_share = Theorem(
    name="sink_weights_sum_to_one_minus_the_sinks_share",
    source=SINKS,
    claim=Equals(_over_keys(a[j]), 1 - p_sink),
    inputs=(x, s),
    definitions=(a,),
    note="With a sink the keys' weights sum to 1 − e^s/(e^s + Σ e^x), less than 1: what the "
    "sink takes no key gets, so a row may attend to nothing (a fully masked row's output is "
    "0, its whole weight on the sink).",
)

keys_lse = lse(x[k], k)  # the row's lse without the sink
outer = sp.Max(s.symbol, keys_lse)

sink_lse_is_the_logaddexp_of_the_sink_and_the_keys_lse = Theorem(
    name="sink_lse_is_the_logaddexp_of_the_sink_and_the_keys_lse",
    source=SINKS,
    claim=Equals(M + sp.log(denominator),
                 outer + sp.log(exp(s.symbol - outer) + exp(keys_lse - outer))),
    inputs=(x, s),
    note="The lse with a sink, log(e^s + Σ e^x), spelt about M = max(s, max x) as a kernel's "
    "running maximum must take in the sink (else e^{s − m} overflows for a sink above every "
    "score), is logaddexp(s, lse of the keys): a kernel may add its sink after the keys' pass.",
)

# the derivatives in the sink's logit s, of the weights as written, e^{x_j} / (e^s + Σ e^x):
# a stable spelling needs a reference point that depends on s (max(s, max x), or the lse with
# the sink), whose derivative the numeric route cannot compile (a maximum over the keys, a
# Heaviside step), though it cancels
g = d_v.index("g")
G = Tensor("G", (d_v,))  # the upstream gradient ∂L/∂o of the row's output
raw_mass = exp(s.symbol) + _over_keys(exp(x[k]), k)
a_raw = Defined("a", (j,), exp(x[j]) / raw_mass)
o_raw = Defined("o", (b,), _over_keys(a_raw[j] * V[j, b]))
p_raw = exp(s.symbol) / raw_mass  # the weight the sink takes
# e^x of scores near 100 (the inputs' occasional large magnitudes) is past float32's largest
# value, 3.4e38 ≈ e^88, and past float16's, 65504 ≈ e^11; MLX's float64 exp runs in float32
AS_WRITTEN = ("float32", "float16", "bfloat16", "mlx float64")

sink_output_derivative = Theorem(
    name="sink_output_derivative",
    source=SINKS,
    claim=Equals(sp.Derivative(o_raw[b], s.symbol), -p_raw * o_raw[b]),
    inputs=(x, V, s),
    definitions=(a_raw, o_raw),
    unstable_in=AS_WRITTEN,
    note="∂o/∂s = −p_sink · o: raising the sink scales every weight down alike. Its gradient "
    "is never 0 where the sink takes weight and the output is not 0 (an upstream bug class: "
    "a zero sink gradient). Written with e^x unshifted, it overflows below float64 for "
    "scores near 100: declared.",
)

sink_gradient = Theorem(
    name="sink_gradient",
    source=SINKS,
    claim=Equals(sp.Derivative(sp.Sum(G[g] * o_raw[g], (g, 0, d_v.symbol - 1)), s.symbol),
                 -p_raw * sp.Sum(G[g] * o_raw[g], (g, 0, d_v.symbol - 1))),
    inputs=(x, V, G, s),
    definitions=(a_raw, o_raw),
    unstable_in=AS_WRITTEN,
    note="The sink's gradient in a backward pass: ∂L/∂s = −p_sink Σ_b G_b o_b per row, summed "
    "over the rows of its head (unshifted, unstable below float64 as above).",
)

# -- split-KV with a sink: the sink counted once -------------------------------------------------

n_a, n_b = Dim("n_a", Sizes(1, 8)), Dim("n_b", Sizes(1, 8))
(u,) = n_a.indices("u")
(w,) = n_b.indices("w")
x1, x2 = Tensor("x1", (n_a,)), Tensor("x2", (n_b,))
V1, V2 = Tensor("V1", (n_a, d_v)), Tensor("V2", (n_b, d_v))
lse1, lse2 = lse(x1[u], u), lse(x2[w], w)  # each block's lse, without the sink
o1 = sp.Sum(softmax(x1[u], u) * V1[u, b], (u, 0, n_a.symbol - 1))  # without the sink
o2 = sp.Sum(softmax(x2[w], w) * V2[w, b], (w, 0, n_b.symbol - 1))
T = sp.Max(s.symbol, lse1, lse2)  # the merge's reference point
merged_mass = exp(s.symbol - T) + exp(lse1 - T) + exp(lse2 - T)
M2 = sp.Max(s.symbol, rowmax(x1[u], u), rowmax(x2[w], w))
whole = (sp.Sum(exp(x1[u] - M2) * V1[u, b], (u, 0, n_a.symbol - 1))
         + sp.Sum(exp(x2[w] - M2) * V2[w, b], (w, 0, n_b.symbol - 1))) / (
    exp(s.symbol - M2) + sp.Sum(exp(x1[u] - M2), (u, 0, n_a.symbol - 1))
    + sp.Sum(exp(x2[w] - M2), (w, 0, n_b.symbol - 1)))

sink_split_kv_merge_counts_the_sink_once = Theorem(
    name="sink_split_kv_merge_counts_the_sink_once",
    source=SINKS,
    claim=Equals((exp(lse1 - T) * o1 + exp(lse2 - T) * o2) / merged_mass, whole),
    inputs=(x1, x2, V1, V2, s),
    note="Two key blocks attended without the sink, merged by their lse with e^s added once "
    "to the merged denominator, give attention with the sink over all keys (a split-KV "
    "decode that adds the sink in every split counts it once per split).",
)

sink_split_kv_lse_counts_the_sink_once = Theorem(
    name="sink_split_kv_lse_counts_the_sink_once",
    source=SINKS,
    claim=Equals(T + sp.log(merged_mass),
                 M2 + sp.log(exp(s.symbol - M2) + sp.Sum(exp(x1[u] - M2), (u, 0, n_a.symbol - 1))
                             + sp.Sum(exp(x2[w] - M2), (w, 0, n_b.symbol - 1)))),
    inputs=(x1, x2, s),
    note="The merged lse with the sink, log(e^s + e^{lse₁} + e^{lse₂}), each spelt about its "
    "maximum.",
)


# -- packed sequences: one sequence's attention whatever the others hold -------------------------

PACKED = Source(OUTSIDE, "packed variable-length batches: sequences laid end to end, told apart "
                "by cumulative offsets (flash-attention's varlen functions' cu_seqlens, torch's "
                "varlen_attn, FlashInfer's ragged tensors)")

# Packed attention is masked attention under the block-diagonal mask M_ij = [query i and key j
# lie in one sequence]; a token of no sequence (slack past the last offset) has a row and a
# column of M that keep nothing. The statements hold for every 0/1 mask, so for that one.
_pi, _pn = mk.i, mk.n
_pb, _pc, _pl = mk.b, mk.c, mk.l_
_Mk = mk.M

packed_output_ignores_other_sequences_values = Theorem(
    name="packed_output_ignores_other_sequences_values",
    source=PACKED,
    claim=Equals((1 - _Mk[_pi, _pn]) * sp.Derivative(mk.O_masked[_pi, _pb], bw.V[_pn, _pc]), 0),
    inputs=mk.masked_inputs,
    definitions=mk.masked_forward,
    note="A key that query i's mask drops (another sequence's, or slack) changes no entry of "
    "its output through its value row: with the block-diagonal mask of packed sequences, each "
    "sequence's output is its own attention's whatever the other sequences' values hold.",
)

packed_output_ignores_other_sequences_keys = Theorem(
    name="packed_output_ignores_other_sequences_keys",
    source=PACKED,
    claim=Equals((1 - _Mk[_pi, _pn]) * sp.Derivative(mk.O_masked[_pi, _pb], bw.K[_pn, _pl]), 0),
    inputs=mk.masked_inputs,
    definitions=mk.masked_forward,
    note="Nor through its key row: the scores of dropped keys reach no weight.",
)

packed_token_of_no_sequence_gets_no_query_gradient = Theorem(
    name="packed_token_of_no_sequence_gets_no_query_gradient",
    source=PACKED,
    claim=Equals(fully_masked(_Mk[mk.m, mk.j], mk.j) * sp.Derivative(mk.masked_loss,
                                                                    bw.Q[mk.m, _pl]), 0),
    inputs=mk.masked_inputs,
    definitions=mk.masked_forward,
    note="A query row that keeps no key (a slack token past the last offset) gets dQ = 0, "
    "whatever the upstream gradient of its (unspecified) output.",
)

packed_token_of_no_sequence_gets_no_key_gradient = Theorem(
    name="packed_token_of_no_sequence_gets_no_key_gradient",
    source=PACKED,
    claim=Equals(fully_masked(_Mk[_pi, _pn], _pi) * sp.Derivative(mk.masked_loss,
                                                                 bw.K[_pn, _pl]), 0),
    inputs=mk.masked_inputs,
    definitions=mk.masked_forward,
    note="A key no query keeps gets dK = 0 (and dV = 0: packed_output_ignores_other_sequences_"
    "values summed over the queries).",
)


# -- paged KV caches: keys read through a page table ---------------------------------------------

PAGED = Source(OUTSIDE, "paged KV caches: keys and values stored in fixed-size pages of one "
               "cache, found through a block table (vLLM's PagedAttention, FlashInfer's paged "
               "kernels)")

# A page table with page size P sends an element's key j to cache slot table[j // P]·P + j % P:
# one slot per key, distinct. Over a cache of as many slots as keys that map is a permutation
# π of the slots; the cache's other slots (unused pages, the rest of a last page) are masked
# keys, which packed_output_ignores_other_sequences_values and _keys already set aside. So
# paged attention is the masked attention over the cache read in the order π, the mask read
# with it.
pi_slots = Permutation("pi", n_k)
_qa = bw.a
_kk = mk.n  # the keys' index of a row's normaliser


def _masked_attention(key: Callable[[sp.Expr], sp.Expr]) -> sp.Expr:
    """Row i's output, feature b, with key j read at cache slot ``key(j)`` (its mask entry
    with it), written as Σ_j M e^{s} v / Σ_k M e^{s}: the masked softmax of a row that keeps
    a key (a row that keeps none is 0/0 here, and a fully masked row's convention is the
    kernel's own)."""
    def score(j: sp.Expr) -> sp.Expr:
        return sp.exp(bw.scale * bw.total(bw.Q[mk.i, _qa] * bw.K[key(j), _qa], _qa))

    weight = _Mk[mk.i, key(mk.j)] * score(mk.j)
    norm = bw.total(_Mk[mk.i, key(_kk)] * score(_kk), _kk)
    return bw.total(weight * bw.V[key(mk.j), mk.b], mk.j) / norm


O_dense = Defined("O", (mk.i, mk.b), _masked_attention(lambda j: j))
O_paged = Defined("O_pi", (mk.i, mk.b), _masked_attention(lambda j: pi_slots[j]))

paged_attention_is_dense_attention_for_every_page_table = Theorem(
    name="paged_attention_is_dense_attention_for_every_page_table",
    source=PAGED,
    claim=Permuted(O_paged[mk.i, mk.b], O_dense[mk.i, mk.b]),
    inputs=(bw.Q, bw.K, bw.V, _Mk, pi_slots),
    definitions=(O_dense, O_paged),
    unstable_in=AS_WRITTEN,
    note="Keys, values and mask read through any order of the cache's slots (a page table of "
    "any page size, pages anywhere in the cache) give the dense attention's output: the sums "
    "over keys only re-index. With the masked slots of unused pages, paged attention equals "
    "dense attention over each element's first seq_lens keys, for every page table and page "
    "size. Written with e^s unshifted, it overflows below float64 for large scores: "
    "declared.",
)


# -- the lse a kernel returns, differentiated -----------------------------------------------------

LSE_RETURNED = Source(OUTSIDE, "the log-sum-exp a kernel returns beside O, read by a loss (a "
                      "split-KV merge, ring attention): its backward must differentiate it")

lse_gradient_is_the_softmax = Theorem(
    name="lse_gradient_is_the_softmax",
    source=LSE_RETURNED,
    claim=Equals(sp.Derivative(lse(x[k], k), x[j]), softmax(x[j], j)),
    inputs=(x,),
    note="∂ lse(x)/∂ x_j = softmax(x)_j: a loss that reads a row's lse passes g_lse · a_ij to "
    "every score of the row, so dQ and dK gain scale Σ_j a_ij g_lse_i k_j and "
    "scale Σ_i a_ij g_lse_i q_i (a kernel whose backward ignores the lse's cotangent gives "
    "neither: an upstream bug class). Over the kept keys of a masked row the same holds with "
    "the masked weights.",
)
