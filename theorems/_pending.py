"""Claims of the four documents that cannot be stated yet, with the claim kind each needs.

Data for the claim-kinds work: each entry names its place (document file, section, equation or
line), the claim as written, the kind it needs (one of ``KINDS``, the kinds of the claim-kinds
issue), and what is already known about it. ``verdict`` is "false" when the claim is already
known to be false as written (so it must arrive with expect="refuted" and a correction),
"true" when it is known to hold, and "open" when neither has been shown. A claim leaves this list
when a theorem states it.
"""

from ._dims import EXAMPLE_48, NOTEBOOK, README, TUTORIAL

KINDS = (
    "limit",
    "strict inequality",
    "IEEE value",
    "statistical",
    "reshape",
    "permutation",
    "spectral",
    "geometry",
    "series",
    "cost",
    "implementation",
)

PENDING = (
    dict(file=TUTORIAL, section="§2.3 Remark", place="Var(q^a k_a) = d_k",
         claim="for i.i.d. zero-mean unit-variance q, k, Var(q·k) = d_k; scaling by 1/√d_k "
         "makes it 1",
         kind="statistical", verdict="true"),
    dict(file=TUTORIAL, section="§4.3", place="normalized entropy H/log(n_k) ∈ [0, 1]",
         claim="H/log n_k lies in [0, 1] for every n_k", kind="IEEE value", verdict="false",
         note="0/0 = NaN at n_k = 1; for n_k ≥ 2 it holds (normalized_entropy_at_most_one, "
         "normalized_entropy_nonnegative)"),
    dict(file=TUTORIAL, section="§7.1 Definition (Multi-Head Attention)", place="(54)",
         claim="Y = O^{hic} W_O^{hcd} equals Concat(head_1, …, head_H) W_O", kind="reshape",
         verdict="true"),
    dict(file=TUTORIAL, section="§7.2 Geometric Interpretation", place="(55)",
         claim="with d_k = d_model/H each head works on a d_k-dimensional subspace",
         kind="spectral", verdict="open", note="rank of W_Q^h is at most d_k"),
    dict(file=TUTORIAL, section="§8.2 Learned Bilinear Attention",
         place="(58), 'M = WᵀW for positive definiteness'",
         claim="M = WᵀW is positive definite", kind="strict inequality", verdict="false",
         note="only positive semi-definite: W = 0 (or any singular W) gives xᵀMx = 0 for x ≠ 0; "
         "the semi-definite form is learned_metric_positive_semidefinite"),
    dict(file=TUTORIAL, section="§8.3 Relative Position Attention", place="(59)",
         claim="S^ij = Q^ia (K^ja + R^{(i−j)a})/√d_k depends on positions only through i − j",
         kind="reshape", verdict="true", note="needs an index written i − j"),
    dict(file=TUTORIAL, section="§9.1 Classical Hopfield Networks", place="after (61)",
         claim="fixed points (local minima) correspond to stored patterns", kind="statistical",
         verdict="open", note="true for few, nearly orthogonal ±1 patterns; false in general"),
    dict(file=TUTORIAL, section="§9.1", place="capacity M ≈ 0.14N",
         claim="classical capacity 0.14N",
         kind="statistical", verdict="open"),
    dict(file=TUTORIAL, section="§9.3 Theorem (Exponential Capacity)", place="(66)",
         claim="modern Hopfield networks store M ≈ exp(d/2) patterns", kind="statistical",
         verdict="open"),
    dict(file=TUTORIAL, section="§10 introduction, §10.1", place="complexity comparison",
         claim="standard attention needs O(n²) memory for A; Flash Attention O(n)", kind="cost",
         verdict="true"),
    dict(file=TUTORIAL, section="§10.2", place="after (70)",
         claim="the key sums cost O(nd²), then each query O(d²) instead of O(nd)", kind="cost",
         verdict="true"),
    dict(file=TUTORIAL, section="§10.2", place="ELU + 1 feature map",
         claim="φ(x) = ELU(x) + 1 is positive, so (70)'s denominator is positive",
         kind="strict inequality", verdict="true"),
    dict(file=TUTORIAL, section="§10.2 Intuition", place="(69)",
         claim="φ(q)ᵀφ(k) approximates exp(q·k)", kind="statistical", verdict="open",
         note="random-feature approximations hold in expectation"),
    dict(file=TUTORIAL, section="§3.2 code; §8.1", place="jnp.where(mask, scores, -1e9)",
         claim="the printed implementation gives masked keys (numerically) zero weight",
         kind="IEEE value", verdict="true",
         note="for causal masks, as the comment says; a fully masked row (padding) would get "
         "uniform weights 1/n_k from the finite −1e9 fill, not 0"),
    dict(file=TUTORIAL, section="§13.3 Gradient Verification; README 'Gradient Verification'",
         place="verify_gradients(Q, K, V)",
         claim="the manual backward pass of §6.5 matches JAX autodiff",
         kind="implementation", verdict="true",
         note="the closed forms are proved (attention_backward_*); the printed code needs an "
         "implementation claim with lemmas"),
    dict(file=EXAMPLE_48, section="ML Examples and Patterns", place="line 116",
         claim="reordering keys/values identically permutes the attention output",
         kind="permutation", verdict="false",
         note="it leaves the output unchanged (invariance); permuting the queries permutes it"),
    dict(file=EXAMPLE_48, section="ML Context", place="line 138",
         claim="attention is permutation-equivariant (self-attention)", kind="permutation",
         verdict="true"),
    dict(file=EXAMPLE_48, section="ML Context", place="line 138",
         claim="MultiHead(X) = Concat(head_1, …, head_h) W_O", kind="reshape", verdict="true"),
    dict(file=EXAMPLE_48, section="Mathematical characterization; ML Examples",
         place="lines 9, 91, 114, 120",
         claim="dividing by √d_k keeps score variance from growing with dimension",
         kind="statistical", verdict="true"),
    dict(file=EXAMPLE_48, section="Why This Matters for ML", place="line 128",
         claim="attention costs O(n²d) for sequence length n", kind="cost", verdict="true"),
    dict(file=EXAMPLE_48, section="Numerical and Implementation Notes", place="line 134",
         claim="subtracting the row maximum before exp prevents overflow", kind="IEEE value",
         verdict="true", note="the identity it relies on is softmax_shift_invariance"),
    dict(file=EXAMPLE_48, section="Numerical and Implementation Notes", place="line 134",
         claim="tiled computation reduces memory from O(n²) to O(n)", kind="cost", verdict="true"),
    dict(file=EXAMPLE_48, section="Numerical and Shape Notes", place="line 83",
         claim="PSD check x.T @ A @ x > 0", kind="strict inequality", verdict="false",
         note="'> 0' is positive definiteness; a PSD matrix can give 0"),
    dict(file=EXAMPLE_48, section="Connection to Linear Algebra Theory", place="line 132",
         claim="attention matrices often have low effective rank", kind="spectral", verdict="open"),
    dict(file=NOTEBOOK, section="Demos 5, 15, 25 (score scaling)",
         place="raw.std() vs scaled.std()",
         claim="for Gaussian Q, K (seed 1) the raw std is about √64 = 8 and the scaled std about 1",
         kind="statistical", verdict="open",
         note="the exact ratio 8 is notebook_score_scaling_variance"),
    dict(file=NOTEBOOK, section="Demos 7, 17 (KV cache size)", place="'grows with T'",
         claim="the KV cache grows linearly with T", kind="cost", verdict="true"),
    dict(file=NOTEBOOK, section="Demos 9, 19 (quadratic cost)", place="plot of T² score entries",
         claim="the score matrix has T² entries at every T", kind="cost", verdict="true"),
    dict(file=README, section="Statistical Mechanics View",
         place="A_sharp (β = 10), A_soft (β = 0.1)",
         claim="on the README's Q, K the entropy of A_sharp is below that of A_soft",
         kind="strict inequality", verdict="true",
         note="the general monotonicity is entropy_decreases_with_inverse_temperature"),
)

# Numbered equations of the tutorial that are notation or definitions, not claims; the others
# are cited by a theorem's source or by an entry of PENDING (tests/symbolic/test_catalog.py).
NOT_CLAIMS = {
    1: "notation: the pairing of a covector and a vector",
    14: "notation: (13) in matrix form (attention_in_one_equation proves (13))",
    28: "definition: covariant derivative of a vector; with Γ = 0 (christoffel_symbols_vanish_*) "
        "it is the ordinary derivative",
    29: "definition: covariant derivative of a covector; as (28)",
    30: "definition: Fisher information",
    32: "notation: the chain rule written out; its result is (46) (attention_backward_dq)",
    50: "definition: value projection of a head",
    52: "definition: per-head softmax",
    53: "definition: per-head value aggregation",
    56: "definition: head diversity",
    71: "data: the matrices of worked example 1",
    74: "notation: the product whose result (75)–(77) worked_example_output checks",
}
