"""attnproof: a symbolic-plus-numeric proof checker for the mathematics of transformer attention.

The statement language is re-exported here, so a theorem file needs one import::

    from attnproof import Dim, Equals, Source, Tensor, Theorem, softmax

Importing this package imports SymPy, never an array backend; numeric checks run in worker
processes and load their backends there.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from .symbolic import *  # noqa: F403  (the language's public names, listed in its __all__)
from .symbolic import __all__ as _language

try:
    __version__ = _version("attnproof")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [*_language, "__version__"]
