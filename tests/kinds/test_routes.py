"""Numeric routes are registered by kind class: every claim kind that says it has one resolves
to a callable, and every registration belongs to such a kind."""

from __future__ import annotations

import inspect

import pytest

from attnproof.numeric import _routes
from attnproof.numeric._routes import ROUTES, numeric_route, registered_route, route_for
from attnproof.symbolic import ClaimKind, Equals


def _kinds(base=ClaimKind) -> set[type]:
    found = set()
    for kind in base.__subclasses__():
        found |= {kind} | _kinds(kind)
    return found


PUBLIC_KINDS = sorted((k for k in _kinds() if not k.__name__.startswith("_")
                       and k.__module__.startswith("attnproof.symbolic.kinds.")),
                      key=lambda k: k.__name__)


def test_the_language_has_kinds_to_check():
    assert len(PUBLIC_KINDS) >= 15


@pytest.mark.parametrize("kind", PUBLIC_KINDS, ids=lambda k: k.__name__)
def test_a_kind_with_a_numeric_route_resolves_to_a_callable(kind):
    if not kind.has_numeric_route:
        pytest.skip(f"{kind.__name__} declares no numeric route")
    route = registered_route(kind)
    assert callable(route)
    assert route.__module__ == kind.__module__.replace(".symbolic.", ".numeric.")
    assert list(inspect.signature(route).parameters) == [
        "theorem", "row", "dtype", "device", "mode", "profile", "record", "seed"]


def test_every_registration_belongs_to_a_kind_with_a_numeric_route():
    registered_route(ClaimKind)  # loads the kinds' modules
    assert ROUTES
    for kind in ROUTES:
        assert issubclass(kind, ClaimKind) and kind.has_numeric_route, kind


class _Unregistered(ClaimKind):
    pass


class _WithoutRoute(ClaimKind):
    has_numeric_route = False


def test_a_kind_without_a_registered_route_is_named():
    with pytest.raises(LookupError, match=r"_Unregistered.*@numeric_route\(_Unregistered\)"):
        route_for(_Unregistered())


def test_built_in_claims_and_kinds_without_a_route_have_none():
    assert route_for(Equals(0, 0)) is None
    assert route_for(_WithoutRoute()) is None


def test_a_subclass_shares_its_base_kinds_route_and_a_kind_has_one_route(monkeypatch):
    monkeypatch.setattr(_routes, "ROUTES", {})

    def first(theorem, row, dtype, device, mode, profile, record, seed=None): ...

    def second(theorem, row, dtype, device, mode, profile, record, seed=None): ...

    numeric_route(_Unregistered)(first)
    numeric_route(_Unregistered)(first)  # the same function again: no conflict
    assert route_for(type("Sub", (_Unregistered,), {})()) is first
    with pytest.raises(ValueError, match="already has a numeric route"):
        numeric_route(_Unregistered)(second)
