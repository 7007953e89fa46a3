"""Kernel and linear attention (tutorial §10.2).

(70) is an identity for any feature map: the sums over keys can be taken before the query, which
is what makes linear attention linear in n. The feature values φ(q_i), φ(k_j) are inputs drawn
positive, as ELU + 1 and positive random features are. With the exponential kernel, kernel
attention is softmax attention. The cost statements (O(nd²), O(d²) per query) and "linear
attention is an approximation" need cost and approximation claims (listed in docs/coverage.md).
"""

from __future__ import annotations

import sympy as sp

from attnproof import Dim, Equals, Positive, Sizes, Source, Tensor, Theorem, softmax

from ._dims import TUTORIAL, d_k, d_v, n_k, n_q

d_f = Dim("d_phi", Sizes(1, 6), latex=r"d_\varphi")  # dimension of the feature map φ
i = n_q.index("i")
j, k = n_k.indices("j k")
f, h = d_f.indices("f h")
a = d_k.index("a")
b = d_v.index("b")


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


phi_q = Tensor("phi_q", (n_q, d_f), Positive(1e-2, 1e1))  # φ(q_i)
phi_k = Tensor("phi_k", (n_k, d_f), Positive(1e-2, 1e1))  # φ(k_j)
V = Tensor("V", (n_k, d_v))


def kernel(key: sp.Idx) -> sp.Expr:
    """φ(q_i)ᵀφ(k_key) of (69)."""
    return total(phi_q[i, f] * phi_k[key, f], f)


keys_first = (total(phi_q[i, f] * total(phi_k[j, f] * V[j, b], j), f)
              / total(phi_q[i, h] * total(phi_k[k, h], k), h))

linear_attention_reassociation = Theorem(
    name="linear_attention_reassociation",
    source=Source(TUTORIAL, "§10.2 Definition (Kernel Attention)", "(70)"),
    claim=Equals(total(kernel(j) * V[j, b], j) / total(kernel(k), k), keys_first),
    inputs=(phi_q, phi_k, V),
    note="Σ_j φ(q_i)ᵀφ(k_j) v_j / Σ_j φ(q_i)ᵀφ(k_j) = φ(q_i)ᵀ(Σ_j φ(k_j) v_jᵀ) / "
    "φ(q_i)ᵀ(Σ_j φ(k_j)): the key sums do not depend on i and can be computed once.",
)

Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
score = total(Q[i, a] * K[j, a], a) / sp.sqrt(d_k.symbol)

kernel_attention_with_exponential_kernel_is_softmax = Theorem(
    name="kernel_attention_with_exponential_kernel_is_softmax",
    source=Source(TUTORIAL, "§10.2 Definition (Kernel Attention)",
                  "(69)–(70) with the exponential kernel it approximates"),
    claim=Equals(
        total(sp.exp(score) * V[j, b], j) / total(sp.exp(score.xreplace({j: k})), k),
        total(softmax(score, j) * V[j, b], j),
    ),
    inputs=(Q, K, V),
    note="The left side of (70) with K(q, k) = exp(q·k/√d_k), the kernel linear attention "
    "approximates, is softmax attention (14).",
)
