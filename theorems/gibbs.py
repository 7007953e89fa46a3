"""Softmax as the Gibbs distribution, temperature and the smooth maximum (tutorial §4.1–§4.2,
§9.2; README "As Statistical Mechanics", "Statistical Mechanics View").

The limits (17)–(18) need a limit claim kind and are listed in docs/coverage.md; (17) as written
is also false when the maximum is tied (the limit is then the average over the tied maxima).
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    AtLeast,
    Defined,
    Equals,
    Positive,
    Scalar,
    Source,
    Tensor,
    Theorem,
    entropy,
    expectation,
    lse,
    rowmax,
    softmax,
)

from ._dims import README, TUTORIAL, d_k, n_k, n_q

i = n_q.index("i")
j, k, s = n_k.indices("j k s")
a = d_k.index("a")

S = Tensor("S", (n_q, n_k))
T = Scalar("T", Positive(1e-3, 1e3))
beta = Scalar("beta", Positive(1e-2, 1e2), latex=r"\beta")
t, B = T.symbol, beta.symbol


def row_sum(expr: sp.Expr, index: sp.Idx) -> sp.Expr:
    return sp.Sum(expr, (index, 0, n_k.symbol - 1))


E = Tensor("E", (n_q, n_k))  # energy levels E_j of (15)

gibbs_distribution_is_softmax_at_temperature = Theorem(
    name="gibbs_distribution_is_softmax_at_temperature",
    source=Source(TUTORIAL, "§4.1 Definition (Gibbs Distribution)", "(15)–(16)"),
    claim=Equals(
        sp.exp(-E[i, j] / t) / row_sum(sp.exp(-E[i, k] / t), k),
        softmax(-E[i, j], j, 1 / t),
    ),
    inputs=(E, T),
    note="P(j) = exp(−E_j/T)/Z is the attention weights (16) for the scores S = −E.",
)

softmax_shift_invariance = Theorem(
    name="softmax_shift_invariance",
    source=Source(TUTORIAL, "§4.2 proof of Theorem (Temperature Limits)", "(19)"),
    claim=Equals(
        sp.exp(S[i, j] / t) / row_sum(sp.exp(S[i, k] / t), k),
        sp.exp((S[i, j] - S[i, s]) / t) / row_sum(sp.exp((S[i, k] - S[i, s]) / t), k),
    ),
    inputs=(S, T),
    note="Subtracting the score of any key s (the maximum j* in (19)) leaves the weights "
    "unchanged; worked example 48's 'subtract max(scores_i) before exponentiating' is this "
    "identity with s the row's maximum.",
)

Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
raw = sp.Sum(Q[i, a] * K[j, a], (a, 0, d_k.symbol - 1))  # unscaled scores Q^ia K^ja

effective_temperature_of_scaling = Theorem(
    name="effective_temperature_of_scaling",
    source=Source(TUTORIAL, "§4.2, closing remark on the 1/√d_k scaling", "(10), (16)"),
    claim=Equals(
        softmax(raw / sp.sqrt(d_k.symbol), j),
        softmax(raw, j, 1 / sp.sqrt(d_k.symbol)),
    ),
    inputs=(Q, K),
    note="softmax(QKᵀ/√d_k) is the Gibbs distribution (16) of the unscaled scores QKᵀ at "
    "temperature T = √d_k.",
)

# -- lse is a smooth maximum -------------------------------------------------------------------

z = Tensor("z", (n_q, n_k))
top = rowmax(z[i, j], j)

lse_at_least_max = Theorem(
    name="lse_at_least_max",
    source=Source(TUTORIAL, "§9.2 Definition (Modern Hopfield Energy)",
                  "(62), lse as smooth maximum"),
    claim=AtLeast(lse(z[i, j], j), top),
    inputs=(z,),
    note="The lower half of 'lse is a smooth maximum': max_j z_j ≤ lse(z).",
)

lse_at_most_max_plus_log_n = Theorem(
    name="lse_at_most_max_plus_log_n",
    source=Source(TUTORIAL, "§9.2 Definition (Modern Hopfield Energy)",
                  "(62), lse as smooth maximum"),
    claim=AtLeast(top + sp.log(n_k.symbol), lse(z[i, j], j)),
    inputs=(z,),
    note="The upper half: lse(z) ≤ max_j z_j + log n_k, equality when all z_j are equal.",
)

# -- entropy as a function of the inverse temperature --------------------------------------------

A_beta = Defined("A", (i, j), softmax(S[i, j], j, B))
mean_score = expectation(A_beta[i, k], S[i, k], k)
variance = expectation(A_beta[i, j], (S[i, j] - mean_score) ** 2, j)

# H(softmax(βS)) = log Z − β⟨S⟩, the free energy identity (22) at T = 1/β; written this way the
# derivative needs no log of a weight that underflows to 0 (0·log 0)
entropy_as_log_partition = lse(B * S[i, j], j) - B * mean_score.xreplace({k: j})

entropy_is_log_partition_minus_mean_score = Theorem(
    name="entropy_is_log_partition_minus_mean_score",
    source=Source(TUTORIAL, "§4.4 Definition (Free Energy)", "(21)–(22) at T = 1/β"),
    claim=Equals(entropy(A_beta[i, j], j), entropy_as_log_partition),
    inputs=(S, beta),
    definitions=(A_beta,),
    note="H = log Z − β⟨S⟩: (22) F = ⟨E⟩ − TH with F = −T log Z and E = −S, solved for H.",
)

entropy_derivative_in_inverse_temperature = Theorem(
    name="entropy_derivative_in_inverse_temperature",
    source=Source(README, "Statistical Mechanics View",
                  "entropy of A_sharp (β = 10) below that of A_soft (β = 0.1)"),
    claim=Equals(sp.Derivative(entropy_as_log_partition, B), -B * variance),
    inputs=(S, beta),
    definitions=(A_beta,),
    note="'Lower [entropy] = more focused' for the sharper β: dH/dβ = −β·Var_A(S) ≤ 0, with H "
    "written as log Z − β⟨S⟩ (entropy_is_log_partition_minus_mean_score), so the entropy of "
    "softmax(βS) never increases with β.",
)

gap = Scalar("gap", Positive(1e-2, 1e2), latex=r"\Delta")
A_sharper = Defined("A_sharp", (i, j), softmax(S[i, j], j, B + gap.symbol), latex="A'")

entropy_decreases_with_inverse_temperature = Theorem(
    name="entropy_decreases_with_inverse_temperature",
    source=Source(TUTORIAL, "§11.2 Example 2: Temperature Effects", "closing sentence"),
    claim=AtLeast(entropy(A_beta[i, j], j), entropy(A_sharper[i, j], j)),
    inputs=(S, beta, gap),
    definitions=(A_beta, A_sharper),
    note="'Lower temperature concentrates probability on the maximum score', measured by "
    "entropy: H(softmax(βS)) ≥ H(softmax((β + Δ)S)) for every Δ > 0.",
)

# -- §9.3: "even small differences in scores lead to large differences in weights" ---------------

# drawn at T ≥ 1: the proof covers every T > 0, but at T = 1e-3 the ratio itself, e^(200/T),
# is past float64's range
T_warm = Scalar("T", Positive(1.0, 1e3))

weights_ratio_is_exponential_in_score_gap = Theorem(
    name="weights_ratio_is_exponential_in_score_gap",
    source=Source(TUTORIAL, "§9.3 Theorem (Exponential Capacity), remark", "(16)"),
    claim=Equals(softmax(S[i, j], j, 1 / t) / softmax(S[i, s], s, 1 / t),
                 sp.exp((S[i, j] - S[i, s]) / t)),
    inputs=(S, T_warm),
    note="'The exponential separation provided by softmax': the weights of two keys are in "
    "the ratio exp((S_ij − S_is)/T), whatever the other scores are.",
)

# -- §4.2's attention_temperature code --------------------------------------------------------


def attention_temperature_weights(temperature: sp.Expr) -> sp.Expr:
    """The printed code: scores = QKᵀ/√d_k, then softmax(scores / temperature)."""
    return softmax(raw / sp.sqrt(d_k.symbol) / temperature, j)


attention_temperature_code_is_gibbs_of_raw_scores = Theorem(
    name="attention_temperature_code_is_gibbs_of_raw_scores",
    source=Source(TUTORIAL, "§4.2 code attention_temperature", "(16)"),
    claim=Equals(attention_temperature_weights(t),
                 softmax(raw, j, 1 / (t * sp.sqrt(d_k.symbol)))),
    inputs=(Q, K, T),
    note="attention_temperature(Q, K, V, T) weighs the unscaled scores QKᵀ by the Gibbs "
    "distribution (16) at temperature T·√d_k: T = 1 is standard attention, the effective "
    "temperature √d_k of the remark above.",
)
