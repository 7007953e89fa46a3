"""attnproof's statement language: index notation over named dimensions, and its provers.

Importing this package imports SymPy only, never an array backend.

Its public names are the language (``__all__``, which ``attnproof`` re-exports and
``docs/LANGUAGE.md`` documents) and the few names of ``_TOOL_NAMES`` that the rest of attnproof
(the command line, the runner, the reports) imports from here rather than from a private module
(``tests/packaging/test_layering.py``): public, but outside the language and ``__all__``.
"""

from types import ModuleType as _ModuleType

from ._catalog import CATALOG_DIR as CATALOG_DIR
from ._catalog import Catalog as Catalog
from ._catalog import LoadError as LoadError
from ._catalog import discover as discover
from ._catalog import load_file as load_file
from ._catalog import source_problem as source_problem
from ._claims import AtLeast as AtLeast
from ._claims import Equals as Equals
from ._claims import Rounds as Rounds
from ._domains import Domain as Domain
from ._domains import Integer as Integer
from ._domains import Mask as Mask
from ._domains import Positive as Positive
from ._domains import Real as Real
from ._domains import Simplex as Simplex
from ._domains import Sizes as Sizes
from ._formats import BFLOAT16 as BFLOAT16
from ._formats import FLOAT16 as FLOAT16
from ._formats import FLOAT32 as FLOAT32
from ._formats import FLOAT64 as FLOAT64
from ._formats import FORMATS as FORMATS
from ._formats import TENSORFLOAT32 as TENSORFLOAT32
from ._formats import Format as Format
from ._formats import format_named as format_named
from ._formats import with_precision as with_precision
from ._kind import ClaimKind as ClaimKind
from ._language import Defined as Defined
from ._language import Dim as Dim
from ._language import Scalar as Scalar
from ._language import Tensor as Tensor
from ._latex import definitions_latex as definitions_latex
from ._latex import latex as latex
from ._latex import statement_latex as statement_latex
from ._prover import EXACT_EVALUATION as EXACT_EVALUATION
from ._prover import PROOF_TIME_LIMIT as PROOF_TIME_LIMIT
from ._prover import ProofResult as ProofResult
from ._prover import ProofStatus as ProofStatus
from ._prover import prove as prove
from ._theorem import DOCUMENT_TITLES as DOCUMENT_TITLES
from ._theorem import Source as Source
from ._theorem import Theorem as Theorem
from ._theorem import TheoremError as TheoremError
from ._vocabulary import Indicator as Indicator
from ._vocabulary import LogSumExp as LogSumExp
from ._vocabulary import OnlineSoftmax as OnlineSoftmax
from ._vocabulary import ReduceMax as ReduceMax
from ._vocabulary import ReduceMin as ReduceMin
from ._vocabulary import Rotation as Rotation
from ._vocabulary import Softmax as Softmax
from ._vocabulary import entropy as entropy
from ._vocabulary import expectation as expectation
from ._vocabulary import fully_masked as fully_masked
from ._vocabulary import indicator as indicator
from ._vocabulary import kl as kl
from ._vocabulary import lse as lse
from ._vocabulary import masked_softmax as masked_softmax
from ._vocabulary import online_softmax as online_softmax
from ._vocabulary import rotate_half as rotate_half
from ._vocabulary import rotation as rotation
from ._vocabulary import rowmax as rowmax
from ._vocabulary import rowmin as rowmin
from ._vocabulary import rowsum as rowsum
from ._vocabulary import softmax as softmax
from ._vocabulary import where as where
from .kinds.code_numbers import FromCode as FromCode
from .kinds.cost import Cost as Cost
from .kinds.cost import Step as Step
from .kinds.error_bound import AbsoluteErrorBound as AbsoluteErrorBound
from .kinds.error_bound import ErrorBound as ErrorBound
from .kinds.error_bound import FirstOrderErrorBound as FirstOrderErrorBound
from .kinds.error_bound import c_exp as c_exp
from .kinds.error_bound import c_log as c_log
from .kinds.error_bound import gamma as gamma
from .kinds.error_bound import log_error as log_error
from .kinds.error_bound import spread as spread
from .kinds.error_bound import u as unit_roundoff  # noqa: F401 (public under this name)
from .kinds.existence import Exists as Exists
from .kinds.existence import NotExists as NotExists
from .kinds.ieee import Between as Between
from .kinds.ieee import IEEEValue as IEEEValue
from .kinds.ieee import Near as Near
from .kinds.implication import Implies as Implies
from .kinds.inequality import AboveMinimum as AboveMinimum
from .kinds.inequality import BelowMaximum as BelowMaximum
from .kinds.inequality import CauchySchwarz as CauchySchwarz
from .kinds.inequality import EntropyTerms as EntropyTerms
from .kinds.inequality import ExpPositive as ExpPositive
from .kinds.inequality import Fact as Fact
from .kinds.inequality import Gibbs as Gibbs
from .kinds.inequality import Greater as Greater
from .kinds.inequality import GreaterOrEqual as GreaterOrEqual
from .kinds.inequality import Squares as Squares
from .kinds.inequality import elu as elu
from .kinds.limit import Limit as Limit
from .kinds.linalg import PositiveDefinite as PositiveDefinite
from .kinds.linalg import PositiveSemidefinite as PositiveSemidefinite
from .kinds.linalg import RankAtMost as RankAtMost
from .kinds.permutation import Bijection as Bijection
from .kinds.permutation import Permutation as Permutation
from .kinds.permutation import Permuted as Permuted
from .kinds.reshape import FlatDim as FlatDim
from .kinds.reshape import Reshape as Reshape
from .kinds.reshape import View as View
from .kinds.reshape import flat as flat
from .kinds.series import Series as Series
from .kinds.spectral import Spectral as Spectral
from .kinds.spectral import cond as cond
from .kinds.spectral import singular_max as singular_max
from .kinds.spectral import singular_min as singular_min
from .kinds.statistical import Expectation as Expectation
from .kinds.statistical import Gaussian as Gaussian
from .kinds.statistical import Moments as Moments
from .kinds.statistical import Rademacher as Rademacher
from .kinds.statistical import Variance as Variance

# the tool's own names among the imports above: public, but not the statement language
_TOOL_NAMES = ("BFLOAT16", "CATALOG_DIR", "DOCUMENT_TITLES", "EXACT_EVALUATION", "FLOAT16",
               "FLOAT32", "FLOAT64", "FORMATS", "Format", "PROOF_TIME_LIMIT", "ProofStatus",
               "TENSORFLOAT32", "format_named", "load_file",
               "source_problem", "with_precision")

# every other name imported above as ``name as name`` is the language, so a new claim kind's
# one line of import is its registration here (``attnproof/__init__.py`` names it once more
# for type checkers, and a test says so when it does not)
__all__ = [name for name, value in list(globals().items())
           if not name.startswith("_") and not isinstance(value, _ModuleType)
           and name not in _TOOL_NAMES]
