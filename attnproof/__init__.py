"""attnproof: a symbolic-plus-numeric proof checker for the mathematics of transformer attention.

The statement language is re-exported here, so a theorem file needs one import::

    from attnproof import Dim, Equals, Source, Tensor, Theorem, softmax

Importing this package imports SymPy, never an array backend; numeric checks run in worker
processes and load their backends there. It sets JAX's GPU allocator to allocate on demand
(``XLA_PYTHON_CLIENT_PREALLOCATE=false``, unless the variable is set already), so that the
workers can share a GPU.
"""

import importlib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from .numeric._devices import share_accelerators

# before any backend initialises in this process or the workers it starts: several processes
# share one GPU, so none of them may preallocate most of its memory
share_accelerators()

try:
    __version__ = _version("attnproof")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str):
    """The language's names (``attnproof.Theorem``, ``__all__``), imported on first use, so
    that ``attnproof`` itself starts fast and the command can catch an early Ctrl-C."""
    language = importlib.import_module(".symbolic", __name__)
    if name == "__all__":
        return [*language.__all__, "__version__"]
    if name in language.__all__:
        value = getattr(language, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__getattr__("__all__")})
