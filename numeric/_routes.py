"""The numeric routes of the claim kinds, registered by kind class.

A module of ``numeric/kinds/`` registers its route with ``@numeric_route(Series)`` on the route
function; :func:`route_for` finds a claim's route through its class's bases, so a subclass of a
registered kind shares its route unless it registers its own. A route is called in a worker as
``route(theorem, where, profile, seed=None)`` and returns its ``Evidence`` (``numeric/kinds/``,
``numeric/_driver.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attnproof.symbolic._kind import Claim

ROUTES: dict[type, Callable] = {}
# called for the evidence of every compiled search in a lower format that would pass or cannot
# decide: ``judge(evidence, theorem, row, dtype, device, false_in_float64=..., profile=...)``
# returns it decided with more than the calibrated tolerance, or annotated, or as it was
# (``numeric/kinds/proved_bound.py``), drawing through the driver's search from
# ``evidence.seed``
FORMAT_JUDGES: list[Callable] = []


def numeric_route(*kinds: type) -> Callable[[Callable], Callable]:
    """Register the decorated function as the numeric route of each class in ``kinds``."""

    def register(route: Callable) -> Callable:
        for kind in kinds:
            if kind in ROUTES and ROUTES[kind] is not route:
                raise ValueError(f"{kind.__name__} already has a numeric route: "
                                 f"{_name(ROUTES[kind])}; it cannot also be {_name(route)}")
            ROUTES[kind] = route
        return route

    return register


def format_judge(judge: Callable) -> Callable:
    """Register the decorated function as a judge of lower-format records (``FORMAT_JUDGES``)."""
    if judge not in FORMAT_JUDGES:
        FORMAT_JUDGES.append(judge)
    return judge


def format_judges() -> list[Callable]:
    """Every registered judge of lower-format records."""
    _load_kinds()
    return list(FORMAT_JUDGES)


def registered_route(kind: type) -> Callable | None:
    """The route registered for ``kind`` or its nearest registered base class, or None."""
    _load_kinds()
    return next((ROUTES[base] for base in kind.__mro__ if base in ROUTES), None)


def route_for(claim: Claim) -> Callable | None:
    """The numeric route of ``claim``'s kind; None for the built-in claims (``Equals``,
    ``AtLeast``, ``Rounds``), which the compiled search checks, and for a kind that declares
    it has none (``has_numeric_route = False``).

    Raises:
        LookupError: a kind declares a numeric route and none is registered for it.
    """
    if not getattr(claim, "has_numeric_route", False):
        return None
    route = registered_route(type(claim))
    if route is None:
        kind = type(claim)
        raise LookupError(f"claim kind {kind.__module__}.{kind.__qualname__} declares a numeric "
                          f"route but none is registered: decorate its route function in "
                          f"numeric/kinds/ with @numeric_route({kind.__name__})")
    return route


def _load_kinds() -> None:
    # The kinds register their routes as they are imported. They are plug-ins that use the
    # search (an existence claim's route runs it), so the search finds them at run time by
    # their package's name, as plug-ins are found: an import statement here would close the
    # loop search -> kinds -> search (tests/packaging/test_import_graph.py).
    importlib.import_module(f"{__package__}.kinds")


def _name(route: Callable) -> str:
    return f"{route.__module__}.{route.__qualname__}"
