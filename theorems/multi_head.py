"""Multi-head attention (tutorial §7.1–§7.2, §8.2; theory notebook, multi-head shape demos).

Each head's scores (51) are a bilinear form (5) of the token embeddings with the learned metric
M^h = W_Q^h (W_K^h)ᵀ/√d_k, the form (58) of §8.2. (54) as "Concat(heads)·W_O" and the
notebook's split/combine of heads are reshapes, stated in reshapes_permutations.py; the
notebook's shapes are checked as numbers below.
"""

from __future__ import annotations

import sympy as sp

from attnproof import Defined, Dim, Equals, Rounds, Sizes, Source, Tensor, Theorem

from ._dims import NOTEBOOK, TUTORIAL, d_k

heads = Dim("H", Sizes(1, 4))
tokens = Dim("n", Sizes(1, 6))
d_model = Dim("d_model", Sizes(1, 6), latex=r"d_{\mathrm{model}}")
h = heads.index("h")
i, j = tokens.indices("i j")
b, c = d_model.indices("b c")
a = d_k.index("a")


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


X = Tensor("X", (tokens, d_model))
W_Q = Tensor("W_Q", (heads, d_model, d_k))
W_K = Tensor("W_K", (heads, d_model, d_k))
Qh = Defined("Q", (h, i, a), total(X[i, b] * W_Q[h, b, a], b))  # (48)
Kh = Defined("K", (h, j, a), total(X[j, b] * W_K[h, b, a], b))  # (49)
Sh = Defined("S", (h, i, j), total(Qh[h, i, a] * Kh[h, j, a], a) / sp.sqrt(d_k.symbol))  # (51)
Mh = Defined("M", (h, b, c), total(W_Q[h, b, a] * W_K[h, c, a], a) / sp.sqrt(d_k.symbol))

multi_head_scores_are_learned_bilinear_forms = Theorem(
    name="multi_head_scores_are_learned_bilinear_forms",
    source=Source(TUTORIAL, "§7.1 Definition (Multi-Head Attention), §8.2",
                  "(48), (49), (51), (58)"),
    claim=Equals(Sh[h, i, j], total(X[i, b] * Mh[h, b, c] * X[j, c], b, c)),
    inputs=(X, W_Q, W_K),
    definitions=(Qh, Kh, Sh, Mh),
    unstable_in=("float16",),
    note="S^hij = X^ib M^h_bc X^jc with M^h = W_Q^h (W_K^h)ᵀ/√d_k: each head scores token pairs "
    "with its own learned bilinear form (58), of rank at most d_k. In float16 the scores of tokens "
    "with entries near 100 overflow (about 1e5) on one side: a known instability, declared.",
)


# -- the notebook's split_heads / combine_heads, as shape arithmetic ----------------------------

def split_heads_shape(shape: tuple[int, int, int], n_heads: int) -> tuple[int, int, int, int]:
    """The notebook's split_heads: (B, T, D) -> (B, heads, T, D // heads); heads divides D."""
    batch, length, width = shape
    assert width % n_heads == 0
    return (batch, n_heads, length, width // n_heads)


def combine_heads_shape(shape: tuple[int, int, int, int]) -> tuple[int, int, int]:
    """The notebook's combine_heads: (B, heads, T, Dh) -> (B, T, heads * Dh)."""
    batch, n_heads, length, per_head = shape
    return (batch, length, n_heads * per_head)


split = split_heads_shape((2, 5, 12), 3)

notebook_multi_head_shapes = Theorem(
    name="notebook_multi_head_shapes",
    source=Source(NOTEBOOK, "Demos 4, 14, 24 (multi-head shapes)",
                  "X (2, 5, 12), 3 heads: split, then combine restores the model width"),
    claim=Rounds([[*split, *combine_heads_shape(split)]],
                 [["2", "3", "5", "4", "2", "5", "12"]]),
    inputs=(),
    note="The split shape (2, 3, 5, 4) and the combined shape (2, 5, 12) = X.shape, computed by "
    "the notebook's reshape rules; each head works on d_model/H = 4 features (tutorial §7.2, "
    "(55)). Demos 4, 14 and 24 run the same cell under three titles.",
)
