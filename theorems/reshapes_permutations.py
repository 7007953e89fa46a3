"""Reshapes and permutations (tutorial §7.1; worked example 48; theory notebook).

Concat(head_1, …, head_H) W_O is a reshape: the heads laid side by side on one axis of size
H·D, head h's feature c at the flat position h·D + c. Reordering tokens is a permutation π given
as an input: attention does not see the order of its keys and values (invariance), reorders its
output with its queries, and self-attention reorders its output with its input (equivariance).
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Permutation,
    Permuted,
    Reshape,
    Sizes,
    Source,
    Tensor,
    Theorem,
    View,
    flat,
    softmax,
)

from ._dims import EXAMPLE_48, NOTEBOOK, TUTORIAL, d_k, d_v, n_k, n_q


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


# -- multi-head attention as Concat(heads) W_O: (54) ------------------------------------------

heads = Dim("H", Sizes(1, 4))
per_head = Dim("D", Sizes(1, 4))
tokens = Dim("n", Sizes(1, 5))
d_model = Dim("d_model", Sizes(1, 5), latex=r"d_{\mathrm{model}}")
HD = flat(heads, per_head)
h = heads.index("h")
c = per_head.index("c")
i, j = tokens.indices("i j")
d, b = d_model.indices("d b")
f = HD.index("f")

O_heads = Tensor("O", (heads, tokens, per_head))
W_O = Tensor("W_O", (heads, per_head, d_model))
Concat = View("Concat", O_heads, (tokens, HD), method="concatenate")
W_O_rows = View("W", W_O, (HD, d_model))

multi_head_output_is_concat_times_w_o = Theorem(
    name="multi_head_output_is_concat_times_w_o",
    source=Source(TUTORIAL, "§7.1 Definition (Multi-Head Attention)", "(54)"),
    claim=Reshape(total(O_heads[h, i, c] * W_O[h, c, d], h, c),
                  total(Concat[i, f] * W_O_rows[f, d], f), views=(Concat, W_O_rows)),
    inputs=(O_heads, W_O),
    unstable_in=("float16",),
    note="Y^id = O^hic W_O^hcd is Concat(head_1, …, head_H) W_O: the heads' outputs side by side "
    "(head h's feature c in column h·D + c, built with concatenate) times W_O read as an "
    "(H·D) × d_model matrix (built with reshape). Proved for all sizes by splitting the flat "
    "index f into (h, c). In float16 a sum of up to 16 products of entries near 100 overflows "
    "(about 1.6e5, past 65,504) on both sides: a known instability, declared (found from a "
    "fresh seed, 195056641).",
)

# Worked example 48, line 138: MultiHead(X) from X itself, each head a full attention.
X = Tensor("X", (tokens, d_model))
W_Q = Tensor("W_Q", (heads, d_model, per_head))
W_K = Tensor("W_K", (heads, d_model, per_head))
W_V = Tensor("W_V", (heads, d_model, per_head))
a = per_head.index("a")
Qh = Defined("Q", (h, i, a), total(X[i, b] * W_Q[h, b, a], b))
Kh = Defined("K", (h, j, a), total(X[j, b] * W_K[h, b, a], b))
Vh = Defined("V", (h, j, c), total(X[j, b] * W_V[h, b, c], b))
Ah = Defined("A", (h, i, j),
             softmax(total(Qh[h, i, a] * Kh[h, j, a], a) / sp.sqrt(per_head.symbol), j))
head = Defined("head", (h, i, c), total(Ah[h, i, j] * Vh[h, j, c], j))
heads_side_by_side = View("Concat", head, (tokens, HD), method="concatenate")

multi_head_is_concat_of_heads_times_w_o = Theorem(
    name="multi_head_is_concat_of_heads_times_w_o",
    source=Source(EXAMPLE_48, "ML Context: From Attention to Transformers", "line 138"),
    claim=Reshape(total(head[h, i, c] * W_O[h, c, d], h, c),
                  total(heads_side_by_side[i, f] * W_O_rows[f, d], f),
                  views=(heads_side_by_side, W_O_rows)),
    inputs=(X, W_Q, W_K, W_V, W_O),
    definitions=(Qh, Kh, Vh, Ah, head),
    unstable_in=("float16",),
    note="MultiHead(X) = Concat(head_1, …, head_h) W_O with head_h = Attention(X W_Q^h, X W_K^h, "
    "X W_V^h): the sum over heads of head_h W_O^h is the concatenated heads times W_O as one "
    "matrix, for all sizes (d_k = d_v = D per head). In float16 the scores of tokens with "
    "entries near 100 overflow (about 1e5) before the softmax: a known instability, declared.",
)

# -- the notebook's split_heads / combine_heads: Demos 4, 14, 24 ----------------------------

batch = Dim("B", Sizes(1, 3))
width = flat(heads, per_head, name="d_model_H")
X3 = Tensor("X", (batch, tokens, width))
b3 = batch.index("b")
t = tokens.index("t")
g = width.index("g")
split = View("H_split", X3, (batch, heads, tokens, per_head))  # reshape + transpose(0, 2, 1, 3)
combined = View("X_back", split, (batch, tokens, width))  # transpose(0, 2, 1, 3) + reshape

notebook_combine_inverts_split_heads = Theorem(
    name="notebook_combine_inverts_split_heads",
    source=Source(NOTEBOOK, "Demos 4, 14, 24 (multi-head shapes)",
                  "split_heads then combine_heads: X_back = X"),
    claim=Reshape(combined[b3, t, g], X3[b3, t, g], views=(split, combined)),
    inputs=(X3,),
    note="combine_heads(split_heads(X)) = X entry by entry, for every batch, length, number of "
    "heads and head width (the model width H·D): the two reshapes and transposes undo each "
    "other. Proved for all sizes by splitting the flat feature index g into (h, c).",
)

notebook_head_h_holds_features_h_d_to_h_d_plus_d = Theorem(
    name="notebook_head_h_holds_features_h_d_to_h_d_plus_d",
    source=Source(NOTEBOOK, "Demos 4, 14, 24 (multi-head shapes)",
                  "split_heads: X.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)"),
    claim=Reshape(split[b3, h, t, c], X3[b3, t, h * per_head.symbol + c], views=(split,)),
    inputs=(X3,),
    note="Head h of split_heads(X) sees the features h·D, …, h·D + D − 1 of each token "
    "(D = d_model/H): the contiguous block the tutorial's §7.2 subspaces are cut from.",
)


# -- permutations: worked example 48, lines 116 and 138 -------------------------------------

qa = d_k.index("a")
iq = n_q.index("i")
jk = n_k.index("j")
cv = d_v.index("c")
Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
V = Tensor("V", (n_k, d_v))

# Line 116 as written needs the output and the keys on one axis: self-attention's n tokens.
ts = Dim("n", Sizes(1, 6))
it, jt = ts.indices("i j")
Qs = Tensor("Q", (ts, d_k))
Ks = Tensor("K", (ts, d_k))
Vs = Tensor("V", (ts, d_v))
pi_tokens = Permutation("pi", ts)
O_s = Defined("O", (it, cv), total(softmax(total(Qs[it, qa] * Ks[jt, qa], qa)
                                           / sp.sqrt(d_k.symbol), jt) * Vs[jt, cv], jt))
O_kv_s = Defined("O_pi", (it, cv), total(softmax(total(Qs[it, qa] * Ks[pi_tokens[jt], qa], qa)
                                                 / sp.sqrt(d_k.symbol), jt)
                                         * Vs[pi_tokens[jt], cv], jt))

reordering_keys_values_permutes_output = Theorem(
    name="reordering_keys_values_permutes_output",
    source=Source(EXAMPLE_48, "Background (Permutation equivariance)", "line 116"),
    claim=Permuted(O_kv_s[it, cv], O_s[pi_tokens[it], cv]),
    inputs=(Qs, Ks, Vs, pi_tokens),
    definitions=(O_s, O_kv_s),
    expect="refuted",
    note="'Reordering keys/values identically permutes attention output' is false: reordering "
    "the keys and values together leaves every output row unchanged (each query's weights move "
    "with their keys), so the output is permuted only when its rows happen to be equal. See "
    "attention_invariant_to_reordering_keys_values and "
    "attention_equivariant_to_reordering_queries.",
)

pi_keys = Permutation("pi", n_k)
O = Defined("O", (iq, cv), total(softmax(total(Q[iq, qa] * K[jk, qa], qa)
                                         / sp.sqrt(d_k.symbol), jk) * V[jk, cv], jk))
O_kv = Defined("O_pi", (iq, cv), total(softmax(total(Q[iq, qa] * K[pi_keys[jk], qa], qa)
                                               / sp.sqrt(d_k.symbol), jk)
                                       * V[pi_keys[jk], cv], jk))

attention_invariant_to_reordering_keys_values = Theorem(
    name="attention_invariant_to_reordering_keys_values",
    source=Source(EXAMPLE_48, "Background (Permutation equivariance)", "line 116, corrected"),
    claim=Permuted(O_kv[iq, cv], O[iq, cv]),
    inputs=(Q, K, V, pi_keys),
    definitions=(O, O_kv),
    corrects="reordering_keys_values_permutes_output",
    note="Reordering keys and values by the same permutation leaves the attention output "
    "unchanged (invariance): the sums over keys in softmax and in A·V only re-index. Proved for "
    "all sizes and permutations.",
)

pi_queries = Permutation("pi", n_q)
O_q = Defined("O_pi", (iq, cv), total(softmax(total(Q[pi_queries[iq], qa] * K[jk, qa], qa)
                                              / sp.sqrt(d_k.symbol), jk) * V[jk, cv], jk))

attention_equivariant_to_reordering_queries = Theorem(
    name="attention_equivariant_to_reordering_queries",
    source=Source(EXAMPLE_48, "Background (Permutation equivariance)", "line 116, corrected"),
    claim=Permuted(O_q[iq, cv], O[pi_queries[iq], cv]),
    inputs=(Q, K, V, pi_queries),
    definitions=(O, O_q),
    corrects="reordering_keys_values_permutes_output",
    note="Reordering the queries reorders the output rows the same way (equivariance): what the "
    "worked example's line 116 describes holds for queries, not for keys and values.",
)

# Self-attention: Q = X W_Q, K = X W_K, V = X W_V from one sequence X.
d_in = Dim("d", Sizes(1, 5))
bx = d_in.index("b")
Xs = Tensor("X", (ts, d_in))
WQ = Tensor("W_Q", (d_in, d_k))
WK = Tensor("W_K", (d_in, d_k))
WV = Tensor("W_V", (d_in, d_v))


def self_attention(name: str, rows: Callable[[sp.Idx], sp.Expr]) -> Defined:
    """Self-attention of the sequence whose token i is X[rows(i)]."""
    query = total(Xs[rows(it), bx] * WQ[bx, qa], bx)
    key = total(Xs[rows(jt), bx] * WK[bx, qa], bx)
    value = total(Xs[rows(jt), bx] * WV[bx, cv], bx)
    weights = softmax(total(query * key, qa) / sp.sqrt(d_k.symbol), jt)
    return Defined(name, (it, cv), total(weights * value, jt))


Y = self_attention("Y", lambda x: x)
Y_pi = self_attention("Y_pi", lambda x: pi_tokens[x])

self_attention_is_permutation_equivariant = Theorem(
    name="self_attention_is_permutation_equivariant",
    source=Source(EXAMPLE_48, "ML Context: From Attention to Transformers", "line 138"),
    claim=Permuted(Y_pi[it, cv], Y[pi_tokens[it], cv]),
    inputs=(Xs, WQ, WK, WV, pi_tokens),
    definitions=(Y, Y_pi),
    unstable_in=("float16",),
    note="'Attention is permutation-equivariant': reordering the tokens of X reorders the rows "
    "of self-attention's output the same way, for all sizes and permutations; hence the "
    "positional encodings. In float16 the scores of tokens with entries near 100 overflow "
    "before the softmax: a known instability, declared.",
)
