"""Random features for the exponential kernel (tutorial §10.2, (69)).

(69) says φ(q)ᵀφ(k) approximates the kernel K(q, k); linear attention approximates the
exponential one. With positive random features (the Performer's), φ(x)_r =
exp(ω_rᵀx − |x|²/2)/√m for m Gaussian vectors ω_r, the approximation is exact in expectation:
E_ω[φ(q)ᵀφ(k)] = exp(qᵀk) for every fixed q, k. Proved by the Gaussian moment generating
function, E exp(ωᵀu) = exp(|u|²/2), with u = q + k. The unscaled kernel exp(qᵀk) is the one
these features estimate; softmax attention's exp(qᵀk/√d_k) is the same kernel of q/d_k^¼ and
k/d_k^¼.
"""

from __future__ import annotations

import sympy as sp

from attnproof import Dim, Expectation, Gaussian, Real, Sizes, Source, Tensor, Theorem

from ._dims import TUTORIAL

features = Dim("m", Sizes(1, 4))  # the number of random features
width = Dim("d", Sizes(1, 3))
r = features.index("r")
a = width.index("a")
omega = Tensor("omega", (features, width))  # ω_r, i.i.d. standard Gaussian entries
q = Tensor("q", (width,), Real(-0.5, 0.5))
k = Tensor("k", (width,), Real(-0.5, 0.5))


def positive_feature(x: Tensor) -> sp.Expr:
    """φ(x)_r = exp(ω_rᵀx − |x|²/2)/√m."""
    return (sp.exp(sp.Sum(omega[r, a] * x[a], (a, 0, a.upper))
                   - sp.Sum(x[a] ** 2, (a, 0, a.upper)) / 2) / sp.sqrt(features.symbol))


random_features_estimate_the_exponential_kernel = Theorem(
    name="random_features_estimate_the_exponential_kernel",
    source=Source(TUTORIAL, "§10.2 Definition (Kernel Attention)",
                  "(69) with positive random features, in expectation"),
    claim=Expectation(sp.Sum(positive_feature(q) * positive_feature(k), (r, 0, r.upper)),
                      sp.exp(sp.Sum(q[a] * k[a], (a, 0, a.upper))),
                      law=Gaussian(0, 1), random=(omega,)),
    inputs=(omega, q, k),
    note="E_ω[φ(q)ᵀφ(k)] = exp(qᵀk) for fixed q, k: positive random features estimate the "
    "exponential kernel without bias, for any number m of features.",
)
