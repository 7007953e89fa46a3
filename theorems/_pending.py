"""Claims of the four documents that cannot be stated yet, with the claim kind each needs.

Data for the claim-kinds work: each entry names its place (document file, section, equation or
line), the claim as written, the kind it needs (one of ``KINDS``, the kinds of the claim-kinds
issue), and what is already known about it. ``verdict`` is "false" when the claim is already
known to be false as written (so it must arrive with expect="refuted" and a correction),
"true" when it is known to hold, and "open" when neither has been shown. A claim leaves this list
when a theorem states it. ``construct`` names what the language lacks to state it, where that is
what keeps it here (rather than a check that needs a closer look).
"""

from __future__ import annotations

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

# Every claim of the four documents is stated by a theorem now (the last ones with the spectral,
# negated-existence and implication kinds, and costs with index-dependent sums); a claim found
# later that no construct can state is added here, with the construct it needs.
PENDING: tuple[dict, ...] = ()

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
