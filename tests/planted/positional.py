"""Planted rotary positions: the relative-position identity with the rotation turned the wrong
way, and rotate_half with the sine's sign lost, must be refuted; the length a rotation keeps (it
needs cos² + sin² = 1) and two rotations composing into one beside them must not be.
Test fixtures, never in the catalog."""

import sympy as sp

from attnproof import Defined, Equals, Source, Theorem, rotate_half, rotation
from attnproof.theorems import positional as rope

PLANTED = Source("tests/planted/positional.py", "planted rotary positions")
m, n, p, a, b, c = rope.m, rope.n, rope.p, rope.a, rope.b, rope.c
Q, K, theta, total = rope.Q, rope.K, rope.theta, rope.total

planted_rope_score_with_rotation_reversed = Theorem(
    name="planted_rope_score_with_rotation_reversed",
    source=PLANTED,
    claim=Equals(rope.rope_score_depends_on_relative_position.claim.lhs,
                 total(Q[m, p, a] * rotation((m - n) * theta[p], a, b) * K[n, p, b], p, a, b)),
    inputs=(Q, K, theta),
    definitions=(rope.Q_rotated, rope.K_rotated),
    expect="refuted",
)

planted_rope_rotate_half_with_sine_sign_lost = Theorem(
    name="planted_rope_rotate_half_with_sine_sign_lost",
    source=PLANTED,
    claim=Equals(Q[m, p, c] * sp.cos(m * theta[p])
                 - rotate_half(Q[m, p, c], c) * sp.sin(m * theta[p]),
                 rope.Q_rotated[m, p, c]),
    inputs=(Q, theta),
    definitions=(rope.Q_rotated,),
    expect="refuted",
)

planted_rotation_keeps_length = Theorem(
    name="planted_rotation_keeps_length",
    source=PLANTED,
    claim=Equals(total(rope.Q_rotated[m, p, c] ** 2, c), total(Q[m, p, c] ** 2, c)),
    inputs=(Q, theta),
    definitions=(rope.Q_rotated,),
)

Q_turned_twice = Defined(
    "Qrr", (m, p, c), total(rotation(2 * theta[p], c, b) * rope.Q_rotated[m, p, b], b))

planted_rotations_compose = Theorem(
    name="planted_rotations_compose",
    source=PLANTED,
    claim=Equals(Q_turned_twice[m, p, c],
                 total(rotation((m + 2) * theta[p], c, a) * Q[m, p, a], a)),
    inputs=(Q, theta),
    definitions=(rope.Q_rotated, Q_turned_twice),
)
