"""The route toolkit: everything a claim kind's statement and exact routes use, by public name.

A module in ``symbolic/kinds/`` imports from here (and from its own package), never from a
private module of the language: this is the whole surface a new kind learns, and
``tests/packaging/test_layering.py`` holds the kinds to it. The contract itself is in
``_kind.py``.
"""

from __future__ import annotations

from ._claims import EXTREME_PROOFS, AtLeast, Equals, Rounds
from ._domains import (
    Domain,
    Integer,
    Mask,
    Positive,
    Real,
    Simplex,
    Sizes,
    search_steps,
    size_assignments,
    size_steps,
)
from ._kind import AnyConfiguration, ClaimKind
from ._language import (
    Defined,
    Dim,
    Scalar,
    Tensor,
    TheoremError,
    as_expression,
    check_name,
    rename_bound_indices,
)
from ._normal_form import is_nonnegative, is_positive, residual
from ._prover import (
    EXACT_EVALUATION,
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    ProofResult,
    check_worked_numbers,
    claim_difference,
    describe_counterexample,
    exact_value,
    find_counterexample,
    index_assignments,
    instantiate,
    mask_bases,
    prove_directly,
    small_instances,
    small_sizes,
    structured_draws,
    substituted,
    theorem_residual,
    used_values,
)
from ._special_values import PATTERNS as STRUCTURED_PATTERNS
from ._theorem import (
    Theorem,
    check_names_valid,
    check_shapes,
    check_symbols_covered,
    claim_expressions,
    free_indices,
    ordered_free_indices,
)
from ._vocabulary import (
    Indicator,
    OnlineSoftmax,
    ReduceMax,
    ReduceMin,
    Softmax,
    expand_vocabulary,
    raised_latex,
)

__all__ = [
    # the contract and the language a statement is written in
    "ClaimKind",
    "AnyConfiguration",
    "TheoremError",
    "Theorem",
    "Equals",
    "AtLeast",
    "Rounds",
    "EXTREME_PROOFS",
    "Defined",
    "Dim",
    "Scalar",
    "Tensor",
    "Domain",
    "Integer",
    "Mask",
    "Positive",
    "Real",
    "Simplex",
    "Sizes",
    "Indicator",
    "OnlineSoftmax",
    "ReduceMax",
    "ReduceMin",
    "Softmax",
    "as_expression",
    "check_name",
    "expand_vocabulary",
    "raised_latex",
    "rename_bound_indices",
    # checks a kind's validate() runs on its own expressions
    "check_names_valid",
    "check_shapes",
    "check_symbols_covered",
    "free_indices",
    "claim_expressions",
    "ordered_free_indices",
    # the verdicts of a symbolic route
    "ProofResult",
    "PROVED",
    "PROVED_BOUNDED",
    "NOT_PROVED",
    "REFUTED",
    "EXACT_EVALUATION",
    # proving: the sum normal form's zero test and the identity route
    "residual",
    "theorem_residual",
    "mask_bases",
    "claim_difference",
    "is_nonnegative",
    "is_positive",
    "prove_directly",
    "check_worked_numbers",
    # sizes and instances: every size up to a bound, exact structured draws
    "search_steps",
    "size_steps",
    "size_assignments",
    "small_sizes",
    "index_assignments",
    "instantiate",
    "structured_draws",
    "STRUCTURED_PATTERNS",
    "small_instances",
    # refuting: exact evaluation of an instance and the counterexample a report prints
    "substituted",
    "exact_value",
    "used_values",
    "describe_counterexample",
    "find_counterexample",
]
