"""The Riemannian view (tutorial §5.1–§5.2; worked example 48 on cosine similarity).

(27)'s Christoffel symbols are built from derivatives ∂_a g_bd of the metric along the feature
coordinates x. The attention metric g = δ/√d_k does not depend on x, so Γ = 0 and the covariant
derivatives (28)–(29) are ordinary derivatives, as §5.2 says. A learned metric M = WᵀW (§8.2) is
a parameter, also the same at every point x: its Γ vanishes too, so "learned metrics would need
these tools" is not borne out for the learned metrics the tutorial defines (only a metric that
varies with x, which the tutorial never uses, would).
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from attnproof import Defined, Equals, Positive, Scalar, Source, Tensor, Theorem

from ._dims import EXAMPLE_48, TUTORIAL, d_k

a, b, c, d, e = d_k.indices("a b c d e")
delta = sp.KroneckerDelta


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


x = Tensor("x", (d_k,))  # a point of feature space, the coordinates (27) differentiates along
W = Tensor("W", (d_k, d_k))
g_inv = Tensor("ginv", (d_k, d_k))  # g^cd: Γ = 0 whatever the inverse metric is


def christoffel(g: Callable[[sp.Idx, sp.Idx], sp.Expr]) -> sp.Expr:
    """Γ^c_ab of (27) for a metric given as a function of two indices."""
    def d_(p: sp.Idx, q: sp.Idx, r: sp.Idx) -> sp.Expr:
        return sp.Derivative(g(q, r), x[p])
    return sp.Rational(1, 2) * total(
        g_inv[c, d] * (d_(a, b, d) + d_(b, a, d) - d_(d, a, b)), d)


g_attention = Defined("g", (a, b), delta(a, b) / sp.sqrt(d_k.symbol))  # §5.1
M = Defined("M", (a, b), total(W[e, a] * W[e, b], e))  # WᵀW, §8.2

christoffel_symbols_vanish_for_attention_metric = Theorem(
    name="christoffel_symbols_vanish_for_attention_metric",
    source=Source(TUTORIAL, "§5.2 Definition (Christoffel Symbols), remark", "(27)"),
    claim=Equals(christoffel(lambda p, q: g_attention[p, q]), 0),
    inputs=(x, g_inv),
    definitions=(g_attention,),
    note="'For the standard (constant) attention metric, Γ = 0': g_ab = δ_ab/√d_k does not "
    "depend on the point x, so every ∂g in (27) is 0.",
)

christoffel_symbols_vanish_for_learned_metric = Theorem(
    name="christoffel_symbols_vanish_for_learned_metric",
    source=Source(TUTORIAL, "§5.2 remark ('learned metrics would need these tools'), §8.2",
                  "(27), (58)"),
    claim=Equals(christoffel(lambda p, q: M[p, q]), 0),
    inputs=(x, W, g_inv),
    definitions=(M,),
    note="The remark's precise form for the learned metric M = WᵀW of (58): M is one matrix for "
    "all of feature space, so Γ = 0 as for the standard metric; the remark holds only for a "
    "metric that varies with x, which the tutorial does not define.",
)

# The proof covers every u, v and α > 0. The numeric draws stay where float16 can hold ‖αu‖²:
# the ±100 rows drawn for real tensors overflow its sum of squares (65504), which the checker
# reports as a failure rather than as out of range.
u = Tensor("u", (d_k,), Positive(1e-1, 1e1))
v = Tensor("v", (d_k,), Positive(1e-1, 1e1))
alpha = Scalar("alpha", Positive(1e-1, 2.0), latex=r"\alpha")


def cosine(p: Callable[[sp.Idx], sp.Expr], q: Callable[[sp.Idx], sp.Expr]) -> sp.Expr:
    """u·v/(‖u‖‖v‖), the angle of §5.1 with the Euclidean metric."""
    return total(p(a) * q(a), a) / (sp.sqrt(total(p(a) ** 2, a)) * sp.sqrt(total(q(a) ** 2, a)))


cosine_similarity_is_scale_invariant = Theorem(
    name="cosine_similarity_is_scale_invariant",
    source=Source(EXAMPLE_48, "Connection to Linear Algebra Theory",
                  "'cosine similarity normalizes by norms for scale-invariance' (line 132)"),
    claim=Equals(cosine(lambda r: alpha.symbol * u[r], lambda r: v[r]),
                 cosine(lambda r: u[r], lambda r: v[r])),
    inputs=(u, v, alpha),
    note="cos(αu, v) = cos(u, v) for every α > 0 (and u, v ≠ 0, where it is defined).",
)
