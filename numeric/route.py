"""The numeric route toolkit: everything a claim kind's numeric route uses, by public name.

A module in ``numeric/kinds/`` imports from here, from ``attnproof.symbolic`` (and its
``route`` toolkit and kind modules) and from its own package, never from a private module of
``numeric``: ``tests/packaging/test_layering.py`` holds the kinds to it. A route registers
itself with ``@numeric_route(KindClass)``; it is called as ``route(theorem, where, profile,
seed=None)`` and returns the :class:`Evidence` it saw, which the driver (``numeric/_driver.py``)
turns into the record's status: a route never chooses a status itself.
"""

from __future__ import annotations

from . import _evidence as evidence
from . import _strategies as strategies
from . import _structured as structured
from ._backends import (
    Array,
    ArrayModule,
    Backend,
    NativeDevice,
    backend,
    is_truth,
    to_numpy,
    truth_row,
)
from ._backends import _numpy_dtype as numpy_dtype  # NumPy's dtype of a format name
from ._backends import _numpy_place as numpy_place  # NumPy's place step: a cast, no device
from ._compiler import compile_expression
from ._driver import (
    MINIMUM_DECIDED,
    CannotDecide,
    Evidence,
    Failure,
    Inconsistent,
    Judged,
    Passed,
    StructureRoute,
    Tally,
    Unsupported,
    Where,
    check_structures,
    draw_each,
    find_failure,
    search_for_failure,
    search_seed,
    search_structures,
    would_pass,
)
from ._executables import run_route_program
from ._plan import Evaluated, Runner, evaluate_reference, is_reference, runner_for
from ._record import BACKEND_FINDING
from ._rounding import NO_MODEL, ROUNDING_MODEL, Rounding
from ._routes import format_judge, numeric_route
from ._search import effort_for, run_search
from ._tolerance import (
    REFERENCE_DTYPE,
    STABILITY_ULPS,
    TRUTH_ULPS,
    bits,
    error_ulps,
    format_truth_ulps,
)

__all__ = [
    # registering a route, and what it fills
    "numeric_route",
    "format_judge",
    "Where",
    "Evidence",
    # what a route concludes: exactly one, the evidence's outcome
    "Passed",
    "Failure",
    "CannotDecide",
    "Inconsistent",
    "Unsupported",
    "Tally",
    "StructureRoute",
    "Judged",
    "check_structures",
    "search_for_failure",
    "search_structures",
    "search_seed",
    "find_failure",
    "draw_each",
    "would_pass",
    "BACKEND_FINDING",
    # backends and compiled statements
    "Backend",
    # any backend's arrays, array modules and device objects, and the compiled search's runner
    # and what it evaluated, as annotations name them
    "Array",
    "ArrayModule",
    "NativeDevice",
    "Runner",
    "Evaluated",
    "backend",
    # the backend whose float64 is the ground truth: the reference a kind's route measures against
    "truth_row",
    "compile_expression",
    "run_route_program",
    "numpy_dtype",
    "numpy_place",
    "to_numpy",
    "is_truth",
    # draws: Hypothesis strategies, structured patterns, and how much evidence a verdict needs
    "strategies",
    "structured",
    "evidence",
    "MINIMUM_DECIDED",
    # the compiled search and its reference evaluation, for a kind that reuses them
    "effort_for",
    "evaluate_reference",
    "is_reference",
    "run_search",
    "runner_for",
    # the rounding models: per backend and format, u, c_exp and c_log
    "ROUNDING_MODEL",
    "NO_MODEL",
    "Rounding",
    # tolerances and errors in ulps
    "REFERENCE_DTYPE",
    "STABILITY_ULPS",
    "TRUTH_ULPS",
    "bits",
    "error_ulps",
    "format_truth_ulps",
]
