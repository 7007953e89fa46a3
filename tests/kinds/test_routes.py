"""Numeric routes are registered by kind class: every claim kind the language exports that says
it has one resolves to a callable, and every registration belongs to such a kind.

Adding a kind is its two modules (``symbolic/kinds/X.py``, ``numeric/kinds/X.py``) and its
export from ``symbolic/__init__.py``: ``numeric/kinds/`` imports every module of its folder
itself, and a kind the language defines but does not export is named here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
import sys
from pathlib import Path

import pytest

import attnproof.numeric.kinds as numeric_kinds
import attnproof.symbolic as language
import attnproof.symbolic.kinds as symbolic_kinds
from attnproof.numeric import _routes
from attnproof.numeric._routes import ROUTES, numeric_route, registered_route, route_for
from attnproof.symbolic import ClaimKind, Equals


def _exported_kinds() -> list[type]:
    exported = (getattr(language, name) for name in language.__all__)
    return sorted((value for value in exported if inspect.isclass(value)
                   and issubclass(value, ClaimKind) and value is not ClaimKind),
                  key=lambda kind: kind.__name__)


def _module_names(package) -> list[str]:
    """The modules of ``package``'s folder whose names do not start with an underscore."""
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__)
                  if not info.name.startswith("_"))


def _defined_kinds() -> list[type]:
    """Every public kind class defined in a module of ``symbolic/kinds/``."""
    found = []
    for name in _module_names(symbolic_kinds):
        module = importlib.import_module(f"{symbolic_kinds.__name__}.{name}")
        found += [value for key, value in vars(module).items()
                  if not key.startswith("_") and inspect.isclass(value)
                  and issubclass(value, ClaimKind) and value.__module__ == module.__name__]
    return found


PUBLIC_KINDS = _exported_kinds()


def test_the_language_has_kinds_to_check():
    assert len(PUBLIC_KINDS) >= 15


def test_every_kind_the_language_defines_is_exported():
    defined = {kind.__name__ for kind in _defined_kinds()}
    assert len(defined) >= 15
    missing = defined - set(language.__all__)
    assert not missing, (f"kinds defined in symbolic/kinds/ but not exported from "
                         f"symbolic/__init__.py: {sorted(missing)}")


def test_the_numeric_kinds_package_imports_every_module_of_its_folder():
    on_disk = sorted(path.stem for path in Path(numeric_kinds.__file__).parent.glob("*.py")
                     if not path.stem.startswith("_"))
    imported = [module.__name__.rsplit(".", 1)[-1] for module in numeric_kinds.KIND_MODULES]
    assert imported == on_disk
    assert all(f"{numeric_kinds.__name__}.{name}" in sys.modules for name in on_disk)


class _DroppedIn(ClaimKind):
    pass


DROPPED_IN_ROUTE = """
from attnproof.numeric.route import numeric_route
from tests.kinds.test_routes import _DroppedIn


@numeric_route(_DroppedIn)
def check(theorem, where, profile, seed=None):
    return "dropped in"
"""


def test_a_module_dropped_into_the_folder_registers_its_route(tmp_path, monkeypatch):
    # a copy of numeric/kinds/__init__.py, unedited, beside one new module and one helper
    package = tmp_path / "dropped_kinds"
    package.mkdir()
    shutil.copy(numeric_kinds.__file__, package / "__init__.py")
    (package / "new_kind.py").write_text(DROPPED_IN_ROUTE, encoding="utf-8")
    (package / "_helper.py").write_text("raise ImportError('a helper is not a kind')\n",
                                        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_routes, "ROUTES", {})
    monkeypatch.delitem(sys.modules, "dropped_kinds", raising=False)
    monkeypatch.delitem(sys.modules, "dropped_kinds.new_kind", raising=False)
    try:
        dropped = importlib.import_module("dropped_kinds")
        assert [module.__name__ for module in dropped.KIND_MODULES] == ["dropped_kinds.new_kind"]
        assert route_for(_DroppedIn()) is dropped.KIND_MODULES[0].check
    finally:
        sys.modules.pop("dropped_kinds", None)
        sys.modules.pop("dropped_kinds.new_kind", None)


@pytest.mark.parametrize("kind", PUBLIC_KINDS, ids=lambda k: k.__name__)
def test_a_kind_with_a_numeric_route_resolves_to_a_callable(kind):
    if not kind.has_numeric_route:
        pytest.skip(f"{kind.__name__} declares no numeric route")
    route = registered_route(kind)
    assert callable(route)
    assert route.__module__ == kind.__module__.replace(".symbolic.", ".numeric.")
    assert list(inspect.signature(route).parameters) == ["theorem", "where", "profile", "seed"]


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

    def first(theorem, where, profile, seed=None): ...

    def second(theorem, where, profile, seed=None): ...

    numeric_route(_Unregistered)(first)
    numeric_route(_Unregistered)(first)  # the same function again: no conflict
    assert route_for(type("Sub", (_Unregistered,), {})()) is first
    with pytest.raises(ValueError, match="already has a numeric route"):
        numeric_route(_Unregistered)(second)
