"""Trigonometric identities in the sum normal form, and dimensions of one declared size: what
the provers may prove (angle addition, cos² + sin² = 1, a rotary pair written out) and what they
must leave unproved."""

import sympy as sp

from attnproof.symbolic import (
    Dim,
    Equals,
    Real,
    Sizes,
    Source,
    Tensor,
    Theorem,
    prove,
    rotate_half,
    rotation,
)
from attnproof.symbolic._normal_form import residual, written_out
from attnproof.symbolic._prover import small_sizes

a, b, x = sp.symbols("a b x", real=True)
HERE = Source("tests/symbolic/test_trigonometry.py", "trigonometry")


def test_angle_addition_and_the_unit_circle_are_zero():
    assert residual(sp.cos(a - b) - sp.cos(a) * sp.cos(b) - sp.sin(a) * sp.sin(b)) == 0
    assert residual(sp.sin(a + b) - sp.sin(a) * sp.cos(b) - sp.cos(a) * sp.sin(b)) == 0
    assert residual(sp.cos(x) ** 2 + sp.sin(x) ** 2 - 1) == 0
    assert residual(sp.cos(3 * x) - 4 * sp.cos(x) ** 3 + 3 * sp.cos(x)) == 0


def test_false_trigonometric_identities_leave_a_residual():
    assert residual(sp.cos(a - b) - sp.cos(a) * sp.cos(b)) != 0
    assert residual(sp.sin(2 * x) - 2 * sp.sin(x)) != 0
    assert residual(sp.cos(x) ** 2 - sp.sin(x) ** 2 - 1) != 0


def test_a_sum_over_a_concrete_range_is_written_out():
    k = sp.Symbol("k", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    assert written_out(sp.Sum(sp.cos(k * x), (k, 0, 2))) == 1 + sp.cos(x) + sp.cos(2 * x)
    assert written_out(sp.Sum(k, (k, 0, n))) == sp.Sum(k, (k, 0, n))


def test_rotation_entries_are_the_plane_rotation():
    assert [[rotation(x, r, c) for c in (0, 1)] for r in (0, 1)] == [
        [sp.cos(x), -sp.sin(x)], [sp.sin(x), sp.cos(x)]]


two = Dim("two", Sizes(2, 2))
pairs = Dim("P", Sizes(1, 3))
c, e = two.indices("c e")
p = pairs.index("p")
q = Tensor("q", (pairs, two))
t = Tensor("t", (pairs,), Real(-3, 3))


def test_a_dimension_of_one_size_is_proved_at_that_size_and_searched_nowhere_else():
    rotated = sp.Sum(rotation(t[p], c, e) * q[p, e], (e, 0, two.symbol - 1))
    claim = Equals(q[p, c] * sp.cos(t[p]) + rotate_half(q[p, c], c) * sp.sin(t[p]), rotated)
    theorem = Theorem(name="rotate_half_form", source=HERE, claim=claim, inputs=(q, t))
    assert prove(theorem).status == "proved"
    assert small_sizes(theorem, 1) == {"P": 1, "two": 2}


def test_a_wrong_rotation_direction_is_refuted_at_the_declared_size():
    rotated = sp.Sum(rotation(-t[p], c, e) * q[p, e], (e, 0, two.symbol - 1))
    claim = Equals(q[p, c] * sp.cos(t[p]) + rotate_half(q[p, c], c) * sp.sin(t[p]), rotated)
    theorem = Theorem(name="rotate_half_reversed", source=HERE, claim=claim, inputs=(q, t),
                      expect="refuted")
    result = prove(theorem)
    assert result.status == "refuted"
    assert result.counterexample["sizes"]["two"] == 2
