"""IEEE values as written (tutorial §3.2, §4.3, §8.1, §10.1; worked example 48; notebook).

What the documents' formulas yield in float64, float32, float16 and bfloat16 when evaluated
exactly as written, ±∞ and NaN included: the −1e9 fill of the tutorial's code (it overflows to
−∞ in float16, whose largest number is 65504, but not in bfloat16 or float32), the −∞ fill of
(57), the online-softmax update (67)–(68) on a block whose scores are all −∞, the normalized
entropy at one key (0/0), softmax with and without the row maximum subtracted, and the theory
notebook's padding mask.

The exact-arithmetic versions are elsewhere: masked_softmax in masking.py gives a fully masked
row zero weights with no case split; these theorems say what code that writes the fill
literally computes instead.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Between,
    Defined,
    Dim,
    IEEEValue,
    Mask,
    Positive,
    Real,
    Scalar,
    Simplex,
    Sizes,
    Source,
    Tensor,
    Theorem,
    entropy,
    rowmax,
    softmax,
    where,
)

from ._dims import EXAMPLE_48, NOTEBOOK, TUTORIAL

exp = sp.exp

# -- §4.3: the normalized entropy H / log n_k at one key ---------------------------------------

keys = Dim("n_k", Sizes(1, 8))
j = keys.index("j")
p = Tensor("p", (keys,), Simplex())
normalized = entropy(p[j], j) / sp.log(keys.symbol)
ENTROPY = "§4.3 Definition (Attention Entropy)"

normalized_entropy_in_unit_interval = Theorem(
    name="normalized_entropy_in_unit_interval",
    source=Source(TUTORIAL, ENTROPY, "normalized entropy H/log(n_k) ∈ [0, 1]"),
    claim=IEEEValue(normalized, Between(0, 1), sizes={"n_k": 1}, at={"p": [1]}),
    inputs=(p,),
    expect="refuted",
    note="As written for every n_k: with one key the only distribution is p = (1), "
    "H = −1·log 1 = 0 and log n_k = 0, so H/log n_k = 0/0 = NaN in every format.",
)

normalized_entropy_one_key_is_nan = Theorem(
    name="normalized_entropy_one_key_is_nan",
    source=Source(TUTORIAL, ENTROPY, "normalized entropy, corrected: n_k ≥ 2"),
    claim=IEEEValue(normalized, "nan", sizes={"n_k": 1}, at={"p": [1]}),
    inputs=(p,),
    corrects="normalized_entropy_in_unit_interval",
    note="At n_k = 1 the ratio is NaN, so the range needs n_k ≥ 2; there 0 ≤ H/log n_k ≤ 1 is "
    "normalized_entropy_nonnegative and normalized_entropy_at_most_one (entropy.py).",
)

# -- §3.2 code and §8.1: jnp.where(mask, scores, -1e9), then softmax --------------------------

queries, n_keys = Dim("n_q", Sizes(1, 4)), Dim("n_k", Sizes(1, 4))
i, jj, k = queries.index("i"), n_keys.index("j"), n_keys.index("k")
S = Tensor("S", (queries, n_keys), Real(-100, 100))
M = Tensor("M", (queries, n_keys), Mask())
FILL = sp.Float("-1e9")  # the literal the code writes


def filled(fill: sp.Expr) -> Defined:
    """jnp.where(mask, scores, fill): the score where the mask keeps the key, else the fill."""
    return Defined("X", (i, jj), where(M[i, jj], S[i, jj], fill))


def stable_softmax(X: Defined) -> tuple[Defined, Defined]:
    """jax.nn.softmax as it computes: exp(x − max x) / Σ exp(x − max x)."""
    shifted = Defined("E", (i, jj), exp(X[i, jj] - rowmax(X[i, k], k)))
    total = sp.Sum(shifted[i, k], (k, 0, n_keys.symbol - 1))
    weights = Defined("A", (i, jj), shifted[i, jj] / total)
    return shifted, weights


def causal(sizes: dict[str, int]) -> list[list[int]]:
    return [[int(b <= a) for b in range(sizes["n_k"])] for a in range(sizes["n_q"])]


def fully_masked(sizes: dict[str, int]) -> list[list[int]]:
    return [[0] * sizes["n_k"] for _ in range(sizes["n_q"])]


X_fill = filled(FILL)
E_fill, A_fill = stable_softmax(X_fill)
CODE = "§3.2 scaled_dot_product_attention; §8.1 Causal Masking"

masking_finite_fill_zero_weight = Theorem(
    name="masking_finite_fill_zero_weight",
    source=Source(TUTORIAL, CODE, "jnp.where(mask, scores, -1e9)"),
    claim=IEEEValue((1 - M[i, jj]) * A_fill[i, jj], "zero",
                    sizes={"n_q": (1, 2, 3), "n_k": (1, 2, 3)}, at={"M": causal}),
    inputs=(S, M),
    definitions=(X_fill, E_fill, A_fill),
    note="Causal masks, as the code's comment says: every row keeps key 0, so the maximum is a "
    "kept score and exp(−1e9 − max) underflows to exactly 0 (float64, float32, bfloat16); in "
    "float16 −1e9 is already −∞ and exp(−∞) = 0. Scores in [−100, 100].",
)

masking_finite_fill_fully_masked_row = Theorem(
    name="masking_finite_fill_fully_masked_row",
    source=Source(TUTORIAL, CODE, "jnp.where(mask, scores, -1e9), a fully masked row"),
    claim=IEEEValue(A_fill[i, jj], {"float64": sp.Rational(1, 3), "float32": sp.Rational(1, 3),
                                    "bfloat16": sp.Rational(1, 3), "float16": "nan"},
                    sizes={"n_q": 1, "n_k": 3}, at={"M": fully_masked}),
    inputs=(S, M),
    definitions=(X_fill, E_fill, A_fill),
    note="A row whose every key is masked (padding) gets uniform weights 1/n_k from the finite "
    "fill, not the zero weights of masked_softmax; in float16 the fill is −∞ and the row is "
    "−∞ − (−∞) = NaN.",
)

# -- §8.1 (57): S + (1 − M)·(−∞), and the −∞ fill written with where ----------------------------

X_additive = Defined("X", (i, jj), S[i, jj] + (1 - M[i, jj]) * (-sp.oo))
E_additive, A_additive = stable_softmax(X_additive)
MASKING = "§8.1 Causal Masking"

masking_additive_infinity_zero_weight = Theorem(
    name="masking_additive_infinity_zero_weight",
    source=Source(TUTORIAL, MASKING, "(57), 'Applied as: S + (1 − M)·(−∞)'"),
    claim=IEEEValue((1 - M[i, jj]) * A_additive[i, jj], "zero",
                    sizes={"n_q": 2, "n_k": 2}, at={"M": causal}),
    inputs=(S, M),
    definitions=(X_additive, E_additive, A_additive),
    expect="refuted",
    note="Evaluated as written in IEEE arithmetic, a kept score (M = 1) becomes S + 0·(−∞) = "
    "NaN, so every weight of the row is NaN, the masked ones included. In exact arithmetic the "
    "claim holds (masking_zero_weight, with masked_softmax); code writes the fill with where.",
)

X_infinite = filled(-sp.oo)
E_infinite, A_infinite = stable_softmax(X_infinite)

masking_infinite_fill_zero_weight = Theorem(
    name="masking_infinite_fill_zero_weight",
    source=Source(TUTORIAL, MASKING, "(57), the −∞ fill written as where(M, S, −∞)"),
    claim=IEEEValue((1 - M[i, jj]) * A_infinite[i, jj], "zero",
                    sizes={"n_q": (1, 2, 3), "n_k": (1, 2, 3)}, at={"M": causal}),
    inputs=(S, M),
    definitions=(X_infinite, E_infinite, A_infinite),
    corrects="masking_additive_infinity_zero_weight",
    note="Selecting −∞ instead of adding it: every causal row keeps key 0, its maximum is "
    "finite, and exp(−∞ − max) = 0 in every format. Scores in [−100, 100].",
)

masking_infinite_fill_fully_masked_row = Theorem(
    name="masking_infinite_fill_fully_masked_row",
    source=Source(TUTORIAL, MASKING, "(57), a fully masked row"),
    claim=IEEEValue(A_infinite[i, jj], "nan", sizes={"n_q": 1, "n_k": (1, 2, 3)},
                    at={"M": fully_masked}),
    inputs=(S, M),
    definitions=(X_infinite, E_infinite, A_infinite),
    note="A row with no kept key: its maximum is −∞ and −∞ − (−∞) = NaN in every format; "
    "masked_softmax (masking.py) gives such a row zero weights instead, as PyTorch does "
    "since 2.5.",
)

# -- worked example 48, line 134: subtracting the row maximum before exp ------------------------

row_keys = Dim("n_k", Sizes(1, 3))
r, q = row_keys.index("j"), row_keys.index("k")
FULL_RANGE = Real(-60000, 60000)  # inside float16's largest number, 65504
x = Tensor("x", (row_keys,), FULL_RANGE)
shifted_row = Defined("E", (r,), exp(x[r] - rowmax(x[q], q)))
shifted_softmax = shifted_row[r] / sp.Sum(shifted_row[q], (q, 0, row_keys.symbol - 1))
NOTES = "Numerical and Implementation Notes"

softmax_max_shift_prevents_overflow = Theorem(
    name="softmax_max_shift_prevents_overflow",
    source=Source(EXAMPLE_48, NOTES, "lines 122, 134, exp(x_i − max(x)) prevents overflow"),
    claim=IEEEValue(shifted_softmax, Between(0, 1), sizes={"n_k": (1, 2, 3)}),
    inputs=(x,),
    definitions=(shifted_row,),
    note="For every score in [−60000, 60000] (float16's whole range, nearly) and every format: "
    "x_i − max x ≤ 0, so exp ≤ 1; the maximum's own term is exp(0) = 1, so the sum is at least "
    "1; every weight is a number in [0, 1], never ∞ or NaN. The identity it relies on is "
    "softmax_shift_invariance.",
)

two = Dim("n_k", Sizes(2, 2))
u, v = two.index("j"), two.index("k")
y = Tensor("x", (two,), FULL_RANGE)
unshifted = Defined("A", (u,), softmax(y[u], u))

softmax_unshifted_overflows_above_89 = Theorem(
    name="softmax_unshifted_overflows_above_89",
    source=Source(EXAMPLE_48, NOTES, "line 134, the overflow the shift prevents"),
    claim=IEEEValue(unshifted[0], {"float64": Between(0, 1), "float32": "nan",
                                   "bfloat16": "nan", "float16": "nan"},
                    sizes={"n_k": 2}, at={"x": [89, 0]}),
    inputs=(y,),
    definitions=(unshifted,),
    note="exp(89) ≈ 4.5·10³⁸ is above the largest float32 and bfloat16 number (≈ 3.4·10³⁸): "
    "without the shift the weight is ∞/∞ = NaN; float64 reaches e^709.",
)

softmax_unshifted_overflows_above_12_in_float16 = Theorem(
    name="softmax_unshifted_overflows_above_12_in_float16",
    source=Source(EXAMPLE_48, NOTES, "line 134, the overflow the shift prevents"),
    claim=IEEEValue(unshifted[0], {"float64": Between(0, 1), "float32": Between(0, 1),
                                   "bfloat16": Between(0, 1), "float16": "nan"},
                    sizes={"n_k": 2}, at={"x": [12, 0]}),
    inputs=(y,),
    definitions=(unshifted,),
    note="exp(12) ≈ 162755 is above float16's largest number 65504: ∞/∞ = NaN in float16 at a "
    "score of 12, finite in the wider formats.",
)

# -- the theory notebook's padding mask (Demos 6, 16): scores + [0, 0, −1e9] -------------------

three = Dim("n_k", Sizes(3, 3))
t, w = three.index("j"), three.index("k")
scores_6 = Tensor("s", (three,), Real(-10, 10))
padding = Tensor("pad", (three,), Real(-1e9, 0))
X_padded = Defined("X", (t,), scores_6[t] + padding[t])  # scores + mask
E_padded = Defined("E", (t,), exp(X_padded[t] - rowmax(X_padded[w], w)))  # stable_softmax
padded_weight = E_padded[2] / sp.Sum(E_padded[w], (w, 0, 2))

notebook_padding_mask_weight_is_zero = Theorem(
    name="notebook_padding_mask_weight_is_zero",
    source=Source(NOTEBOOK, "Demos 6, 16 (padding mask)", "padded key receives zero weight"),
    claim=IEEEValue(padded_weight, "zero", sizes={"n_k": 3},
                    at={"s": [2, 1, 5], "pad": [0, 0, -1e9]}),
    inputs=(scores_6, padding),
    definitions=(X_padded, E_padded),
    note="Exactly 0 in every format, not only within the check's 1e-8: e^(5 − 1e9 − 2) "
    "underflows (float64, float32, bfloat16), and in float16 the mask itself is −∞. The exact "
    "value, e^(−1e9)-small, is notebook_padding_mask_weight.",
)

# -- §10.1: the online-softmax update on a block whose scores are all −∞ -----------------------

block = Dim("n_b", Sizes(1, 3))
b_ = block.index("l")
scores = Tensor("y", (block,), Real(-30, 30))
m = Scalar("m", Real(-30, 30))
ell = Scalar("ell", Positive(1e-3, 1e3), latex=r"\ell")
m_updated = sp.Max(m.symbol, rowmax(scores[b_], b_))  # (67)
ell_updated = (ell.symbol * exp(m.symbol - m_updated)
               + sp.Sum(exp(scores[b_] - m_updated), (b_, 0, block.symbol - 1)))  # (68)
ONLINE = "§10.1.1 Proposition (Online Softmax); §10.1.2 step 1"


def all_minus_infinity(sizes: dict[str, int]) -> list[sp.Expr]:
    return [-sp.oo] * sizes["n_b"]


online_softmax_first_block_all_masked = Theorem(
    name="online_softmax_first_block_all_masked",
    source=Source(TUTORIAL, ONLINE, "(67)–(68) from m = −∞, ℓ = 0"),
    claim=IEEEValue(ell_updated, "nan", sizes={"n_b": (1, 2, 3)},
                    at={"m": -sp.oo, "ell": 0, "y": all_minus_infinity}),
    inputs=(scores, m, ell),
    note="From the initial m = −∞, ℓ = 0 of §10.1.2, a first block whose scores are all −∞ "
    "(fully masked) gives m′ = −∞ and exp(m − m′) = exp(−∞ − (−∞)) = NaN, so ℓ′ = 0·NaN + … = "
    "NaN, and NaN stays for every later block: kernels guard this case.",
)

online_softmax_later_block_all_masked = Theorem(
    name="online_softmax_later_block_all_masked",
    source=Source(TUTORIAL, ONLINE, "(67)–(68) after a finite m"),
    claim=IEEEValue(ell_updated, 3, sizes={"n_b": (1, 2, 3)},
                    at={"m": 2, "ell": 3, "y": all_minus_infinity}),
    inputs=(scores, m, ell),
    note="Once m is finite, a block of −∞ scores leaves m and ℓ unchanged (exp(0) = 1, "
    "exp(−∞) = 0): the NaN above needs every score so far to be −∞.",
)
