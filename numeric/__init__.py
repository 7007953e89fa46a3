"""Numeric checking of attnproof theorems: compile statements to array code, draw inputs with
Hypothesis, decide truth in float64 and stability in lower precision, per backend.

Importing this package imports NumPy, SymPy and Hypothesis only; backends load on first use.
"""

from ._backends import BACKENDS as BACKENDS
from ._backends import Backend as Backend
from ._backends import available_configurations as available_configurations
from ._compiler import Compiled as Compiled
from ._compiler import compile_expression as compile_expression
from ._record import NumericRecord as NumericRecord
from ._record import NumericStatus as NumericStatus
from ._search import check as check
from ._strategies import Profile as Profile
from ._strategies import from_theorem as from_theorem
from ._strategies import profile as profile
from ._tolerance import STABILITY_ULPS as STABILITY_ULPS
from ._tolerance import TRUTH_ULPS as TRUTH_ULPS
