"""The softmax Jacobian and the gradient through softmax (tutorial §6.3, §4.1)."""

from __future__ import annotations

import sympy as sp

from attnproof import Defined, Equals, Positive, Scalar, Source, Tensor, Theorem, softmax

from ._dims import TUTORIAL, n_k, n_q

i, m = n_q.indices("i m")
j, n = n_k.indices("j n")
delta = sp.KroneckerDelta

S = Tensor("S", (n_q, n_k))
G = Tensor("G", (n_q, n_k))  # upstream gradient ∂L/∂A
T = Scalar("T", Positive(1e-3, 1e3), latex="T")
A = Defined("A", (i, j), softmax(S[i, j], j))
A_T = Defined("A", (i, j), softmax(S[i, j], j, 1 / T.symbol))

softmax_jacobian = Theorem(
    name="softmax_jacobian",
    source=Source(TUTORIAL, "§6.3 Lemma (Softmax Jacobian)", "(39)–(41)"),
    claim=Equals(
        sp.Derivative(A[i, j], S[m, n]),
        delta(i, m) * A[i, j] * (delta(j, n) - A[i, n]),
    ),
    inputs=(S,),
    definitions=(A,),
)

softmax_jacobian_temperature = Theorem(
    name="softmax_jacobian_temperature",
    source=Source(TUTORIAL, "§6.3 with the temperature of §4.1", "(16), (39)"),
    claim=Equals(
        sp.Derivative(A_T[i, j], S[m, n]),
        delta(i, m) * A_T[i, j] * (delta(j, n) - A_T[i, n]) / T.symbol,
    ),
    inputs=(S, T),
    definitions=(A_T,),
    note="At temperature T the Jacobian (39) gains the factor β = 1/T; (39) is the case T = 1.",
)

softmax_jacobian_rows_sum_to_zero = Theorem(
    name="softmax_jacobian_rows_sum_to_zero",
    source=Source(TUTORIAL, "§11.3 Example 3", "(80), note"),
    claim=Equals(sp.Sum(sp.Derivative(A_T[i, j], S[i, n]), (n, 0, n_k.symbol - 1)), 0),
    inputs=(S, T),
    definitions=(A_T,),
    note="Stated for the 2×2 example; checked for every size and temperature.",
)

softmax_gradient = Theorem(
    name="softmax_gradient",
    source=Source(TUTORIAL, "§6.3 Theorem (Softmax Gradient)", "(42)–(43)"),
    claim=Equals(
        sp.Derivative(sp.Sum(G[i, j] * A[i, j], (i, 0, n_q.symbol - 1), (j, 0, n_k.symbol - 1)),
                      S[m, n]),
        A[m, n] * (G[m, n] - sp.Sum(A[m, j] * G[m, j], (j, 0, n_k.symbol - 1))),
    ),
    inputs=(S, G),
    definitions=(A,),
    note="L = Σ G∘A with G = ∂L/∂A free, so ∂L/∂S is the vector–Jacobian product of (39).",
)

softmax_gradient_rows_sum_to_zero = Theorem(
    name="softmax_gradient_rows_sum_to_zero",
    source=Source(TUTORIAL, "§6.3 Theorem (Softmax Gradient), intuition", "(42)–(43)"),
    claim=Equals(
        sp.Sum(A[m, n] * (G[m, n] - sp.Sum(A[m, j] * G[m, j], (j, 0, n_k.symbol - 1))),
               (n, 0, n_k.symbol - 1)),
        0,
    ),
    inputs=(S, G),
    definitions=(A,),
    note="'The subtraction of the weighted sum … ensures the gradient respects the constraint "
    "that attention weights sum to 1': each row of ∂L/∂S sums to 0, so a gradient step leaves "
    "Σ_j A_ij = 1 to first order.",
)

softmax_jacobian_symmetric = Theorem(
    name="softmax_jacobian_symmetric",
    source=Source(TUTORIAL, "§11.3 Example 3", "(79)–(80), off-diagonal −a₁a₂ = −a₂a₁"),
    claim=Equals(sp.Derivative(A_T[i, j], S[i, n]), sp.Derivative(A_T[i, n], S[i, j])),
    inputs=(S, T),
    definitions=(A_T,),
    note="J = diag(a) − aaᵀ is symmetric, as (80)'s off-diagonal entries show for s = [1, 2]; "
    "checked for every size and temperature.",
)
