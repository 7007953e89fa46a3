"""Scaled dot-product attention: index form, row-stochastic weights, convex combinations of the
values (tutorial §3; worked example 48; attn-tensors README "In Index Notation").

Worked example 48's "reordering keys/values identically permutes attention output" (line 116) is
false as written: permuting keys and values together leaves every output unchanged; it is the
queries whose order the output follows. Stating it needs permutations as a claim kind (listed in
docs/coverage.md).
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    AtLeast,
    Defined,
    Equals,
    Rounds,
    Source,
    Tensor,
    Theorem,
    rowmax,
    rowmin,
    softmax,
)

from ._dims import EXAMPLE_48, TUTORIAL, d_k, d_v, n_k, n_q

i = n_q.index("i")
j, k = n_k.indices("j k")
a, c = d_k.indices("a c")
b = d_v.index("b")
delta = sp.KroneckerDelta


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
V = Tensor("V", (n_k, d_v))
S = Defined("S", (i, j), total(Q[i, a] * K[j, a], a) / sp.sqrt(d_k.symbol))  # (10)
A = Defined("A", (i, j), softmax(S[i, j], j))  # (11)
O = Defined("O", (i, b), total(A[i, j] * V[j, b], j))  # (12)
three_steps = (S, A, O)

g = delta(a, c) / sp.sqrt(d_k.symbol)  # g_ac of (8)
bilinear = total(Q[i, a] * g * K[j, c], a, c)
one_equation = total(
    sp.exp(bilinear) / total(sp.exp(bilinear.xreplace({j: k})), k) * V[j, b], j)

attention_in_one_equation = Theorem(
    name="attention_in_one_equation",
    source=Source(TUTORIAL, "§3.2 Theorem (Scaled Dot-Product Attention)", "(10)–(13)"),
    claim=Equals(O[i, b], one_equation),
    inputs=(Q, K, V),
    definitions=three_steps,
    note="The three steps (10)–(12) combine into (13), with g_ac = δ_ac/√d_k.",
)

attention_rows_sum_to_one = Theorem(
    name="attention_rows_sum_to_one",
    source=Source(TUTORIAL, "§3.1.2 Definition (Attention Weights)", "(11)"),
    claim=Equals(total(A[i, j], j), 1),
    inputs=(Q, K),
    definitions=(S, A),
    note="'The softmax is applied row-wise: each query i gets its own probability "
    "distribution over keys.' Also worked example 48, lines 112 and 122 ('each row of A sums "
    "to 1'), for every Q and K.",
)

worked_example_48_weights_nonnegative = Theorem(
    name="worked_example_48_weights_nonnegative",
    source=Source(EXAMPLE_48, "Notes, Part 2", "A_ij ≥ 0 (line 122)"),
    claim=AtLeast(A[i, j], 0),
    inputs=(Q, K),
    definitions=(S, A),
)

worked_example_48_output_above_smallest_value = Theorem(
    name="worked_example_48_output_above_smallest_value",
    source=Source(EXAMPLE_48, "Notes, Part 3", "o_i in the convex hull of the values (line 124)"),
    claim=AtLeast(O[i, b], rowmin(V[j, b], j)),
    inputs=(Q, K, V),
    definitions=three_steps,
    note="A point of the convex hull of v_1 … v_n lies, in every coordinate b, between the "
    "smallest and the largest v_jb: this is the lower half.",
)

worked_example_48_output_below_largest_value = Theorem(
    name="worked_example_48_output_below_largest_value",
    source=Source(EXAMPLE_48, "Notes, Part 3", "o_i in the convex hull of the values (line 124)"),
    claim=AtLeast(rowmax(V[j, b], j), O[i, b]),
    inputs=(Q, K, V),
    definitions=three_steps,
    note="The upper half: o_ib ≤ max_j v_jb.",
)

# -- the example's own numbers and shapes --------------------------------------------------------

Q48 = sp.Matrix([[1, 0], [0, 1]])
K48 = sp.Matrix([[1, 0], [1, 1], [0, 1]])
V48 = sp.Matrix([[1, 0], [0, 2], [1, 1]])
S48 = Q48 * K48.T / sp.sqrt(2)
A48 = sp.Matrix([[sp.exp(x) / sum(sp.exp(y) for y in S48.row(r)) for x in S48.row(r)]
                 for r in range(S48.rows)])
O48 = A48 * V48

worked_example_48_row_sums = Theorem(
    name="worked_example_48_row_sums",
    source=Source(EXAMPLE_48, "Solution (Python); step 4", "A.sum(axis=1) equals [1., 1.]"),
    claim=Rounds([[sum(A48.row(r)) for r in range(A48.rows)]], [["1.000000000000"] * 2]),
    inputs=(),
    note="The example's Q, K, V evaluated exactly; rows sum to 1 to twelve decimals "
    "(exactly 1).",
)

worked_example_48_shapes = Theorem(
    name="worked_example_48_shapes",
    source=Source(EXAMPLE_48, "steps 2, 5, 6", "scores 2×3, A 2×3, O ∈ R^{n_q×d_v} = 2×2"),
    claim=Rounds([[*S48.shape, *A48.shape, *O48.shape]], [["2", "3", "2", "3", "2", "2"]]),
    inputs=(),
    note="Shapes of QKᵀ/√2, softmax and AV for the example's matrices, from the exact products.",
)

# -- "extreme attention (one weight near 1) retrieves a single value" ---------------------------

worked_example_48_extreme_attention_retrieves_one_value = Theorem(
    name="worked_example_48_extreme_attention_retrieves_one_value",
    source=Source(EXAMPLE_48, "Notes, Part 3",
                  "'extreme attention (one weight near 1) retrieves a single value' (line 124)"),
    claim=AtLeast((1 - A[i, j]) * rowmax(sp.Abs(V[k, b] - V[j, b]), k),
                  sp.Abs(O[i, b] - V[j, b])),
    inputs=(Q, K, V),
    definitions=three_steps,
    note="The remark's precise form: |o_ib − v_jb| ≤ (1 − A_ij)·max_k |v_kb − v_jb|, so as the "
    "weight A_ij of key j approaches 1 the output approaches its value v_j.",
)
