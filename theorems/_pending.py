"""Claims of the four documents that cannot be stated yet, with the claim kind each needs.

Data for the claim-kinds work: each entry names its place (document file, section, equation or
line), the claim as written, the kind it needs (one of ``KINDS``, the kinds of the claim-kinds
issue), and what is already known about it. ``verdict`` is "false" when the claim is already
known to be false as written (so it must arrive with expect="refuted" and a correction),
"true" when it is known to hold, and "open" when neither has been shown. A claim leaves this list
when a theorem states it.
"""

from ._dims import EXAMPLE_48, TUTORIAL

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
    dict(file=TUTORIAL, section="§10.2 Intuition", place="(69)",
         claim="φ(q)ᵀφ(k) approximates exp(q·k)", kind="statistical", verdict="open",
         note="random-feature approximations hold in expectation"),
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
