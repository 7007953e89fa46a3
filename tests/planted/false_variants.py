"""Planted false theorems: each is a classic slip, and the checker must refute every one.

These are test fixtures, discovered from this directory like any user's theorem directory.
They never enter the catalog or its reports.
"""

import sympy as sp

from attnproof.symbolic import AtLeast, Defined, Equals, Source, Theorem, softmax
from attnproof.theorems import attention_backward as bw
from attnproof.theorems import hopfield as hf
from attnproof.theorems import masking as mk
from attnproof.theorems import online_softmax as online
from attnproof.theorems import softmax_jacobian as sj

PLANTED = "tests/planted/false_variants.py"

planted_softmax_gradient_without_rowsum = Theorem(
    name="planted_softmax_gradient_without_rowsum",
    source=Source(PLANTED, "planted", "(42) minus its rowsum term"),
    claim=Equals(sj.softmax_gradient.claim.lhs, sj.A[sj.m, sj.n] * sj.G[sj.m, sj.n]),
    inputs=(sj.S, sj.G),
    definitions=(sj.A,),
    expect="refuted",
)

planted_dq_without_scale = Theorem(
    name="planted_dq_without_scale",
    source=Source(PLANTED, "planted", "(46) without 1/sqrt(d_k)"),
    claim=Equals(bw.attention_backward_dq.claim.lhs,
                 bw.total(bw.dS[bw.m, bw.j] * bw.K[bw.j, bw.l_], bw.j)),
    inputs=(bw.Q, bw.K, bw.V, bw.G),
    definitions=bw.forward,
    expect="refuted",
)

planted_online_merge_without_rescale = Theorem(
    name="planted_online_merge_without_rescale",
    source=Source(PLANTED, "planted", "(68) without exp(m - m')"),
    claim=Equals(
        online.ell + sp.Sum(sp.exp(online.y[online.l_] - online.m_new),
                            (online.l_, 0, online.n_new.symbol - 1)),
        online.online_softmax_merge.claim.rhs,
    ),
    inputs=(online.x, online.y),
    expect="refuted",
)

A_without_beta = Defined("A", (sj.i, sj.j), softmax(sj.S[sj.i, sj.j], sj.j, 1 / sj.T.symbol))
planted_softmax_jacobian_without_beta = Theorem(
    name="planted_softmax_jacobian_without_beta",
    source=Source(PLANTED, "planted", "(39) applied at temperature T, beta forgotten"),
    claim=Equals(
        sp.Derivative(A_without_beta[sj.i, sj.j], sj.S[sj.m, sj.n]),
        sj.delta(sj.i, sj.m) * A_without_beta[sj.i, sj.j]
        * (sj.delta(sj.j, sj.n) - A_without_beta[sj.i, sj.n]),
    ),
    inputs=(sj.S, sj.T),
    definitions=(A_without_beta,),
    expect="refuted",
)

A_unmasked = Defined("A0", (mk.i, mk.j), softmax(mk.S[mk.i, mk.j], mk.j, 1 / mk.T.symbol))
planted_masked_jacobian_with_unmasked_weights = Theorem(
    name="planted_masked_jacobian_with_unmasked_weights",
    source=Source(PLANTED, "planted", "(39) under the mask of (57), with the unmasked weights"),
    claim=Equals(
        mk.masking_softmax_jacobian.claim.lhs,
        sj.delta(mk.i, mk.m) * A_unmasked[mk.i, mk.j]
        * (sj.delta(mk.j, mk.n) - A_unmasked[mk.i, mk.n]) / mk.T.symbol,
    ),
    inputs=(mk.S, mk.M, mk.T),
    definitions=(mk.A, A_unmasked),
    expect="refuted",
)

# §9.3's separation bound, hopfield_other_patterns_weight_exponentially_small, with a slip each
planted_separation_bound_without_pattern_count = Theorem(
    name="planted_separation_bound_without_pattern_count",
    source=Source(PLANTED, "planted", "(66) separation bound without the factor N - 1"),
    claim=AtLeast(sp.exp(-hf.B_cap * hf.separation), hf.weight_of_others),
    inputs=(hf.score_i, hf.scores_other, hf.beta_capacity),
    expect="refuted",
)

planted_separation_bound_with_doubled_rate = Theorem(
    name="planted_separation_bound_with_doubled_rate",
    source=Source(PLANTED, "planted", "(66) separation bound decaying as exp(-2 beta Delta)"),
    claim=AtLeast(hf.others.symbol * sp.exp(-2 * hf.B_cap * hf.separation), hf.weight_of_others),
    inputs=(hf.score_i, hf.scores_other, hf.beta_capacity),
    expect="refuted",
)
