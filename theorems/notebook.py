"""The theory notebook's demos, each distinct computation once (its 25 demos run ten cells).

| computation | demo titles | theorem |
|---|---|---|
| scaled attention, rows sum to one | 1, 11, 21 | notebook_attention_rows_sum_to_one |
| causal mask, future mass 0 | 2, 12, 22 | notebook_causal_mask_future_mass |
| sharp vs diffuse entropy | 3, 13, 23 | notebook_diffuse_attention_has_higher_entropy |
| multi-head shapes | 4, 14, 24 | notebook_multi_head_shapes (theorems/multi_head.py) |
| score scaling | 5, 15, 25 | notebook_score_scaling_variance |
| padding mask | 6, 16 | notebook_padding_mask_weight |
| KV-cache size | 7, 17 | notebook_kv_cache_size |
| ALiBi bias | 8, 18 | notebook_alibi_bias |
| quadratic cost | 9, 19 | notebook_quadratic_cost_ratio |
| FlashAttention tiling | 10, 20 | notebook_tiling_covers_all_pairs, notebook_tile_count_formula |

The notebook's checks compare with a tolerance (``check_close(..., tol=1e-8)``); a printed decimal
with eight places asserts ±5e-9, slightly stricter, and every value below is exact anyway. The
masks add −1e9 (a finite fill), so masked weights are e^(−1e9)-small, not 0: exact evaluation
shows how small.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import sympy as sp

from attnproof import (
    Dim,
    Equals,
    Greater,
    Integer,
    Rounds,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
)

from ._dims import NOTEBOOK

FILL = -sp.Integer(10) ** 9  # the notebook's mask value


def softmax_rows(scores: sp.Matrix) -> sp.Matrix:
    """The notebook's stable_softmax, row-wise, in exact arithmetic, each weight written as
    1/Σ_k exp(s_k − s_j) (the same number; a ratio of e^(−1e9)-sized terms takes SymPy
    seconds to evaluate to 50 digits)."""
    return sp.Matrix(scores.rows, scores.cols, lambda r, c: 1 / sum(
        sp.exp(x - scores[r, c]) for x in scores.row(r)))


def attention_weights(Q: sp.Matrix, K: sp.Matrix, mask: sp.Matrix | None = None) -> sp.Matrix:
    """The notebook's attention(): scores Q Kᵀ/√d_k, plus an additive mask, then softmax."""
    scores = Q * K.T / sp.sqrt(Q.shape[1])
    return softmax_rows(scores if mask is None else scores + mask)


eye2 = sp.eye(2)
weights_1 = attention_weights(eye2, eye2)

notebook_attention_rows_sum_to_one = Theorem(
    name="notebook_attention_rows_sum_to_one",
    source=Source(NOTEBOOK, "Demos 1, 11, 21 (scaled attention)", "attention rows sum to one"),
    claim=Rounds([[sum(weights_1.row(r)) for r in range(2)]], [["1.00000000"] * 2]),
    inputs=(),
    note="Q = K = I₂ (V does not enter the weights): each row of the weights sums to 1.",
)

T4 = 4
causal = sp.Matrix(T4, T4, lambda r, c: FILL if c > r else 0)  # causal_mask(4)
weights_2 = attention_weights(sp.eye(T4), sp.eye(T4), causal)
future_mass = sum(weights_2[r, c] for r in range(T4) for c in range(r + 1, T4))

notebook_causal_mask_future_mass = Theorem(
    name="notebook_causal_mask_future_mass",
    source=Source(NOTEBOOK, "Demos 2, 12, 22 (causal mask)",
                  "future attention mass ≈ 0 (tol 1e-8)"),
    claim=Rounds([[future_mass]], [["0.00000000"]]),
    inputs=(),
    note="T = 4, Q = K = I: the weight above the diagonal sums to about 6·e^(−1e9), "
    "zero to eight decimals.",
)

padded = softmax_rows(sp.Matrix([[2, 1, 5]]) + sp.Matrix([[0, 0, FILL]]))

notebook_padding_mask_weight = Theorem(
    name="notebook_padding_mask_weight",
    source=Source(NOTEBOOK, "Demos 6, 16 (padding mask)",
                  "padded key receives zero weight (tol 1e-8)"),
    claim=Rounds([[padded[0, 2]]], [["0.00000000"]]),
    inputs=(),
    note="The largest score (5) is the padded one and still gets only e^(5−1e9)/Z.",
)


def notebook_entropy(row: Iterable[sp.Expr]) -> sp.Expr:
    """The notebook's attention_entropy of one row, −Σ w log w (its clip at 1e-12 leaves these
    rows, every weight at least 0.01, unchanged)."""
    return -sum(w * sp.log(w) for w in row)


sharp = [sp.Rational(98, 100), sp.Rational(1, 100), sp.Rational(1, 100)]
diffuse = [sp.Rational(1, 3)] * 3

notebook_diffuse_attention_has_higher_entropy = Theorem(
    name="notebook_diffuse_attention_has_higher_entropy",
    source=Source(NOTEBOOK, "Demos 3, 13, 23 (entropy)",
                  "Hd > Hs, 'diffuse attention has higher entropy'"),
    claim=Greater(notebook_entropy(diffuse), notebook_entropy(sharp)),
    inputs=(),
    note="Hd = log 3 ≈ 1.0986 against Hs ≈ 0.1119 for [0.98, 0.01, 0.01]. That the uniform row "
    "has the largest entropy of every row of its length is entropy_at_most_log_n.",
)

layers, n_heads, length, head_dim, bytes_per = 24, 16, 2048, 64, 2
kv_bytes = layers * 2 * n_heads * length * head_dim * bytes_per

notebook_kv_cache_size = Theorem(
    name="notebook_kv_cache_size",
    source=Source(NOTEBOOK, "Demos 7, 17 (KV cache size)", "KV cache MiB, rounded to 2 decimals"),
    claim=Rounds([[sp.Integer(kv_bytes) / 2**20]], [["192.00"]]),
    inputs=(),
    note="24 layers × 2 (K and V) × 16 heads × 2048 tokens × 64 dims × 2 bytes = "
    "201,326,592 bytes = 192 MiB exactly.",
)


def alibi_bias(size: int, slope: sp.Expr) -> sp.Matrix:
    """The notebook's alibi_bias: slope · max(i − j, 0)."""
    return sp.Matrix(size, size, lambda r, c: slope * max(r - c, 0))


notebook_alibi_bias = Theorem(
    name="notebook_alibi_bias",
    source=Source(NOTEBOOK, "Demos 8, 18 (ALiBi bias)",
                  "bias[4, 0] = −1.0, linear distance penalty"),
    claim=Rounds([[alibi_bias(5, sp.Rational(-1, 4))[4, 0]]], [["-1.00000000"]]),
    inputs=(),
    note="slope −0.25 times the distance 4 between query 4 and key 0.",
)

notebook_quadratic_cost_ratio = Theorem(
    name="notebook_quadratic_cost_ratio",
    source=Source(NOTEBOOK, "Demos 9, 19 (quadratic cost)",
                  "doubling context quadruples score matrix"),
    claim=Rounds([[(sp.Integer(2048) / 1024) ** 2]], [["4.00000000"]]),
    inputs=(),
    note="(2048/1024)² score entries per entry at T = 1024. That the score matrix has T² "
    "entries at every T is a cost claim (docs/coverage.md).",
)

T128 = 128

notebook_tiling_covers_all_pairs = Theorem(
    name="notebook_tiling_covers_all_pairs",
    source=Source(NOTEBOOK, "Demos 10, 20 (FlashAttention invariant)",
                  "tile_scores == full_scores at T = 128"),
    claim=Rounds([[4 * (T128 // 4) * T128, T128 * T128]], [["16384", "16384"]]),
    inputs=(),
    note="Four tiles of T//4 = 32 query rows, each against all 128 keys, cover the 128² pairs.",
)

# -- the tile count as a formula in T: T = 4q + r with 0 ≤ r < 4, so T // 4 = q -----------------

# q ≤ 60 keeps T² ≤ 243² = 59,049 inside float16's range (65,504), so a float16 record can
# look at every drawn length instead of leaving out those it cannot hold (with q up to 64 the
# rows left in were all lengths where the claim happens to hold, and float16 read "passed")
q = Scalar("q", Integer(0, 60))
r = Scalar("r", Integer(0, 3))
T = 4 * q.symbol + r.symbol

notebook_tile_count_formula = Theorem(
    name="notebook_tile_count_formula",
    source=Source(NOTEBOOK, "Demos 10, 20 (FlashAttention invariant)",
                  "tile_scores = 4·(T//4)·T equals full_scores = T·T"),
    claim=Equals(4 * q.symbol * T, T**2),
    inputs=(q, r),
    expect="refuted",
    note="The demo checks T = 128 only; as a count for every length T = 4q + r (T//4 = q) it "
    "misses the r leftover rows when 4 does not divide T: T = 5 gives 20, not 25.",
)

notebook_tile_count_formula_corrected = Theorem(
    name="notebook_tile_count_formula_corrected",
    source=Source(NOTEBOOK, "Demos 10, 20 (FlashAttention invariant)", "with the remainder tile"),
    claim=Equals(4 * q.symbol * T + r.symbol * T, T**2),
    inputs=(q, r),
    corrects="notebook_tile_count_formula",
    note="Four tiles of T//4 rows plus one tile of the T mod 4 leftover rows cover all T² pairs "
    "for every T.",
)

# -- score scaling: dividing by √64 divides the standard deviation by 8 --------------------------

rows = Dim("n_q", Sizes(1, 6))
cols = Dim("n_k", Sizes(1, 8))
i, i2 = rows.indices("i i2")
j, j2 = cols.indices("j j2")
raw = Tensor("raw", (rows, cols))
count = rows.symbol * cols.symbol


def variance(x: Callable[[sp.Idx, sp.Idx], sp.Expr]) -> sp.Expr:
    """np.var over every entry (population variance), of an entry-wise expression ``x(i, j)``."""
    mean = sp.Sum(x(i2, j2), (i2, 0, rows.symbol - 1), (j2, 0, cols.symbol - 1)) / count
    return sp.Sum((x(i, j) - mean) ** 2, (i, 0, rows.symbol - 1), (j, 0, cols.symbol - 1)) / count


notebook_score_scaling_variance = Theorem(
    name="notebook_score_scaling_variance",
    source=Source(NOTEBOOK, "Demos 5, 15, 25 (score scaling)",
                  "scaled = raw/√64; scaling controls dot-product variance"),
    claim=Equals(variance(lambda r_, c_: raw[r_, c_] / sp.sqrt(64)),
                 variance(lambda r_, c_: raw[r_, c_]) / 64),
    inputs=(raw,),
    note="Var(raw/√64) = Var(raw)/64, so scaled.std() = raw.std()/8 < raw.std() whenever the "
    "raw scores are not all equal, for any scores (the demo's are Gaussian, seed 1). That "
    "Var(q·k) = d_k for unit-variance entries is a statistical claim (docs/coverage.md).",
)
