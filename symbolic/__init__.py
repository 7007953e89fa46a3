"""attnproof's statement language: index notation over named dimensions, and its provers.

Importing this package imports SymPy only, never an array backend.
"""

from ._catalog import Catalog as Catalog
from ._catalog import LoadError as LoadError
from ._catalog import discover as discover
from ._domains import Domain as Domain
from ._domains import Integer as Integer
from ._domains import Mask as Mask
from ._domains import Positive as Positive
from ._domains import Real as Real
from ._domains import Simplex as Simplex
from ._domains import Sizes as Sizes
from ._kind import ClaimKind as ClaimKind
from .kinds.limit import Limit as Limit
from .kinds.series import Series as Series
from ._language import Defined as Defined
from ._language import Dim as Dim
from ._language import Scalar as Scalar
from ._language import Tensor as Tensor
from ._latex import definitions_latex as definitions_latex
from ._latex import latex as latex
from ._latex import statement_latex as statement_latex
from ._prover import ProofResult as ProofResult
from ._prover import prove as prove
from ._theorem import AtLeast as AtLeast
from ._theorem import Equals as Equals
from ._theorem import Rounds as Rounds
from ._theorem import Source as Source
from ._theorem import Theorem as Theorem
from ._theorem import TheoremError as TheoremError
from ._vocabulary import LogSumExp as LogSumExp
from ._vocabulary import ReduceMax as ReduceMax
from ._vocabulary import Softmax as Softmax
from ._vocabulary import entropy as entropy
from ._vocabulary import expectation as expectation
from ._vocabulary import fully_masked as fully_masked
from ._vocabulary import kl as kl
from ._vocabulary import lse as lse
from ._vocabulary import masked_softmax as masked_softmax
from ._vocabulary import rowmax as rowmax
from ._vocabulary import rowsum as rowsum
from ._vocabulary import softmax as softmax

__all__ = [
    "Catalog",
    "LoadError",
    "discover",
    "Domain",
    "Integer",
    "Mask",
    "Positive",
    "Real",
    "Simplex",
    "Sizes",
    "ClaimKind",
    "Limit",
    "Series",
    "Defined",
    "Dim",
    "Scalar",
    "Tensor",
    "definitions_latex",
    "latex",
    "statement_latex",
    "ProofResult",
    "prove",
    "AtLeast",
    "Equals",
    "Rounds",
    "Source",
    "Theorem",
    "TheoremError",
    "LogSumExp",
    "ReduceMax",
    "Softmax",
    "entropy",
    "expectation",
    "fully_masked",
    "kl",
    "lse",
    "masked_softmax",
    "rowmax",
    "rowsum",
    "softmax",
]
