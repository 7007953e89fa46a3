"""Free energy, the Gibbs weights and the variational principle (tutorial §4.3–§4.4)."""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Defined,
    Equals,
    Gibbs,
    GreaterOrEqual,
    Positive,
    Real,
    Scalar,
    Simplex,
    Source,
    Tensor,
    Theorem,
    entropy,
    expectation,
    kl,
    lse,
    softmax,
)

from ._dims import TUTORIAL, n_k, n_q

i = n_q.index("i")
j = n_k.index("j")

S = Tensor("S", (n_q, n_k))
p = Tensor("p", (n_q, n_k), Simplex())
a = Tensor("a", (n_k,), Positive(1e-3, 1.0))
s = Tensor("s", (n_k,))
T = Scalar("T", Positive(1e-3, 1e3))
lam = Scalar("lambda", Real(-5, 5), latex=r"\lambda")
t = T.symbol

A = Defined("A", (i, j), softmax(S[i, j], j, 1 / t))
F = Defined("F", (i,), -t * lse(S[i, j] / t, j))  # (21), F = −T log Z


def gibbs_functional(q: sp.Expr) -> sp.Expr:
    """⟨E⟩ − T·H(q) with energies E = −S (§4.1: scores are negative energies)."""
    return expectation(q, -S[i, j], j) - t * entropy(q, j)


free_energy_identity = Theorem(
    name="free_energy_identity",
    source=Source(TUTORIAL, "§4.4 Definition (Free Energy)", "(21)–(22)"),
    claim=Equals(F[i], gibbs_functional(A[i, j])),
    inputs=(S, T),
    definitions=(A, F),
)

free_energy_gap_is_kl = Theorem(
    name="free_energy_gap_is_kl",
    source=Source(TUTORIAL, "§4.4 Theorem (Variational Principle)", "(23)"),
    claim=Equals(gibbs_functional(p[i, j]) - F[i], t * kl(p[i, j], A[i, j], j)),
    inputs=(S, p, T),
    definitions=(A, F),
    note="The form of (23) that can be proved for all sizes: G(p) − F = T·KL(p‖A) ≥ 0.",
)

free_energy_variational_principle = Theorem(
    name="free_energy_variational_principle",
    source=Source(TUTORIAL, "§4.4 Theorem (Variational Principle)", "(23)"),
    claim=GreaterOrEqual(gibbs_functional(p[i, j]), F[i], by=(Gibbs(p[i, j], A[i, j], j),)),
    inputs=(S, p, T),
    definitions=(A, F),
    note="Every distribution p has ⟨E⟩ − T·H(p) ≥ F, with equality at p = A "
    "(free_energy_identity): the gap is T·KL(p‖A), nonnegative by Gibbs' inequality.",
)

lagrangian = (
    -sp.Sum(a[j] * s[j], (j, 0, n_k.symbol - 1))
    + t * sp.Sum(a[j] * sp.log(a[j]), (j, 0, n_k.symbol - 1))
    + lam.symbol * (sp.Sum(a[j], (j, 0, n_k.symbol - 1)) - 1)
)
k = n_k.index("k")

free_energy_lagrangian_derivative = Theorem(
    name="free_energy_lagrangian_derivative",
    source=Source(TUTORIAL, "§4.4 proof of the Variational Principle", "(24)–(25)"),
    claim=Equals(
        sp.Derivative(lagrangian, a[k]),
        -s[k] + t * (1 + sp.log(a[k])) + lam.symbol,
    ),
    inputs=(a, s, T, lam),
)

gibbs = Defined("A", (k,), softmax(s[k], k, 1 / t))
free_energy_stationary_point = Theorem(
    name="free_energy_stationary_point",
    source=Source(TUTORIAL, "§4.4 proof of the Variational Principle", "(25)–(26)"),
    claim=Equals(
        -s[k] + t * (1 + sp.log(gibbs[k])) + (t * lse(s[j] / t, j) - t),
        0,
    ),
    inputs=(s, T),
    definitions=(gibbs,),
    note="The Gibbs weights solve (25) with multiplier λ = T log Z − T, as (26) says.",
)
