"""Numeric routes of the claim kinds (symbolic/_kind.py), one module per kind.

A route is called in a worker as ``route(theorem, row, dtype, device, mode, profile, record,
seed=None)``: ``row`` is the backend's ``Backend``, ``profile`` a ``Profile``; it fills
``record`` (status, examples, instances, errors, counterexample, reason) and returns nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def numeric_route(claim) -> Callable | None:
    """The numeric route a claim kind names (``"module:function"``), or None for the built-in
    claims, which the compiled search checks."""
    path = getattr(claim, "numeric_route", None)
    if not path:
        return None
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)
