"""Online softmax and the block-wise (Flash Attention) algorithm (tutorial §10.1).

The merge (67)–(68) keeps ℓ = Σ exp(x − m) for the elements seen so far. Its correctness does
not depend on m being the maximum (the maximum only keeps exp from overflowing), so the
identities below are proved for every reference point, the maxima included.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Equals,
    Integer,
    Positive,
    Real,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
    rowmax,
    softmax,
)

from ._dims import TUTORIAL, d_k, d_v, n_k, n_q

# an array module (NumPy, JAX, MLX) and its arrays: the block-wise code runs on every
# backend, so no one type
ArrayModule = Any
Array = Any

n_old = Dim("n_a", Sizes(1, 8))
n_new = Dim("n_b", Sizes(1, 8))
k = n_old.index("k")
l_ = n_new.index("l")
x = Tensor("x", (n_old,))
y = Tensor("y", (n_new,))
exp = sp.exp

m = rowmax(x[k], k)  # running maximum of the elements seen so far
m_new = sp.Max(m, rowmax(y[l_], l_))  # (67)
ell = sp.Sum(exp(x[k] - m), (k, 0, n_old.symbol - 1))
ell_new = ell * exp(m - m_new) + sp.Sum(exp(y[l_] - m_new), (l_, 0, n_new.symbol - 1))  # (68)

online_softmax_merge = Theorem(
    name="online_softmax_merge",
    source=Source(TUTORIAL, "§10.1.1 Proposition (Online Softmax)", "(67)–(68)"),
    claim=Equals(
        ell_new,
        sp.Sum(exp(x[k] - m_new), (k, 0, n_old.symbol - 1))
        + sp.Sum(exp(y[l_] - m_new), (l_, 0, n_new.symbol - 1)),
    ),
    inputs=(x, y),
    note="After the update, ℓ′ is the sum of exponentials of all elements relative to m′.",
)

m1, m2, m3 = (Scalar(f"m_{t}", Real(-30, 30)) for t in (1, 2, 3))
l1, l2, l3 = (Scalar(f"ell_{t}", Positive(1e-3, 1e3), latex=rf"\ell_{t}") for t in (1, 2, 3))


def merge(left: tuple[sp.Expr, sp.Expr], right: tuple[sp.Expr, sp.Expr]
          ) -> tuple[sp.Expr, sp.Expr]:
    """Combine two (m, ℓ) summaries of disjoint blocks, as (67)–(68) does."""
    (ma, la), (mb, lb) = left, right
    top = sp.Max(ma, mb)
    return top, la * exp(ma - top) + lb * exp(mb - top)


summaries = [(m1.symbol, l1.symbol), (m2.symbol, l2.symbol), (m3.symbol, l3.symbol)]
left_first = merge(merge(summaries[0], summaries[1]), summaries[2])
right_first = merge(summaries[0], merge(summaries[1], summaries[2]))

online_softmax_merge_associative = Theorem(
    name="online_softmax_merge_associative",
    source=Source(TUTORIAL, "§10.1.1 Proposition (Online Softmax)", "(67)–(68)"),
    claim=Equals(left_first[1], right_first[1]),
    inputs=(m1, m2, m3, l1, l2, l3),
    note="The ℓ component; the m component is max, associative by construction. "
    "So blocks may be merged in any grouping.",
)

# -- §10.1.2: the block-wise algorithm equals softmax(QKᵀ/√d)V ----------------------------------

i = n_q.index("i")
j = n_k.index("j")
a = d_k.index("a")
b = d_v.index("b")
Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
V = Tensor("V", (n_k, d_v))
block = Scalar("B", Integer(1, 8))
S = Defined("S", (i, j), sp.Sum(Q[i, a] * K[j, a], (a, 0, d_k.symbol - 1)) / sp.sqrt(d_k.symbol))
attention = sp.Sum(softmax(S[i, j], j) * V[j, b], (j, 0, n_k.symbol - 1))


def blockwise_attention(xp: ArrayModule, Q: Array, K: Array, V: Array, B: int, **_: Array
                        ) -> Array:
    """§10.1.2 as written: running O, ℓ, m over key blocks of size B, then O / ℓ."""
    n_keys = K.shape[-2]
    scores_all = xp.einsum("...ia,...ja->...ij", Q, K) / xp.sqrt(xp.asarray(Q.shape[-1], Q.dtype))
    O = xp.zeros(Q.shape[:-1] + (V.shape[-1],), Q.dtype)
    ell = xp.zeros(Q.shape[:-1], Q.dtype)
    m = xp.full(Q.shape[:-1], -xp.inf, Q.dtype)
    for start in range(0, n_keys, B):
        scores = scores_all[..., start:start + B]
        m_new = xp.maximum(m, xp.max(scores, axis=-1))
        rescale = xp.exp(m - m_new)
        weights = xp.exp(scores - m_new[..., None])
        values = V[..., start:start + B, :]
        O = O * rescale[..., None] + xp.einsum("...ij,...jb->...ib", weights, values)
        ell = ell * rescale + xp.sum(weights, axis=-1)
        m = m_new
    return O / ell[..., None]


# The loop invariant after the keys [0, p):
#   O = Σ_{j<p} exp(S_ij − m) V_jb,  ℓ = Σ_{j<p} exp(S_ij − m).
p = Scalar("p", Integer(0, 8))
m_old, m_next = Scalar("m", Real(-30, 30)), Scalar("m'", Real(-30, 30))
P, Bs = p.symbol, block.symbol


def _prefix_sum(summand: sp.Expr | int, upper: sp.Expr | int, reference: sp.Expr) -> sp.Expr:
    return sp.Sum(exp(S[i, j] - reference) * summand, (j, 0, upper - 1))


def _block_sum(summand: sp.Expr | int, reference: sp.Expr) -> sp.Expr:
    return sp.Sum(exp(S[i, j] - reference) * summand, (j, P, P + Bs - 1))


invariant_lemmas = (
    # initialisation: with no key seen, O = 0 and ℓ = 0 are the empty sums, for any m
    Equals(_prefix_sum(V[j, b], 0, m_old.symbol), 0),
    Equals(_prefix_sum(1, 0, m_old.symbol), 0),
    # one block [p, p + B): rescale, accumulate, and the invariant holds at p + B with m′
    Equals(
        _prefix_sum(V[j, b], P, m_old.symbol) * exp(m_old.symbol - m_next.symbol)
        + _block_sum(V[j, b], m_next.symbol),
        _prefix_sum(V[j, b], P + Bs, m_next.symbol),
    ),
    Equals(
        _prefix_sum(1, P, m_old.symbol) * exp(m_old.symbol - m_next.symbol)
        + _block_sum(1, m_next.symbol),
        _prefix_sum(1, P + Bs, m_next.symbol),
    ),
    # finish: after all n_k keys, O / ℓ is softmax(S) V
    Equals(
        _prefix_sum(V[j, b], n_k.symbol, m_old.symbol) / _prefix_sum(1, n_k.symbol, m_old.symbol),
        attention,
    ),
)

online_softmax_blockwise = Theorem(
    name="online_softmax_blockwise",
    source=Source(TUTORIAL, "§10.1.2 Theorem (Flash Attention Algorithm)", "steps 1–3"),
    claim=Equals(sp.Function("FlashAttention_B")(i, b), attention),
    inputs=(Q, K, V, block, p, m_old, m_next),
    definitions=(S,),
    lemmas=invariant_lemmas,
    implementation=blockwise_attention,
    note="Proved by induction over blocks: initialisation, one block step, and the final "
    "division, each an identity for every size, block size and reference point m. Checked "
    "numerically by running the algorithm on block sizes that need not divide n_k.",
)
