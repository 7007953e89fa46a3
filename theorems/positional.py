"""Rotary positions (RoPE): the identities that make a rotated query-key score relative.

The README lists "Positional Encodings: RoPE, ALiBi, relative encodings" among its topics and
cites Su et al. (2021), RoFormer, as reference 4, but none of the four documents writes these
identities down: they are the cited paper's, and their source says "Outside the documents".

Each query and key is split into P rotary pairs; pair p at position m is turned by the angle
m·θ_p (R_m below). A pair's two coordinates are a dimension of the single size 2.

The sinusoidal encoding PE(x)_p = (sin x ω_p, cos x ω_p) has the property it was chosen for
(Vaswani et al. 2017, likewise outside the documents): for every offset k some matrix M, the
same at every position, maps PE(pos) to PE(pos + k); M is the rotation by −k ω_p on each pair.
Doubling the position is no such map, and no M exists for it.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Equals,
    Exists,
    Real,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
    rotate_half,
    rotation,
)

from ._dims import OUTSIDE

positions = Dim("N", Sizes(1, 8))
pairs = Dim("P", Sizes(1, 4))
plane = Dim("two", Sizes(2, 2))  # the two coordinates of one rotary pair
m, n = positions.indices("m n")
p = pairs.index("p")
a, b, c = plane.indices("a b c")

Q = Tensor("Q", (positions, pairs, plane))
K = Tensor("K", (positions, pairs, plane))
theta = Tensor("theta", (pairs,), Real(-3, 3))  # θ_p, one frequency per pair

ROPE = Source(OUTSIDE, "RoPE, Su et al. (2021), RoFormer (the README's reference 4 and "
              "'Positional Encodings' topic; none of the documents states it)")


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


# (R_m q)_p: pair p of the query at position m, turned by m·θ_p
Q_rotated = Defined("Qr", (m, p, c), total(rotation(m * theta[p], c, a) * Q[m, p, a], a),
                    latex=r"(R_m q)")
K_rotated = Defined("Kr", (n, p, c), total(rotation(n * theta[p], c, b) * K[n, p, b], b),
                    latex=r"(R_n k)")

rope_score_depends_on_relative_position = Theorem(
    name="rope_score_depends_on_relative_position",
    source=ROPE,
    claim=Equals(total(Q_rotated[m, p, c] * K_rotated[n, p, c], p, c),
                 total(Q[m, p, a] * rotation((n - m) * theta[p], a, b) * K[n, p, b], p, a, b)),
    inputs=(Q, K, theta),
    definitions=(Q_rotated, K_rotated),
    note="(R_m q)ᵀ(R_n k) = qᵀ R_{n−m} k: the rotated score sees the positions only through "
    "n − m. Proved by angle addition in the sum normal form.",
)

rope_rotate_half_form = Theorem(
    name="rope_rotate_half_form",
    source=ROPE,
    claim=Equals(Q[m, p, c] * sp.cos(m * theta[p]) + rotate_half(Q[m, p, c], c)
                 * sp.sin(m * theta[p]),
                 Q_rotated[m, p, c]),
    inputs=(Q, theta),
    definitions=(Q_rotated,),
    note="q ⊙ cos(mθ) + rotate_half(q) ⊙ sin(mθ) = R_m q, the elementwise spelling of the "
    "rotation that implementations use (rotate_half maps a pair (x₀, x₁) to (−x₁, x₀)).",
)


# -- sinusoidal positions: PE(pos + k) is a linear function of PE(pos) --------------------------

pos, shift = Scalar("pos", Real(-8, 8)), Scalar("k", Real(-8, 8))
omega = Tensor("omega", (pairs,), Real(-1, 1))  # ω_p, one frequency per pair
M = Tensor("M", (pairs, plane, plane))


def sinusoidal(x: sp.Expr, at_pair: sp.Idx, coordinate: sp.Idx) -> sp.Expr:
    """PE(x) at pair p: sin(x ω_p) for coordinate 0, cos(x ω_p) = sin(x ω_p + π/2) for 1."""
    return sp.sin(x * omega[at_pair] + coordinate * sp.pi / 2)


sinusoidal_shift_is_linear = Theorem(
    name="sinusoidal_shift_is_linear",
    source=Source(OUTSIDE, "sinusoidal positions, Vaswani et al. (2017), 'Attention Is All You "
                  "Need' §3.5 (none of the documents states it)"),
    claim=Exists(M, Equals(sinusoidal(pos.symbol + shift.symbol, p, c),
                           total(M[p, c, b] * sinusoidal(pos.symbol, p, b), b)),
                 for_all=(pos,),
                 witness=Defined("M", (p, c, b), rotation(-shift.symbol * omega[p], c, b))),
    inputs=(pos, shift, omega, plane),
    note="PE(pos + k) = M PE(pos) with M, the rotation by −k ω_p on each pair, the same at "
    "every position: attention can attend by relative offset through a linear map.",
)
