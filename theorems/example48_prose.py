"""Worked example 48's prose claims beyond its numbers: what is linear, what a row or column of
softmax sums to, what the feedforward sublayer as written computes, what low rank says about
concentration, what growing scores do to the gradients, that every key gets weight, what
least-squares problem the output solves, and what a matrix product costs. docs/coverage.md maps
every line of the example to these theorems or says why a line has none.

Four of them are false as written:

- "Attention is a sequence of linear maps" (line 147): the softmax between QKᵀ and AV is not
  linear, so the output is not linear in the queries (scaling Q by c rescales the scores, which
  moves the weights); it is linear in the values, stated beside it.
- "Without 1/√d_k, scores grow with dimension, pushing softmax into saturation (near-zero
  gradients)" (line 120): with a tied maximum the weights stay split as the scores grow and the
  softmax Jacobian keeps entries of 1/4 (two tied keys); for a unique maximum the gradients do
  vanish, stated beside it.
- "Ill-conditioned attention matrices (dominated by few large singular values) concentrate
  weights on few keys" (line 153): uniform attention has rank one (a single non-zero singular
  value, an infinite condition number) and spreads every row evenly, the least concentrated rows
  there are (entropy log n_k, entropy_of_uniform_is_log_n). The implication holds the other way:
  weights that all lie on the same r keys make a matrix of rank at most r, stated beside it.
- "FFN(x) = W₂(W₁x) for additional expressiveness" (line 138): W₂W₁ is a single matrix that the
  sublayer equals, so it adds no map a linear layer lacks; with an activation, W₂ReLU(W₁x), it
  does (no matrix gives it), stated beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Equals,
    ExpPositive,
    Greater,
    Implies,
    Limit,
    NotExists,
    Positive,
    RankAtMost,
    Real,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
    entropy,
    indicator,
    masked_softmax,
    softmax,
)
from attnproof.symbolic.kinds.cost import Cost, Step

from ._dims import EXAMPLE_48, d_k, d_v, n_k, n_q

# an array module (NumPy, or the numeric route's instrumented NumPy) and its arrays: the code
# runs on either, so no one type
ArrayModule = Any
Array = Any
# an entry-wise expression: the entry at a row index and a column index
Entries = Callable[[sp.Idx, sp.Idx], sp.Expr]

i, i2 = n_q.indices("i i2")
j = n_k.index("j")
a = d_k.index("a")
b = d_v.index("b")


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
V = Tensor("V", (n_k, d_v))
W = Tensor("W", (n_k, d_v))  # a second value matrix
c = Scalar("c", Real(-4, 4))


def attention(queries: Entries, values: Entries) -> sp.Expr:
    """softmax(QKᵀ/√d_k)V at query row i, column b, for queries ``queries(i, a)`` and values
    ``values(j, b)`` given as entry-wise expressions."""
    scores = total(queries(i, a) * K[j, a], a) / sp.sqrt(d_k.symbol)
    return total(softmax(scores, j) * values(j, b), j)


LINEAR_MAPS = "Connection to Broader Examples, Chapter 4 (Linear maps)"

example48_attention_linear_in_queries = Theorem(
    name="example48_attention_linear_in_queries",
    source=Source(EXAMPLE_48, LINEAR_MAPS,
                  "'Attention is a sequence of linear maps' (line 147), in the queries"),
    claim=Equals(attention(lambda r, s: c.symbol * Q[r, s], lambda r, s: V[r, s]),
                 c.symbol * attention(lambda r, s: Q[r, s], lambda r, s: V[r, s])),
    inputs=(Q, K, V, c),
    expect="refuted",
    note="A linear map of Q would take cQ to c times the output. The softmax between QKᵀ and "
    "AV breaks it: with Q = 0 the output is the mean of the values at every c, not c times it.",
)

example48_attention_linear_in_values = Theorem(
    name="example48_attention_linear_in_values",
    source=Source(EXAMPLE_48, LINEAR_MAPS, "line 147, corrected: linear in the values"),
    claim=Equals(attention(lambda r, s: Q[r, s], lambda r, s: c.symbol * V[r, s] + W[r, s]),
                 c.symbol * attention(lambda r, s: Q[r, s], lambda r, s: V[r, s])
                 + attention(lambda r, s: Q[r, s], lambda r, s: W[r, s])),
    inputs=(Q, K, V, W, c),
    corrects="example48_attention_linear_in_queries",
    note="For fixed queries and keys the weights are fixed, so V ↦ AV is linear; the scores "
    "QKᵀ are linear in Q and in K separately (bilinear_form_linear_in_*_argument), and the "
    "softmax between them is the step that is not.",
)

# -- the feedforward sublayer as written: FFN(x) = W₂(W₁x) --------------------------------

d_model = Dim("d", Sizes(1, 6))
d_ff = Dim("d_ff", Sizes(1, 6))
p, p2 = d_model.indices("p p2")
f = d_ff.index("f")
x = Tensor("x", (d_model,))
W1 = Tensor("W_1", (d_ff, d_model))
W2 = Tensor("W_2", (d_model, d_ff))
hidden = Defined("h", (f,), total(W1[f, p2] * x[p2], p2))  # W₁x
W21 = Defined("M", (p, p2), total(W2[p, f] * W1[f, p2], f))  # W₂W₁

example48_ffn_as_written_is_one_linear_map = Theorem(
    name="example48_ffn_as_written_is_one_linear_map",
    source=Source(EXAMPLE_48, "ML Context: From Attention to Transformers",
                  "'FFN(x) = W₂(W₁x) for additional expressiveness' (line 138)"),
    claim=Equals(total(W2[p, f] * hidden[f], f), total(W21[p, p2] * x[p2], p2)),
    inputs=(x, W1, W2),
    definitions=(hidden, W21),
    note="As written (no activation between W₁ and W₂) the sublayer is the single matrix W₂W₁, "
    "a linear map like the projections before it: it adds no function a linear layer lacks. "
    "The expressiveness claim holds for the usual W₂σ(W₁x); as written it is false "
    "(example48_ffn_adds_expressiveness).",
)

M = Tensor("M", (d_model, d_model))
FFN = Source(EXAMPLE_48, "ML Context: From Attention to Transformers",
             "'FFN(x) = W₂(W₁x) for additional expressiveness' (line 138)")

example48_ffn_adds_expressiveness = Theorem(
    name="example48_ffn_adds_expressiveness",
    source=FFN,
    claim=NotExists(M, Equals(total(W2[p, f] * hidden[f], f), total(M[p, p2] * x[p2], p2)),
                    for_all=(x,), witness=W21),
    inputs=(x, W1, W2),
    definitions=(hidden,),
    expect="refuted",
    note="'Adds expressiveness' says the sublayer is not a map a linear layer already gives: no "
    "matrix M has W₂(W₁x) = Mx for every x. M = W₂W₁ is one, for every W₁ and W₂ at every size, "
    "so as written (no activation) the claim is false.",
)

identity_in = Defined("W_1", (p, p2), sp.KroneckerDelta(p, p2), latex=r"W^{(1)}")
identity_out = Defined("W_2", (p, p2), sp.KroneckerDelta(p, p2), latex=r"W^{(2)}")
relu_hidden = Defined("h", (p,), sp.Max(total(identity_in[p, p2] * x[p2], p2), 0))

example48_ffn_with_relu_is_not_linear = Theorem(
    name="example48_ffn_with_relu_is_not_linear",
    source=Source(EXAMPLE_48, "ML Context: From Attention to Transformers",
                  "line 138 corrected, 'FFN(x) = W₂ ReLU(W₁x)'"),
    claim=NotExists(M, Equals(total(identity_out[p, p2] * relu_hidden[p2], p2),
                              total(M[p, p2] * x[p2], p2)), for_all=(x,)),
    inputs=(x,),
    definitions=(identity_in, identity_out, relu_hidden),
    corrects="example48_ffn_adds_expressiveness",
    note="With the activation the sublayer is meant to have, FFN(x) = W₂ ReLU(W₁x), not every "
    "such map is linear: for W₁ = W₂ = I it is x ↦ max(x, 0) entry by entry, and no matrix M "
    "gives it, since a linear map has f(x) + f(−x) = 0 while max(x, 0) + max(−x, 0) = |x|. The "
    "proof gives, at each size, a pair of inputs no linear map joins (d = 1: x = 2 and x = −1).",
)

# -- uniform attention: rank one, yet spread evenly ----------------------------------------

uniform = Defined("U", (i, j), 1 / n_k.symbol)

example48_uniform_attention_has_rank_one = Theorem(
    name="example48_uniform_attention_has_rank_one",
    source=Source(EXAMPLE_48, "Connection to Broader Examples, Chapter 14 (Conditioning)",
                  "line 153, counterexample: uniform attention"),
    claim=RankAtMost(uniform[i, j], i, j, 1),
    inputs=(Q,),
    definitions=(uniform,),
    note="The weights of queries orthogonal to every key (Q = 0) are 1/n_k everywhere: a matrix "
    "of rank one, one non-zero singular value, infinitely ill-conditioned for n_q, n_k ≥ 2, "
    "whose rows are the least concentrated distributions there are (entropy log n_k, "
    "entropy_of_uniform_is_log_n). So line 153's 'ill-conditioned ⇒ weights on few keys' is "
    "false as written (example48_ill_conditioned_attention_concentrates).",
)

# -- line 153: ill-conditioned attention and concentration --------------------------------------

rows_q = Dim("n_q", Sizes(2, 6))
keys = Dim("n_k", Sizes(2, 8))
iq, iq2 = rows_q.indices("i i2")
jk = keys.index("j")
Qc, Kc = Tensor("Q", (rows_q, d_k)), Tensor("K", (keys, d_k))
weights_c = Defined("A", (iq, jk),
                    softmax(total(Qc[iq, a] * Kc[jk, a], a) / sp.sqrt(d_k.symbol), jk))
CONDITIONING = "Connection to Broader Examples, Chapter 14 (Conditioning)"

example48_ill_conditioned_attention_concentrates = Theorem(
    name="example48_ill_conditioned_attention_concentrates",
    source=Source(EXAMPLE_48, CONDITIONING, "line 153, 'ill-conditioned attention matrices ... "
                  "concentrate weights on few keys'"),
    claim=Implies(RankAtMost(weights_c[iq, jk], iq, jk, 1),
                  Greater(rows_q.symbol * sp.log(keys.symbol),
                          total(entropy(weights_c[iq2, jk], jk), iq2))),
    inputs=(Qc, Kc),
    definitions=(weights_c,),
    expect="refuted",
    note="Read as generously as the words allow: the strongest hypothesis ('dominated by few "
    "singular values': a single one, rank one, κ = ∞ for n_q, n_k ≥ 2) and the weakest "
    "conclusion (some row is not spread evenly: its entropy is below log n_k). Still false: "
    "Q = 0 gives uniform weights 1/n_k, rank one, with every row at the largest entropy there "
    "is, so no threshold on the condition number or the entropy rescues it.",
)

kept = Dim("r", Sizes(1, 4))
scores_c = Tensor("S", (rows_q, keys))
on_few_keys = Defined("A", (iq, jk), masked_softmax(scores_c[iq, jk], indicator(jk < kept.symbol),
                                                    jk))

example48_weights_on_few_keys_have_low_rank = Theorem(
    name="example48_weights_on_few_keys_have_low_rank",
    source=Source(EXAMPLE_48, CONDITIONING, "line 153 corrected, the implication the other way"),
    claim=RankAtMost(on_few_keys[iq, jk], iq, jk, kept.symbol),
    inputs=(scores_c, kept),
    definitions=(on_few_keys,),
    corrects="example48_ill_conditioned_attention_concentrates",
    note="The implication holds the other way: weights that all lie on the same r keys (every "
    "other key masked) form a matrix with at most r non-zero columns, so rank ≤ r and, for "
    "r < min(n_q, n_k), κ = ∞. Concentration on keys that differ from query to query gives no "
    "such bound (one-hot rows on distinct keys are a permutation matrix, κ = 1).",
)

# -- the softmax axis: axis=0 normalises over queries, not keys ------------------------------

scores = Defined("S", (i, j), total(Q[i, a] * K[j, a], a) / sp.sqrt(d_k.symbol))
column_softmax = Defined("A_0", (i, j), softmax(scores[i, j], i))  # softmax(scores, axis=0)

example48_column_softmax_sums_over_queries = Theorem(
    name="example48_column_softmax_sums_over_queries",
    source=Source(EXAMPLE_48, "Solution steps, 7 (Softmax axis)",
                  "'axis=0 would be incorrect' (line 90)"),
    claim=Equals(total(column_softmax[i2, j], i2), 1),
    inputs=(Q, K),
    definitions=(scores, column_softmax),
    note="softmax(scores, axis=0) makes each column (one key, over the queries) a distribution, "
    "so each key's weights sum to one across queries and a query's row is not a distribution "
    "over keys: with one key and two queries the row sums are two weights below one.",
)

# -- "Matmul ~ O(n³)" ------------------------------------------------------------------------

n = Dim("n", Sizes(1, 10))
left = Tensor("L", (n, n))
right = Tensor("R", (n, n))


def matmul(xp: ArrayModule, L: Array, R: Array, **_: Array) -> Array:
    """The n × n product NumPy computes for L @ R."""
    return L @ R


example48_matmul_cost_cubic = Theorem(
    name="example48_matmul_cost_cubic",
    source=Source(EXAMPLE_48, "Numerical and Implementation Notes, Complexity & memory",
                  "'Matmul ~ O(n³)' (line 81)"),
    claim=Cost(n.symbol**3, (Step("LR", (n, n), over=(n,)),), counted="multiply-adds",
               order="Theta", growing=(n,), implementation=matmul),
    inputs=(left, right),
    note="n² entries, each a sum of n products: n³ multiply-adds. The line's 'O(n²) for "
    "triangular solves' needs sums whose limits depend on an index (pending).",
)

# -- the output as a weighted least-squares solution (line 151) ------------------------------

weights = Defined("A", (i, j), softmax(total(Q[i, a] * K[j, a], a) / sp.sqrt(d_k.symbol), j))
output = Defined("O", (i, b), total(weights[i, j] * V[j, b], j))

example48_output_solves_weighted_least_squares = Theorem(
    name="example48_output_solves_weighted_least_squares",
    source=Source(EXAMPLE_48, "Connection to Broader Examples, Chapter 12 (Least-squares)",
                  "line 151, 'a weighted least-squares problem', made precise"),
    claim=Equals(total(weights[i, j] * (output[i, b] - V[j, b]), j), 0),
    inputs=(Q, K, V),
    definitions=(weights, output),
    note="Line 151 names no problem; the precise one nearest it: o_i minimises the convex "
    "Σ_j A_ij ‖o − v_j‖², whose gradient 2Σ_j A_ij (o − v_j) vanishes at o = o_i because the "
    "weights sum to one. So the soft weights already solve a weighted least-squares problem; "
    "a hard (one-hot) assignment makes its solution the one chosen value.",
)


# -- saturation: the softmax Jacobian as the scores grow -------------------------------------
# Growing scores are S/T with T → 0. The Jacobian of softmax in its input is A_j(δ_jn − A_n);
# its off-diagonal entries −A_j A_n are at most A_j(1 − A_j) in size (A_n ≤ 1 − A_j), so all of
# it tends to 0 exactly when its diagonal A_j(1 − A_j) does: the diagonal is stated.

S = Tensor("S", (n_q, n_k))
T = Scalar("T", Positive(1e-3, 1e3))
A_T = softmax(S[i, j], j, 1 / T.symbol)
jacobian_diagonal = A_T * (1 - A_T)
PART_1 = "Notes, Part 1: Query-Key Scoring"

example48_growing_scores_saturate_softmax = Theorem(
    name="example48_growing_scores_saturate_softmax",
    source=Source(EXAMPLE_48, PART_1,
                  "'pushing softmax into saturation (near-zero gradients)' (line 120)"),
    claim=Limit(jacobian_diagonal, T.symbol, 0, 0, row=S[i, j]),
    inputs=(S, T),
    expect="refuted",
    note="Scores growing without bound (S/T, T → 0) for every row: with the tied row (0, 0) both "
    "weights stay 1/2 and ∂A_j/∂S_j = 1/4 at every scale, so the gradient does not vanish. "
    "Random scores (line 120 has dimension-driven growth of random dot products in mind) tie "
    "with probability zero, so almost every row does saturate: that is the twin below.",
)

example48_growing_scores_saturate_softmax_unique_maximum = Theorem(
    name="example48_growing_scores_saturate_softmax_unique_maximum",
    source=Source(EXAMPLE_48, PART_1, "line 120, for a row with a unique maximum"),
    claim=Limit(jacobian_diagonal, T.symbol, 0, 0, row=S[i, j], unique_maximum=True),
    inputs=(S, T),
    corrects="example48_growing_scores_saturate_softmax",
    note="With a unique maximum the weights tend to one-hot (softmax_approximates_argmax_unique_"
    "maximum), so every A_j(1 − A_j), and with it every Jacobian entry, tends to 0.",
)

# -- "every position can attend to every other position" (line 13) -------------------------

example48_every_key_gets_positive_weight = Theorem(
    name="example48_every_key_gets_positive_weight",
    source=Source(EXAMPLE_48, "Background, Why attention matters",
                  "'Every position can attend to every other position' (line 13)"),
    claim=Greater(softmax(S[i, j], j), 0, by=(ExpPositive(S[i, j]),)),
    inputs=(S,),
    note="Each weight is exp(S_ij)/Σ_k exp(S_ik) > 0 however far apart the positions: no key is "
    "cut off, only weighted (in floating point exp underflows to 0 for a score gap beyond about "
    "745 in float64, 104 in float32).",
)
