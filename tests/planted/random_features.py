"""Planted random-feature expectations with fixed inputs: features without the −|x|²/2
correction, and the softmax-scaled kernel exp(qᵀk/√d) claimed of unscaled features, must be
refuted; the Gaussian moment generating function E exp(ωᵀx) = exp(|x|²/2) must not be, and the
same claim for any law with mean 0 and variance 1 must not be proved. Test fixtures, never in
the catalog."""

import sympy as sp

from attnproof import Expectation, Gaussian, Moments, Source, Theorem
from attnproof.theorems import random_features as rf

PLANTED = Source("tests/planted/random_features.py", "planted random features")
r, a, omega, q, k, m = rf.r, rf.a, rf.omega, rf.q, rf.k, rf.features.symbol


def total(expr, index):
    return sp.Sum(expr, (index, 0, index.upper))


def uncorrected(x):
    return sp.exp(total(omega[r, a] * x[a], a)) / sp.sqrt(m)


planted_random_features_without_the_norm_correction = Theorem(
    name="planted_random_features_without_the_norm_correction",
    source=PLANTED,
    claim=Expectation(total(uncorrected(q) * uncorrected(k), r), sp.exp(total(q[a] * k[a], a)),
                      law=Gaussian(0, 1), random=(omega,)),
    inputs=(omega, q, k),
    expect="refuted",
)

planted_random_features_estimate_the_scaled_kernel = Theorem(
    name="planted_random_features_estimate_the_scaled_kernel",
    source=PLANTED,
    claim=Expectation(rf.random_features_estimate_the_exponential_kernel.claim.statistic,
                      sp.exp(total(q[a] * k[a], a) / sp.sqrt(rf.width.symbol)),
                      law=Gaussian(0, 1), random=(omega,)),
    inputs=(omega, q, k),
    expect="refuted",
)

gaussian_generating_function = (total(sp.exp(total(omega[r, a] * q[a], a)), r) / m,
                                sp.exp(total(q[a] ** 2, a) / 2))

planted_gaussian_generating_function = Theorem(
    name="planted_gaussian_generating_function",
    source=PLANTED,
    claim=Expectation(*gaussian_generating_function, law=Gaussian(0, 1), random=(omega,)),
    inputs=(omega, q),
)

planted_generating_function_for_any_law = Theorem(
    name="planted_generating_function_for_any_law",
    source=PLANTED,
    claim=Expectation(*gaussian_generating_function, law=Moments(0, 1), random=(omega,)),
    inputs=(omega, q),
)
