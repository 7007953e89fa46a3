"""Worked example 48's numerical advice, made precise: what ridge regularization does to the
condition number, why QR or SVD beats the normal equations, what jitter does to a Gram matrix
(and when float32 can see it), what layer normalization does to magnitudes, what triangular
solves and sparse attention patterns cost, and what is low rank in attention. docs/coverage.md
maps each line to these theorems.

κ(A) = σ_max(A)/σ_min(A) with σ_min over the columns (min over unit x of ‖Ax‖), so a matrix with
fewer rows than columns, or of lower rank, has κ = ∞: the condition number of least squares.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from attnproof import (
    Cost,
    Defined,
    Dim,
    Equals,
    Integer,
    Positive,
    PositiveDefinite,
    RankAtMost,
    Real,
    Scalar,
    Sizes,
    Source,
    Spectral,
    Step,
    Tensor,
    Theorem,
    cond,
    singular_max,
    singular_min,
)

from ._dims import EXAMPLE_48, d_k, n_k, n_q

# an array module (NumPy, or the numeric route's instrumented NumPy) and its arrays: the
# algorithms run on either, so no one type
ArrayModule = Any
Array = Any


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


# -- ridge regularization and the normal equations (lines 78, 79, 105) ------------------------

# X is n × d, the design matrix of a least-squares fit; n is drawn up to 8 and d up to 4 so that
# the drawn shapes include tall ones (more rows than columns), where κ(X) is finite
rows = Dim("n", Sizes(1, 8))
features = Dim("d", Sizes(1, 4))
r = rows.index("r")
a, b = features.indices("a b")
X = Tensor("X", (rows, features))
lam = Scalar("lambda", Positive(1e-3, 1e3))
XtX = Defined("G", (a, b), total(X[r, a] * X[r, b], r), latex=r"(X^{T} X)")
ridge = Defined("R", (a, b), XtX[a, b] + lam.symbol * sp.KroneckerDelta(a, b),
                latex=r"(X^{T} X + \lambda I)")
RIDGE = Source(EXAMPLE_48, "Numerical and Implementation Notes; ML Examples and Patterns",
               "lines 79, 105, 'regularize (ridge) ... to improve conditioning'")

example48_ridge_improves_conditioning = Theorem(
    name="example48_ridge_improves_conditioning",
    source=RIDGE,
    claim=Spectral(cond(ridge[a, b], a, b), "<=", cond(XtX[a, b], a, b)),
    inputs=(X, lam),
    definitions=(XtX, ridge),
    note="XᵀX is positive semi-definite with eigenvalues σ_i(X)²; adding λI (λ > 0) shifts each "
    "by λ, so κ(XᵀX + λI) = (M + λ)/(m + λ) ≤ M/m = κ(XᵀX) (M, m its extreme eigenvalues), and "
    "finite even where XᵀX is singular. It is strictly smaller unless M = m (XᵀX a multiple of "
    "I, already perfectly conditioned): see example48_ridge_shifts_the_spectrum. 'Rescale "
    "features' on line 79 names no scaling, so only the ridge half has a verdict.",
)

example48_ridge_shifts_the_spectrum = Theorem(
    name="example48_ridge_shifts_the_spectrum",
    source=RIDGE,
    claim=Spectral(cond(ridge[a, b], a, b), "=",
                   (singular_max(XtX[a, b], a, b) + lam.symbol)
                   / (singular_min(XtX[a, b], a, b) + lam.symbol)),
    inputs=(X, lam),
    definitions=(XtX, ridge),
    note="The exact amount: κ(XᵀX + λI) = (σ_max + λ)/(σ_min + λ) for the extreme singular values "
    "(= eigenvalues) of XᵀX. Since (M + λ)/(m + λ) < M/m exactly when m < M, ridge improves "
    "the conditioning strictly unless every singular value is the same, and more the larger λ "
    "is (at the price of bias in the fit).",
)

example48_normal_equations_square_the_condition_number = Theorem(
    name="example48_normal_equations_square_the_condition_number",
    source=Source(EXAMPLE_48, "Numerical and Implementation Notes", "line 78, 'prefer QR/SVD "
                  "for ill-conditioned least squares'"),
    claim=Spectral(cond(XtX[a, b], a, b), "=", cond(X[r, a], r, a) ** 2),
    inputs=(X,),
    definitions=(XtX,),
    note="The mathematical reason behind the advice: solving least squares through the normal "
    "equations XᵀXw = Xᵀy works with κ(XᵀX) = κ(X)², while QR (X = QR, κ(R) = κ(X)) and the SVD "
    "work with κ(X) itself, so they lose about half as many digits (κ(X) = 10⁴ costs the normal "
    "equations 8 of float64's 16 digits). Both sides are ∞ for X of lower column rank.",
)

# -- jitter: BᵀB + εI is positive definite (lines 69, 78) ----------------------------------------

m = Dim("n", Sizes(1, 6))
p, q, s, t = m.indices("p q s t")
B = Tensor("B", (m, m))
BtB = Defined("A", (p, q), total(B[s, p] * B[s, q], s), latex=r"(B^{T} B)")
relative = Scalar("rho", Positive(1e-3, 1))
floor = Scalar("tau", Positive(1e-6, 1))
frobenius_squared = total(B[s, t] ** 2, s, t)  # ‖B‖_F² = tr(BᵀB) ≥ ‖BᵀB‖_F
JITTER = Source(EXAMPLE_48, "Numerical and Shape Notes, Stability eps; Numerical and "
                "Implementation Notes, Stability", "lines 69, 78, 'εI (jitter) for SPD solves'")

example48_jitter_makes_gram_positive_definite = Theorem(
    name="example48_jitter_makes_gram_positive_definite",
    source=JITTER,
    claim=PositiveDefinite(BtB[p, q] + (relative.symbol * frobenius_squared + floor.symbol)
                           * sp.KroneckerDelta(p, q), p, q),
    inputs=(B, relative, floor),
    definitions=(BtB,),
    note="xᵀ(BᵀB + εI)x = ‖Bx‖² + ε‖x‖² > 0 for x ≠ 0 and every ε > 0, so BᵀB + εI is SPD and "
    "Cholesky applies; the proof is that argument, for all sizes. The jitter is stated scaled to "
    "the matrix, ε = ρ‖B‖_F² + τ with ρ ≥ 10⁻³ (‖B‖_F² = tr BᵀB ≥ ‖BᵀB‖_F), because that is the "
    "condition under which float32 can see it: its check resolves a least eigenvalue only above "
    "256 eps₃₂ (‖A‖_F + ‖|A|‖_F) ≤ 512 eps₃₂ (‖B‖_F² + ε√n), so it needs ε ≥ c·eps₃₂·‖BᵀB‖ with "
    "c ≈ 512 (ρ ≥ 6.1·10⁻⁵; 10⁻³ leaves a factor 16). An absolute ε = 10⁻⁶ next to "
    "A ≈ [[8.03, 8.03], [8.03, 8.03]] gives a float32 least eigenvalue of 2.9·10⁻⁶ under a "
    "resolution of 9.8·10⁻⁴, and an ε below about eps·|A_ii| is lost when it is added to the "
    "diagonal at all (fl(A_ii + ε) = A_ii): jitter that float32 (or MLX, whose float64 runs in "
    "float32) is to see must be relative.",
)

# -- layer normalization controls magnitudes (line 138) ------------------------------------------

width = Dim("d", Sizes(1, 8))
u, v = width.indices("u v")
h = Tensor("x", (width,))
# ε at least float16's smallest normal number, 2⁻¹⁴ ≈ 6.1e-5: a smaller ε is subnormal in
# float16, and a backend that flushes subnormals to zero turns a constant x (variance 0) into
# 0/0; every format represents this range exactly as normal numbers
ln_epsilon = Scalar("epsilon", Positive(2.0**-14, 1))
mean = total(h[v], v) / width.symbol
variance = total((h[v] - mean) ** 2, v) / width.symbol
normalized = (h[u] - mean) / sp.sqrt(variance + ln_epsilon.symbol)

example48_layer_norm_controls_magnitudes = Theorem(
    name="example48_layer_norm_controls_magnitudes",
    source=Source(EXAMPLE_48, "ML Context: From Attention to Transformers", "line 138, 'layer "
                  "normalization ... to control activation magnitudes'"),
    claim=Equals(total(normalized ** 2, u) / width.symbol,
                 variance / (variance + ln_epsilon.symbol)),
    inputs=(h, ln_epsilon),
    note="y = (x − mean)/√(var + ε) has mean square var/(var + ε) < 1 whatever the scale of x "
    "(and mean 0): the output's magnitude no longer depends on the input's. ε is drawn from "
    "[2⁻¹⁴, 1], from float16's smallest normal number up: at ε = 10⁻⁶ (subnormal in float16) a "
    "backend that flushes subnormals to zero evaluates a constant x to 0/0 = NaN, a limit of the "
    "format and not of the claim.",
)

# -- triangular solves and products: O(n²) (line 81) -------------------------------------------

size = Dim("n", Sizes(1, 10))
i, k = size.indices("i k")
L = Tensor("L", (size, size), Real(1, 3))  # a lower-triangular system with a usable diagonal
y = Tensor("y", (size,))
COMPLEXITY = Source(EXAMPLE_48, "Numerical and Implementation Notes, Complexity & memory",
                    "line 81, 'O(n²) for triangular solves/products'")


def forward_substitution(xp: ArrayModule, L: Array, y: Array, **_: Array) -> Array:
    """x with L x = y, L lower triangular: x_i = (y_i − Σ_{j<i} L_ij x_j) / L_ii."""
    x = xp.zeros(y.shape)
    with xp.errstate(all="ignore"):  # the cost is counted whatever L's diagonal holds
        for row in range(y.shape[0]):
            x[row] = (y[row] - L[row, :row] @ x[:row]) / L[row, row]
    return x


def triangular_times_vector(xp: ArrayModule, L: Array, y: Array, **_: Array) -> Array:
    """L y for L lower triangular: entry i sums the i + 1 products with j ≤ i."""
    out = xp.zeros(y.shape)
    for row in range(y.shape[0]):
        out[row] = L[row, :row + 1] @ y[:row + 1]
    return out


def triangular_times_triangular(xp: ArrayModule, L: Array, y: Array, **_: Array) -> Array:
    """L L for L lower triangular: entry (i, k), k ≤ i, sums L_ij L_jk over k ≤ j ≤ i."""
    n = L.shape[0]
    out = xp.zeros((n, n))
    for row in range(n):
        for column in range(row + 1):
            out[row, column] = L[row, column:row + 1] @ L[column:row + 1, column]
    return out


example48_triangular_solve_cost_quadratic = Theorem(
    name="example48_triangular_solve_cost_quadratic",
    source=COMPLEXITY,
    claim=Cost(size.symbol ** 2, (Step("x", (size,), over=(i,),
                                       entries=((i, 0, size.symbol - 1),)),),
               counted="multiply-adds", order="Theta", growing=(size,),
               implementation=forward_substitution),
    inputs=(L, y),
    note="Forward substitution computes x_i from the i values before it: Σ_{i<n} i = n(n − 1)/2 "
    "multiply-adds (and n divisions), Θ(n²), against n³/3 for the factorization that produced "
    "the triangle.",
)

example48_triangular_product_cost_quadratic = Theorem(
    name="example48_triangular_product_cost_quadratic",
    source=COMPLEXITY,
    claim=Cost(size.symbol ** 2, (Step("Ly", (size,), over=(i + 1,),
                                       entries=((i, 0, size.symbol - 1),)),),
               counted="multiply-adds", order="Theta", growing=(size,),
               implementation=triangular_times_vector),
    inputs=(L, y),
    note="A triangular matrix times a vector: entry i sums i + 1 products, n(n + 1)/2 in all, "
    "Θ(n²). 'Products' holds for one vector (or a fixed number of them): a product of two n × n "
    "triangular matrices costs n(n + 1)(n + 2)/6, Θ(n³) "
    "(example48_triangular_matrix_product_cost_cubic).",
)

example48_triangular_matrix_product_cost_cubic = Theorem(
    name="example48_triangular_matrix_product_cost_cubic",
    source=COMPLEXITY,
    claim=Cost(size.symbol * (size.symbol + 1) * (size.symbol + 2) / 6,
               (Step("LL", (size, size), over=(i - k + 1,),
                     entries=((i, 0, size.symbol - 1), (k, 0, i))),),
               counted="multiply-adds", order="exact", implementation=triangular_times_triangular),
    inputs=(L, y),
    note="The product of two lower-triangular matrices is lower triangular; entry (i, k), k ≤ i, "
    "sums over k ≤ j ≤ i: Σ_i Σ_{k≤i} (i − k + 1) = n(n + 1)(n + 2)/6 multiply-adds, about n³/6, "
    "so line 81's O(n²) is for a triangular matrix applied to a vector, not to a matrix.",
)

# -- sparse attention: local windows and blocks are linear in n (lines 130, 154) ---------------

seq = Dim("n", Sizes(1, 64))
window = Scalar("w", Integer(1, 8))
head = Dim("d", Sizes(1, 4))
blocks = Dim("m", Sizes(1, 8))
block = Dim("B", Sizes(1, 8))
Qs, Ks = Tensor("Q", (seq, head)), Tensor("K", (seq, head))
Qb, Kb = Tensor("Q", (blocks, block, head)), Tensor("K", (blocks, block, head))
SPARSE = Source(EXAMPLE_48, "Connection to ML Applications; Connection to Broader Examples, "
                "Chapter 15 (Sparse)", "lines 130, 154, 'local windows ... O(n)'")


def local_window_scores(xp: ArrayModule, Q: Array, K: Array, w: int, **_: Array) -> Array:
    """Each query i scores the w keys i − w + 1, …, i (zero-padded before the start)."""
    padded = xp.concatenate([xp.zeros((w - 1, K.shape[1]), dtype=K.dtype), K])
    windows = xp.stack([padded[row:row + w] for row in range(Q.shape[0])])  # (n, w, d)
    return (windows @ Q[:, :, None])[:, :, 0]  # n products of (w × d) by (d × 1)


def block_scores(xp: ArrayModule, Q: Array, K: Array, **_: Array) -> Array:
    """Each query scores the B keys of its own block: m products of B × d by d × B."""
    return Q @ K.transpose(0, 2, 1)


example48_local_window_attention_cost_linear = Theorem(
    name="example48_local_window_attention_cost_linear",
    source=SPARSE,
    claim=Cost(seq.symbol, (Step("S_local", (seq, window), over=(head,)),),
               counted="multiply-adds", order="Theta", growing=(seq,),
               implementation=local_window_scores),
    inputs=(Qs, Ks, window),
    note="A local window of w keys per query (a causal sliding window, padded at the start as "
    "banded kernels do): n·w scores of d multiply-adds each, n·w·d, linear in n for a fixed "
    "window and head dimension, against n²d for dense attention.",
)

example48_block_sparse_attention_cost_linear = Theorem(
    name="example48_block_sparse_attention_cost_linear",
    source=SPARSE,
    claim=Cost(blocks.symbol * block.symbol, (Step("S_blocks", (blocks, block, block),
                                                   over=(head,)),),
               counted="multiply-adds", order="Theta", growing=(blocks,),
               implementation=block_scores),
    inputs=(Qb, Kb),
    note="A block pattern with blocks of B keys: the n = mB queries score m·B·B pairs, m·B²·d "
    "multiply-adds, linear in n = mB for a fixed block size B (and head dimension d), against "
    "n²d for dense attention. Which pattern gives O(n log n) the text does not say (a query "
    "attending to keys at distances 1, 2, 4, …, as LogSparse attention does, scores log₂ n of "
    "them); a fixed stride s alone scores n/s keys per query, still Θ(n²).",
)

# -- low rank in attention (line 132) ------------------------------------------------------------

i_q = n_q.index("i")
j_k = n_k.index("j")
c = d_k.index("c")
Qa, Ka = Tensor("Q", (n_q, d_k)), Tensor("K", (n_k, d_k))
scores = Defined("S", (i_q, j_k), total(Qa[i_q, c] * Ka[j_k, c], c) / sp.sqrt(d_k.symbol))

example48_attention_scores_low_rank = Theorem(
    name="example48_attention_scores_low_rank",
    source=Source(EXAMPLE_48, "Connection to Linear Algebra Theory", "line 132, 'attention "
                  "matrices often have low effective rank', made precise"),
    claim=RankAtMost(scores[i_q, j_k], i_q, j_k, d_k.symbol),
    inputs=(Qa, Ka),
    definitions=(scores,),
    note="'Often' and 'effective rank' (no threshold) leave nothing to decide as written; the "
    "precise fact behind the line: the scores QKᵀ/√d_k factor through R^{d_k}, so their rank is "
    "at most d_k, low when d_k < n. The softmax weights need not inherit it: with d_k = 1, "
    "Q = K = [[0], [1]] gives scores [[0, 0], [0, 1]] and weights of determinant "
    "(e − 1)/(2(e + 1)) ≠ 0, rank 2. Low-rank methods (Linformer) rely on the decay of the "
    "weights' singular values, an empirical property of trained models, not on an exact rank.",
)
