"""Claims of the four documents that cannot be stated yet, with the claim kind each needs.

Data for the claim-kinds work: each entry names its place (document file, section, equation or
line), the claim as written, the kind it needs (one of ``KINDS``, the kinds of the claim-kinds
issue), and what is already known about it. ``verdict`` is "false" when the claim is already
known to be false as written (so it must arrive with expect="refuted" and a correction),
"true" when it is known to hold, and "open" when neither has been shown. A claim leaves this list
when a theorem states it. ``construct`` names what the language lacks to state it, where that is
what keeps it here (rather than a check that needs a closer look).
"""

from ._dims import EXAMPLE_48, NOTEBOOK, TUTORIAL

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
    "existence",
    "index condition",
)

PENDING = (
    dict(file=TUTORIAL, section="§9.1 Classical Hopfield Networks", place="after (61)",
         claim="fixed points (local minima) correspond to stored patterns", kind="statistical",
         verdict="open", note="true for few, nearly orthogonal ±1 patterns; false in general"),
    dict(file=TUTORIAL, section="§9.1", place="capacity M ≈ 0.14N",
         claim="classical capacity 0.14N",
         kind="statistical", verdict="open",
         note="an asymptotic statement (N → ∞, random ±1 patterns, Hebbian weights) about "
         "retrieval with a tolerated fraction of flipped bits that the text does not define; "
         "0.138N is the replica-theory threshold for stable near-pattern states (Amit, "
         "Gutfreund, Sompolinsky 1985), not a quantity checkable at small N"),
    dict(file=TUTORIAL, section="§13.3 Gradient Verification; README 'Gradient Verification'",
         place="verify_gradients(Q, K, V)",
         claim="the manual backward pass of §6.5 matches JAX autodiff (dL_dK)",
         kind="implementation", verdict="open",
         note="dL_dQ and dL_dV are stated and checked (printed_backward_dq_matches_autodiff, "
         "printed_backward_dv_matches_autodiff); dL_dK's check once found the closed form's "
         "float32 value on MLX outside its stability bound at inputs near ±100 (n_q = 5, "
         "d_k = 6, n_k = 7), not reproduced in four later runs: the tolerance model's margin "
         "there needs a look before the theorem joins the catalog"),
    dict(file=EXAMPLE_48, section="Connection to Linear Algebra Theory", place="line 132",
         claim="attention matrices often have low effective rank", kind="spectral", verdict="open",
         note="'often' and 'effective rank' (no threshold) leave nothing to prove or refute as "
         "written; RankAtMost can state a precise variant once the document fixes one"),
    dict(file=EXAMPLE_48, section="ML Context: From Attention to Transformers", place="line 138",
         claim="the feedforward sublayer FFN(x) = W₂(W₁x) adds expressiveness", kind="existence",
         construct="existence: 'no matrix M gives W₂(W₁x) = Mx for every x'",
         verdict="false",
         note="M = W₂W₁ is a witness (example48_ffn_as_written_is_one_linear_map): as written "
         "the sublayer is one linear map; the claim needs the activation the text leaves out, "
         "W₂σ(W₁x)"),
    dict(file=EXAMPLE_48, section="Connection to Broader Examples, Chapter 14 (Conditioning)",
         place="line 153",
         claim="ill-conditioned attention matrices (dominated by few large singular values) "
         "concentrate weights on few keys", kind="spectral",
         construct="an implication from a spectral property (condition number, singular "
         "values) to concentration (entropy of the rows)",
         verdict="false",
         note="uniform attention, A_ij = 1/n_k (the weights at Q = 0), has rank one "
         "(example48_uniform_attention_has_rank_one), so one singular value and an infinite "
         "condition number, yet every row is spread evenly: entropy log n_k, the largest there "
         "is (entropy_of_uniform_is_log_n)"),
    dict(file=EXAMPLE_48, section="Numerical and Implementation Notes; ML Examples and Patterns",
         place="lines 79, 105",
         claim="regularization (ridge) improves conditioning", kind="spectral",
         construct="condition number (ratio of the extreme singular values of a matrix)",
         verdict="true",
         note="the eigenvalues of XᵀX + λI are those of XᵀX shifted by λ > 0, and "
         "(σ_max + λ)/(σ_min + λ) < σ_max/σ_min unless they are equal; 'rescale features' on "
         "line 79 names no scaling, so only the ridge half has a verdict"),
    dict(file=EXAMPLE_48, section="Numerical and Shape Notes, Stability eps; Numerical and "
         "Implementation Notes, Stability", place="lines 69, 78",
         claim="a small diagonal εI (jitter) makes a PSD matrix fit for SPD solves",
         kind="spectral",
         construct="a positive-definiteness route for BᵀB + εI (the prover does not recognise "
         "it) and a float32 check that can see ε next to ‖A‖",
         verdict="true",
         note="xᵀ(BᵀB + εI)x = ‖Bx‖² + ε‖x‖² > 0 for x ≠ 0 and every ε > 0. Stated as "
         "PositiveDefinite over ε in [1e-6, 1] it is not proved (no counterexample at sizes ≤ 3) "
         "and float32 finds a least eigenvalue of 2.9e-6 for A = [[8.03, 8.03], [8.03, 8.03]] "
         "and ε = 1e-6, under the check's tolerance 9.8e-4: the jitter must be large against "
         "eps·‖A‖ to be seen, which the line does not say"),
    dict(file=EXAMPLE_48, section="ML Context: From Attention to Transformers", place="line 138",
         claim="layer normalization controls activation magnitudes", kind="IEEE value",
         construct="a domain that depends on the dtype (ε above float16's smallest normal), or "
         "the float16 NaN stated as an IEEE value beside the identity",
         verdict="true",
         note="y = (x − mean)/√(var + ε) has mean square var/(var + ε) < 1 for every x (proved "
         "by the sum normal form when stated over ε in [1e-6, 1]); float16 evaluates a constant "
         "x = [0, 0] at ε = 1e-6 to NaN, so the theorem would read 'unstable' there, for a "
         "reason of the dtype, not of the claim"),
    dict(file=EXAMPLE_48, section="Numerical and Implementation Notes", place="line 78",
         claim="prefer QR/SVD for ill-conditioned least squares", kind="spectral",
         construct="condition number (ratio of the extreme singular values of a matrix)",
         verdict="true",
         note="the reason is κ(XᵀX) = κ(X)²: the normal equations square the condition number "
         "that QR and SVD work with"),
    dict(file=EXAMPLE_48, section="Numerical and Implementation Notes, Complexity & memory",
         place="line 81",
         claim="O(n²) for triangular solves/products", kind="cost",
         construct="sums whose limits depend on an index (Σ_{j<i}) in a counted algorithm",
         verdict="open",
         note="true for a triangular solve or a triangular matrix-vector product "
         "(n(n+1)/2 multiply-adds); a product of two n × n triangular matrices takes about "
         "n³/6, so 'products' holds only for one vector"),
    dict(file=EXAMPLE_48, section="Connection to ML Applications; Connection to Broader "
         "Examples, Chapter 15 (Sparse)", place="lines 130, 154",
         claim="sparse attention (local windows, strided or block patterns) reduces O(n²) to "
         "O(n log n) or O(n)", kind="cost",
         construct="indicators on indices (|i − j| ≤ w, j mod k = 0) in a counted algorithm",
         verdict="open",
         note="a window of w keys per query scores n·w pairs, O(n) for fixed w; which pattern "
         "gives O(n log n) the text does not say"),
    dict(file=NOTEBOOK, section="Demos 10, 20 (FlashAttention invariant)", place="line 197",
         claim="FlashAttention changes memory movement", kind="cost",
         construct="IO cost: reads and writes of slow memory with a fast memory of size M",
         verdict="open",
         note="'not the attention formula' is stated (online_softmax_blockwise: the block-wise "
         "result equals softmax(S)V) and the memory held is (flash_attention_memory_linear); "
         "the traffic between memories needs the IO model"),
)

# Numbered equations of the tutorial that are notation or definitions, not claims; every other
# one is cited by a theorem's source (tests/symbolic/test_catalog.py).
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
    59: "definition: relative-position scores; the text asserts no property of them (the "
        "term Q·R^(i−j) is relative by construction, and S^ij still depends on i and j "
        "through Q^i and K^j)",
    71: "data: the matrices of worked example 1",
    74: "notation: the product whose result (75)–(77) worked_example_output checks",
}
