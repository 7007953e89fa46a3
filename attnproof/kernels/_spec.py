"""A kernel named by its spec: a library kernel's name, or ``module:attribute``; one reading for
the command, its workers and the pytest plugin."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
import traceback

from ._declaration import Kernel
from .library import LIBRARY


def load(spec: str) -> Kernel:
    """A library kernel by name, or the Kernel at ``module:attribute``."""
    if spec in LIBRARY:
        return LIBRARY[spec]()
    module, _, attribute = spec.partition(":")
    if not attribute:
        close = difflib.get_close_matches(spec, list(LIBRARY), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(f"{spec!r} is neither a library kernel nor module:attribute; {hint}"
                         f"(library kernels: {', '.join(LIBRARY)})")
    # as `python -m` and pytest do: a module in the current folder is found without PYTHONPATH
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != module and not module.startswith(f"{error.name}."):
            raise ImportError(_raised_at_import(spec, module, error)) from None  # a dependency
        raise ImportError(f"{spec}: no module named {error.name!r} (looked in the current "
                          "folder and the installed packages)") from None
    except (Exception, SystemExit) as error:  # the module's own code failed as it was imported
        raise ImportError(_raised_at_import(spec, module, error)) from None
    if not hasattr(found, attribute):
        raise AttributeError(f"{spec}: module {module!r} ({getattr(found, '__file__', '')}) "
                             f"has no attribute {attribute!r}")
    kernel = getattr(found, attribute)
    if not isinstance(kernel, Kernel):
        raise TypeError(f"{spec} is a {type(kernel).__name__}, not an attnproof Kernel")
    return kernel


def _raised_at_import(spec: str, module: str, error: BaseException) -> str:
    """One line: what importing ``module`` raised, and the line that raised it."""
    message = error.msg if isinstance(error, SyntaxError) else str(error).strip()
    said = type(error).__name__ + (f": {message.splitlines()[0]}" if message else "")
    where = _where_raised(error)
    return f"{spec}: importing module {module!r} raised {said}" + (f" at {where}" if where else "")


def _where_raised(error: BaseException) -> str | None:
    """``file:line`` of the code that raised ``error``: a syntax error's own, else the last
    frame that is not the import machinery's."""
    if isinstance(error, SyntaxError):
        return f"{error.filename}:{error.lineno}" if error.filename else None
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith("<frozen ")]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None
