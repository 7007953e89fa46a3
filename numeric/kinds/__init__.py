"""Numeric routes of the claim kinds (symbolic/_kind.py), one module per kind.

A route is called in a worker as ``route(theorem, row, dtype, device, mode, profile, record,
seed=None)``: ``row`` is the backend's ``Backend``, ``profile`` a ``Profile``; it fills
``record`` (status, examples, instances, errors, counterexample, reason) and returns nothing.
Each module registers its route by kind class, ``@numeric_route(Series)`` from the toolkit
``numeric/route.py``; importing this package imports every module, so every route is
registered when one is looked up (``numeric/_routes.py``). Modules whose names start with an
underscore are helpers the routes share, not kinds.
"""

from . import (  # noqa: F401  (imported to register their routes)
    code_numbers,
    cost,
    error_bound,
    existence,
    ieee,
    inequality,
    limit,
    linalg,
    permutation,
    proved_bound,
    reshape,
    series,
    statistical,
)
