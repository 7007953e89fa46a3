"""Planted causal linear attention: the output at position i read from running sums over
positions ≤ i (the prefix state Σ_{j ≤ i} φ(k_j) v_jᵀ and normaliser Σ_{j ≤ i} φ(k_j)), each
written as the step recurrence "previous state plus this position's term". Reading the state
before adding the current position is refuted (at i = 0 it reads an empty state). Both are
checked in every format: a proved identity over causal sums must evaluate in float32, float16
and bfloat16 as in float64. Test fixtures, never in the catalog."""

import sympy as sp

from attnproof import Dim, Equals, Positive, Sizes, Source, Tensor, Theorem

PLANTED = Source("tests/planted/causal_linear_attention.py", "planted causal linear attention")
length, features, width = Dim("t", Sizes(1, 8)), Dim("r", Sizes(1, 4)), Dim("e", Sizes(1, 4))
i, j, m = length.indices("i j m")
f, g = features.indices("f g")
c = width.index("c")
q_feat = Tensor("q_feat", (length, features), Positive(1e-2, 1e1))  # φ(q_i)
k_feat = Tensor("k_feat", (length, features), Positive(1e-2, 1e1))  # φ(k_j)
values = Tensor("vals", (length, width))


def prefix(term, index, upper):
    """Σ_{index ≤ upper} term: the running state after position ``upper``."""
    return sp.Sum(term, (index, 0, upper))


def read(numerator_state, normaliser_state):
    """φ(q_i)ᵀ state / φ(q_i)ᵀ normaliser: linear attention's output at position i."""
    return (sp.Sum(q_feat[i, f] * numerator_state, (f, 0, f.upper))
            / sp.Sum(q_feat[i, g] * normaliser_state.xreplace({f: g}), (g, 0, g.upper)))


# the causal kernel form: Σ_{j ≤ i} (φ(q_i)·φ(k_j)) v_j / Σ_{m ≤ i} φ(q_i)·φ(k_m)
kernel_form = (prefix(sp.Sum(q_feat[i, f] * k_feat[j, f], (f, 0, f.upper)) * values[j, c], j, i)
               / prefix(sp.Sum(q_feat[i, g] * k_feat[m, g], (g, 0, g.upper)), m, i))
# the recurrence: state_i = state_{i−1} + φ(k_i) v_iᵀ, normaliser_i = normaliser_{i−1} + φ(k_i)
state_after = prefix(k_feat[j, f] * values[j, c], j, i - 1) + k_feat[i, f] * values[i, c]
normaliser_after = prefix(k_feat[m, f], m, i - 1) + k_feat[i, f]

planted_causal_linear_attention_step_recurrence = Theorem(
    name="planted_causal_linear_attention_step_recurrence",
    source=PLANTED,
    claim=Equals(kernel_form, read(state_after, normaliser_after)),
    inputs=(q_feat, k_feat, values),
)

planted_causal_linear_attention_reads_the_state_too_early = Theorem(
    name="planted_causal_linear_attention_reads_the_state_too_early",
    source=PLANTED,
    claim=Equals(kernel_form,
                 read(prefix(k_feat[j, f] * values[j, c], j, i - 1), normaliser_after)),
    inputs=(q_feat, k_feat, values),
    expect="refuted",
)
