"""attnproof: a symbolic-plus-numeric proof checker for the mathematics of transformer attention.

The statement language is re-exported here, so a theorem file needs one import::

    from attnproof import Dim, Equals, Source, Tensor, Theorem, softmax

Importing this package imports SymPy, never an array backend; numeric checks run in worker
processes and load their backends there. It sets JAX's GPU allocator to allocate on demand
(``XLA_PYTHON_CLIENT_PREALLOCATE=false``, unless the variable is set already), so that the
workers can share a GPU.

The language's names are imported on first use. Type checkers and editors read them from the
``TYPE_CHECKING`` block at the end, which names every name of ``attnproof.symbolic.__all__``
once more (``tests/packaging/test_type_exports.py`` holds the two to each other).
"""

import importlib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

from .numeric import share_accelerators

# before any backend initialises in this process or the workers it starts: several processes
# share one GPU, so none of them may preallocate most of its memory
share_accelerators()

try:
    __version__ = _version("attnproof")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

if TYPE_CHECKING:  # what type checkers and editors see: the language, imported eagerly
    from .symbolic import AboveMinimum as AboveMinimum
    from .symbolic import AbsoluteErrorBound as AbsoluteErrorBound
    from .symbolic import AtLeast as AtLeast
    from .symbolic import BelowMaximum as BelowMaximum
    from .symbolic import Between as Between
    from .symbolic import Bijection as Bijection
    from .symbolic import Catalog as Catalog
    from .symbolic import CauchySchwarz as CauchySchwarz
    from .symbolic import ClaimKind as ClaimKind
    from .symbolic import Cost as Cost
    from .symbolic import Defined as Defined
    from .symbolic import Dim as Dim
    from .symbolic import Domain as Domain
    from .symbolic import EntropyTerms as EntropyTerms
    from .symbolic import Equals as Equals
    from .symbolic import ErrorBound as ErrorBound
    from .symbolic import Exists as Exists
    from .symbolic import Expectation as Expectation
    from .symbolic import ExpPositive as ExpPositive
    from .symbolic import Fact as Fact
    from .symbolic import FirstOrderErrorBound as FirstOrderErrorBound
    from .symbolic import FlatDim as FlatDim
    from .symbolic import FromCode as FromCode
    from .symbolic import Gaussian as Gaussian
    from .symbolic import Gibbs as Gibbs
    from .symbolic import Greater as Greater
    from .symbolic import GreaterOrEqual as GreaterOrEqual
    from .symbolic import IEEEValue as IEEEValue
    from .symbolic import Implies as Implies
    from .symbolic import Indicator as Indicator
    from .symbolic import Integer as Integer
    from .symbolic import Limit as Limit
    from .symbolic import LoadError as LoadError
    from .symbolic import LogSumExp as LogSumExp
    from .symbolic import Mask as Mask
    from .symbolic import Moments as Moments
    from .symbolic import Near as Near
    from .symbolic import NotExists as NotExists
    from .symbolic import OnlineSoftmax as OnlineSoftmax
    from .symbolic import Permutation as Permutation
    from .symbolic import Permuted as Permuted
    from .symbolic import Positive as Positive
    from .symbolic import PositiveDefinite as PositiveDefinite
    from .symbolic import PositiveSemidefinite as PositiveSemidefinite
    from .symbolic import ProofResult as ProofResult
    from .symbolic import Rademacher as Rademacher
    from .symbolic import RankAtMost as RankAtMost
    from .symbolic import Real as Real
    from .symbolic import ReduceMax as ReduceMax
    from .symbolic import ReduceMin as ReduceMin
    from .symbolic import Reshape as Reshape
    from .symbolic import Rotation as Rotation
    from .symbolic import Rounds as Rounds
    from .symbolic import Scalar as Scalar
    from .symbolic import Series as Series
    from .symbolic import Simplex as Simplex
    from .symbolic import Sizes as Sizes
    from .symbolic import Softmax as Softmax
    from .symbolic import Source as Source
    from .symbolic import Spectral as Spectral
    from .symbolic import Squares as Squares
    from .symbolic import Step as Step
    from .symbolic import Tensor as Tensor
    from .symbolic import Theorem as Theorem
    from .symbolic import TheoremError as TheoremError
    from .symbolic import Variance as Variance
    from .symbolic import View as View
    from .symbolic import c_exp as c_exp
    from .symbolic import c_log as c_log
    from .symbolic import cond as cond
    from .symbolic import definitions_latex as definitions_latex
    from .symbolic import discover as discover
    from .symbolic import elu as elu
    from .symbolic import entropy as entropy
    from .symbolic import expectation as expectation
    from .symbolic import flat as flat
    from .symbolic import fully_masked as fully_masked
    from .symbolic import gamma as gamma
    from .symbolic import indicator as indicator
    from .symbolic import kl as kl
    from .symbolic import latex as latex
    from .symbolic import log_error as log_error
    from .symbolic import lse as lse
    from .symbolic import masked_softmax as masked_softmax
    from .symbolic import online_softmax as online_softmax
    from .symbolic import prove as prove
    from .symbolic import rotate_half as rotate_half
    from .symbolic import rotation as rotation
    from .symbolic import rowmax as rowmax
    from .symbolic import rowmin as rowmin
    from .symbolic import rowsum as rowsum
    from .symbolic import singular_max as singular_max
    from .symbolic import singular_min as singular_min
    from .symbolic import softmax as softmax
    from .symbolic import spread as spread
    from .symbolic import statement_latex as statement_latex
    from .symbolic import unit_roundoff as unit_roundoff
    from .symbolic import where as where
else:  # at run time: imported on first use

    def __getattr__(name: str) -> Any:  # any name of the language: a class, function, value
        """The language's names (``attnproof.Theorem``, ``__all__``), imported on first use, so
        that ``attnproof`` itself starts fast and the command can catch an early Ctrl-C.

        No name of the language begins with ``_``: such a name is refused before SymPy loads,
        since ``from attnproof import _module`` asks for it first (``hasattr``), before it
        imports the submodule."""
        if name.startswith("_") and name != "__all__":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        language = importlib.import_module(".symbolic", __name__)
        if name == "__all__":
            return [*language.__all__, "__version__"]
        if name in language.__all__:
            value = getattr(language, name)
            globals()[name] = value
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*globals(), *__getattr__("__all__")})
