"""Numeric routes of the claim kinds (symbolic/_kind.py), one module per kind.

A route is called in a worker as ``route(theorem, where, profile, seed=None)``: ``where`` is
the configuration (``Where``: the backend's row, dtype, device, mode), ``profile`` a
``Profile``; it returns the ``Evidence`` it saw (counts, worst error, a failure, or why it
cannot decide), and the driver (``numeric/_driver.py``) settles the record from it.
Each module registers its route by kind class, ``@numeric_route(Series)`` from the toolkit
``numeric/route.py``; importing this package imports every module of its folder, so every route
is registered when one is looked up (``numeric/_routes.py``) and a new kind's module needs no
line here. Modules whose names start with an underscore are helpers the routes share, not
kinds: they are imported by the routes that use them.
"""

import importlib
import pkgutil


def _kind_module_names() -> list[str]:
    """The kinds' modules of this folder, in sorted order so that registration (and so any
    conflict it reports) is the same on every machine."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


KIND_MODULES = tuple(importlib.import_module(f"{__name__}.{name}")
                     for name in _kind_module_names())
