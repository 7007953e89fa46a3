"""What attention costs: memory and multiply-adds (tutorial §10; worked example 48; notebook).

Each claim counts an algorithm written here in NumPy: the symbolic route derives the count from
the algorithm's declared steps (what it materialises, what each entry sums over) and compares it
with the documents' formula or order; the numeric route runs the same code on instrumented
arrays and counts what it actually allocates and multiplies. n is the sequence length (queries
and keys alike), d the head dimension (keys and values alike), B the key-block size.

The block-wise implementation in theorems/online_softmax.py (``blockwise_attention``) computes
every score first (``scores_all``, n_q × n_k) and then walks the key blocks: it checks the
online-softmax arithmetic, but it holds O(n²) entries; the tiled algorithm below computes each
block's scores inside the loop, which is what §10.1's O(n) memory needs.
"""

from __future__ import annotations

import math
from typing import Any

import sympy as sp

from attnproof import Dim, Integer, Scalar, Sizes, Source, Tensor, Theorem
from attnproof.symbolic.kinds.cost import Cost, Step

from ._dims import EXAMPLE_48, NOTEBOOK, TUTORIAL

# an array module (NumPy, or the numeric route's instrumented NumPy) and its arrays: the
# algorithms run on either, so no one type
ArrayModule = Any
Array = Any

n = Dim("n", Sizes(1, 12))
d = Dim("d", Sizes(1, 6))
B = Scalar("B", Integer(1, 8))
Q = Tensor("Q", (n, d))
K = Tensor("K", (n, d))
V = Tensor("V", (n, d))


def standard_attention(xp: ArrayModule, Q: Array, K: Array, V: Array, **_: Array) -> Array:
    """softmax(QKᵀ/√d)V with the n × n matrix materialised once and normalised in place."""
    A = Q @ K.T
    A *= 1 / math.sqrt(Q.shape[1])
    A -= A.max(axis=1, keepdims=True)
    xp.exp(A, out=A)
    A /= A.sum(axis=1, keepdims=True)
    return A @ V


def tiled_attention(xp: ArrayModule, Q: Array, K: Array, V: Array, B: int, **_: Array
                    ) -> Array:
    """§10.1.2 with the scores of each key block computed inside the loop: running O, ℓ, m
    over blocks of B keys; no n × n array is ever held."""
    rows = Q.shape[0]
    O = xp.zeros((rows, V.shape[1]))
    ell = xp.zeros((rows, 1))
    m = xp.full((rows, 1), -xp.inf)
    for start in range(0, K.shape[0], B):
        S = Q @ K[start:start + B].T
        S *= 1 / math.sqrt(Q.shape[1])
        m_new = xp.maximum(m, S.max(axis=1, keepdims=True))
        S -= m_new
        xp.exp(S, out=S)  # the block's weights exp(S − m_new)
        m -= m_new
        xp.exp(m, out=m)  # the rescale exp(m − m_new)
        O *= m
        O += S @ V[start:start + B]
        ell *= m
        ell += S.sum(axis=1, keepdims=True)
        m = m_new
        del S  # before the next block's scores are allocated
    O /= ell
    return O


# Held at the peak of standard_attention (during A @ V): A and the output.
STANDARD_PEAK = (Step("A", (n, n)), Step("O", (n, d)))
# Held at the peak of tiled_attention (during O += S @ V_j): O, the product, ℓ, m, m_new and
# one block of scores; the first block is the largest, min(B, n) keys.
TILED_PEAK = (Step("O", (n, d)), Step("S_j V_j", (n, d)), Step("l", (n,)), Step("m", (n,)),
              Step("m_new", (n,)), Step("S_j", (n, sp.Min(B.symbol, n.symbol))))

standard_attention_memory_quadratic = Theorem(
    name="standard_attention_memory_quadratic",
    source=Source(TUTORIAL, "§10 introduction, §10.1 Complexity comparison",
                  "'Standard attention: O(n²) memory for storing A'"),
    claim=Cost(n.symbol**2, STANDARD_PEAK, counted="entries", order="Theta", growing=(n,),
               implementation=standard_attention),
    inputs=(Q, K, V),
    note="The peak is n² + nd entries (A and the output): Θ(n²) as n grows with d fixed.",
)

flash_attention_memory_linear = Theorem(
    name="flash_attention_memory_linear",
    source=Source(TUTORIAL, "§10.1 Flash Attention; Complexity comparison",
                  "'Flash Attention: O(n) memory'"),
    claim=Cost(n.symbol, TILED_PEAK, counted="entries", order="O", growing=(n,),
               implementation=tiled_attention),
    inputs=(Q, K, V, B),
    note="The peak is 2nd + 3n + n·min(B, n) entries: O(n) as n grows with d and B fixed.",
)

tiled_attention_memory_linear = Theorem(
    name="tiled_attention_memory_linear",
    source=Source(EXAMPLE_48, "Numerical and Implementation Notes",
                  "'tiled computation reduces memory from O(n²) to O(n)' (line 134)"),
    claim=Cost(n.symbol, TILED_PEAK, counted="entries", order="O", growing=(n,),
               implementation=tiled_attention),
    inputs=(Q, K, V, B),
    note="The O(n) side; the O(n²) it starts from is standard_attention_memory_quadratic.",
)


# -- multiply-adds --------------------------------------------------------------------------

STANDARD_MULTIPLY_ADDS = (Step("S = QKᵀ", (n, n), over=(d,)), Step("row sums", (n,), over=(n,)),
                          Step("AV", (n, d), over=(n,)))

attention_cost_quadratic_times_dimension = Theorem(
    name="attention_cost_quadratic_times_dimension",
    source=Source(EXAMPLE_48, "Why This Matters for ML",
                  "'O(n²d) complexity for sequence length n' (line 128)"),
    claim=Cost(n.symbol**2 * d.symbol, STANDARD_MULTIPLY_ADDS, counted="multiply-adds",
               order="Theta", growing=(n, d), implementation=standard_attention),
    inputs=(Q, K, V),
    note="n²d for QKᵀ, n² for the softmax sums, n²d for AV: 2n²d + n², Θ(n²d) in n and in d.",
)


def elu_plus_one(xp: ArrayModule, x: Array) -> Array:
    """φ(x) = ELU(x) + 1 of §10.2."""
    return xp.where(x > 0, x + 1, xp.exp(xp.minimum(x, 0)))


def linear_attention_key_sums(xp: ArrayModule, K: Array, V: Array, **_: Array
                              ) -> tuple[Array, Array]:
    """(70)'s sums over keys: Σ_j φ(k_j) v_jᵀ and Σ_j φ(k_j)."""
    features = elu_plus_one(xp, K)
    return features.T @ V, features.sum(axis=0)


linear_attention_key_sums_cost = Theorem(
    name="linear_attention_key_sums_cost",
    source=Source(TUTORIAL, "§10.2 Linear Attention", "after (70): 'precomputed in O(nd²) time'"),
    claim=Cost(n.symbol * d.symbol**2,
               (Step("Σ φ(k) vᵀ", (d, d), over=(n,)), Step("Σ φ(k)", (d,), over=(n,))),
               counted="multiply-adds", order="O", growing=(n, d),
               implementation=linear_attention_key_sums),
    inputs=(K, V),
    note="nd² + nd multiply-adds: O(nd²) in n and in d.",
)

q = Tensor("q", (d,))
KV = Tensor("KV", (d, d))  # Σ_j φ(k_j) v_jᵀ, precomputed
z = Tensor("z", (d,))  # Σ_j φ(k_j), precomputed


def linear_attention_query(xp: ArrayModule, q: Array, KV: Array, z: Array, **_: Array) -> Array:
    """One query of (70) from the precomputed sums."""
    features = elu_plus_one(xp, q)
    return (features @ KV) / (features @ z)


def standard_attention_query(xp: ArrayModule, q: Array, K: Array, V: Array, **_: Array
                             ) -> Array:
    """One query of softmax attention: its n scores, their softmax, the weighted values."""
    scores = K @ q
    scores *= 1 / math.sqrt(q.shape[0])
    scores -= scores.max()
    xp.exp(scores, out=scores)
    scores /= scores.sum()
    return scores @ V


linear_attention_query_cost = Theorem(
    name="linear_attention_query_cost",
    source=Source(TUTORIAL, "§10.2 Linear Attention", "after (70): 'each query costs O(d²)'"),
    claim=Cost(d.symbol**2, (Step("φ(q)ᵀ Σφ(k)vᵀ", (d,), over=(d,)),
                             Step("φ(q)ᵀ Σφ(k)", (), over=(d,))),
               counted="multiply-adds", order="O", growing=(d,),
               implementation=linear_attention_query),
    inputs=(q, KV, z),
    note="d² + d multiply-adds per query, whatever n is.",
)

standard_attention_query_cost = Theorem(
    name="standard_attention_query_cost",
    source=Source(TUTORIAL, "§10.2 Linear Attention", "after (70): 'instead of O(nd)'"),
    claim=Cost(n.symbol * d.symbol, (Step("K q", (n,), over=(d,)), Step("Σ weights", (), over=(n,)),
                                     Step("weights V", (d,), over=(n,))),
               counted="multiply-adds", order="Theta", growing=(n, d),
               implementation=standard_attention_query),
    inputs=(q, K, V),
    note="2nd + n multiply-adds per query of softmax attention: Θ(nd).",
)

# -- the notebook: KV cache and score entries -------------------------------------------------

T = Dim("T", Sizes(1, 16))
layers = Dim("L", Sizes(1, 3))
heads = Dim("H", Sizes(1, 3))
dh = Dim("d_h", Sizes(1, 4))
K_new = Tensor("K_new", (T, layers, heads, dh))  # each token's keys, per layer and head
V_new = Tensor("V_new", (T, layers, heads, dh))


def kv_cache(xp: ArrayModule, K_new: Array, V_new: Array, **_: Array) -> Array:
    """Decoding T tokens: each step writes the token's keys and values into the cache."""
    tokens, n_layers, n_heads, width = K_new.shape
    cache = xp.zeros((n_layers, 2, n_heads, tokens, width))
    for t in range(tokens):
        cache[:, 0, :, t] = K_new[t]
        cache[:, 1, :, t] = V_new[t]
    return cache


notebook_kv_cache_grows_linearly = Theorem(
    name="notebook_kv_cache_grows_linearly",
    source=Source(NOTEBOOK, "Demos 7, 17 (KV cache size)",
                  "'KV cache memory is positive and grows with T'"),
    claim=Cost(T.symbol, (Step("cache", (layers, 2, heads, T, dh)),), counted="entries",
               order="Theta", growing=(T,), implementation=kv_cache),
    inputs=(K_new, V_new),
    note="layers × 2 × heads × T × d_h entries (times bytes_per bytes): linear in T. The "
    "notebook's numbers (192 MiB) are notebook_kv_cache_size.",
)

Q_T = Tensor("Q", (T, dh))
K_T = Tensor("K", (T, dh))


def score_matrix(xp: ArrayModule, Q: Array, K: Array, **_: Array) -> Array:
    return Q @ K.T


notebook_score_matrix_entries = Theorem(
    name="notebook_score_matrix_entries",
    source=Source(NOTEBOOK, "Demos 9, 19 (quadratic cost)", "plot of T² score entries"),
    claim=Cost(T.symbol**2, (Step("scores", (T, T)),), counted="entries",
               implementation=score_matrix),
    inputs=(Q_T, K_T),
    note="Exactly T² entries at every T; the ratio 4 at T = 1024 → 2048 is "
    "notebook_quadratic_cost_ratio.",
)
