"""Natural gradient descent and reparameterization (tutorial §5.3, (30)–(31)).

The Proposition: natural gradient descent "gives the same update in parameter space regardless
of how we parameterize the model. Standard gradient descent does not have this property." With
a finite step η the two parameterizations' updates agree to first order in η (the second-order
terms differ unless the reparameterization is linear), so the claim is stated as a series.

The model is attention over two keys: the weight on the first key is π = σ(θ), a softmax over
the scores (θ, 0), so one key is drawn with probability π. It is parameterized either by the
score difference θ or by the weight π itself, and trained on the cross-entropy to a target
weight y. The Fisher information is (30) written out for each parameterization, the expectation
over the two keys of (∂ log p / ∂parameter)², and the step is (31). The update made in θ,
mapped to the weight, is compared with the update made in π directly.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from attnproof import Positive, Real, Scalar, Series, Source, Theorem

from ._dims import TUTORIAL

theta = Scalar("theta", Real(-3, 3))  # the score difference between the two keys
y = Scalar("y", Real(0, 1))  # the target weight on the first key
eta = Scalar("eta", Positive(1e-3, 1))  # the step size
weight = sp.Symbol("pi", positive=True)  # the second parameterization: the weight itself

SECTION = "§5.3 Proposition (Reparameterization Invariance)"


def first_key_weight(score_difference: sp.Expr) -> sp.Expr:
    """softmax over the scores (θ, 0), entry 0: σ(θ)."""
    return 1 / (1 + sp.exp(-score_difference))


def fisher_information(probability: sp.Expr, parameter: sp.Symbol) -> sp.Expr:
    """(30): the expectation over the two keys of (∂ log p(key) / ∂parameter)²."""
    return (probability * sp.diff(sp.log(probability), parameter) ** 2
            + (1 - probability) * sp.diff(sp.log(1 - probability), parameter) ** 2)


def loss(probability: sp.Expr) -> sp.Expr:
    """Cross-entropy of the weights (π, 1 − π) to the target (y, 1 − y)."""
    return -y.symbol * sp.log(probability) - (1 - y.symbol) * sp.log(1 - probability)


def natural_gradient_step(probability: sp.Expr, parameter: sp.Symbol) -> sp.Expr:
    """(31) for one parameter: Δθ = −η F⁻¹ ∂L/∂θ."""
    gradient = sp.diff(loss(probability), parameter)
    return sp.simplify(-eta.symbol * gradient / fisher_information(probability, parameter))


def gradient_step(probability: sp.Expr, parameter: sp.Symbol) -> sp.Expr:
    """Standard gradient descent: Δθ = −η ∂L/∂θ."""
    return sp.simplify(-eta.symbol * sp.diff(loss(probability), parameter))


def updates_in_weight(step: Callable[[sp.Expr, sp.Symbol], sp.Expr]) -> tuple[sp.Expr, sp.Expr]:
    """The new weight after one step made in θ, and after one step made in π (at π = σ(θ))."""
    start = first_key_weight(theta.symbol)
    through_score = first_key_weight(theta.symbol + step(start, theta.symbol))
    directly = (weight + step(weight, weight)).subs(weight, start)
    return through_score, directly


natural_gradient_reparameterization_invariant = Theorem(
    name="natural_gradient_reparameterization_invariant",
    source=Source(TUTORIAL, SECTION, "(31)"),
    claim=Series(*updates_in_weight(natural_gradient_step), eta.symbol, order=1),
    inputs=(theta, y, eta),
    note="Attention over two keys parameterized by the score difference θ or by the weight "
    "π = σ(θ): one natural gradient step gives the same new weight to first order in η. Only "
    "to first order: the η² terms differ (planted_natural_gradient_invariant_to_second_order "
    "is refuted).",
)

gradient_descent_reparameterization_invariant = Theorem(
    name="gradient_descent_reparameterization_invariant",
    source=Source(TUTORIAL, SECTION, "'Standard gradient descent does not have this property'"),
    claim=Series(*updates_in_weight(gradient_step), eta.symbol, order=1),
    inputs=(theta, y, eta),
    expect="refuted",
    denied=True,
    note="The property the Proposition denies to standard gradient descent, stated so that its "
    "refutation confirms the Proposition: in θ the weight moves by −η σ'(θ)² ∂L/∂π, in π by "
    "−η ∂L/∂π, already different at first order.",
)
