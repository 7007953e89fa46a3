"""What type checkers and editors see of the lazy packages is what they export at run time.

A package that exports its names lazily (a module ``__getattr__`` over an ``_EXPORTS`` table:
``attnproof.numeric``, ``attnproof.report``; or over ``attnproof.symbolic.__all__``: the root
``attnproof``) names the same names once more in an ``if TYPE_CHECKING:`` block, as explicit
re-exports (``from ._devices import Device as Device``), and defines ``__getattr__`` only in that
block's ``else``, so that a tool reading the source sees exactly the exported names. Checked here
by parsing the sources, so the two lists cannot drift: same names, from the same modules, under
the same attributes. A package that exports a name under another name than its own
(``profile_timeout``, or a module) also writes ``__all__`` out, which tools read as the list of
its exports; it holds the names of ``_EXPORTS``, in order.
"""

from __future__ import annotations

import ast
import importlib
import os
from pathlib import Path

import pytest

import attnproof

PACKAGE = Path(attnproof.__file__).parent
# the lazy packages without an _EXPORTS table of their own: the package whose __all__ they export
DELEGATED = {"attnproof": "attnproof.symbolic"}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _type_checking_block(tree: ast.Module) -> ast.If | None:
    return next((node for node in tree.body
                 if isinstance(node, ast.If) and _is_type_checking(node.test)), None)


def _defines_getattr(statements) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
               for node in statements)


def lazy_packages(root: Path = PACKAGE) -> dict[str, Path]:
    """Every package under ``root`` (the linked layers followed) whose ``__init__.py`` defines a
    module ``__getattr__``, at its top level or in an ``if`` there."""
    found = {}
    for folder, _, names in os.walk(root, followlinks=True):
        if "__init__.py" not in names:
            continue
        path = Path(folder) / "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        branches = [node.body + node.orelse for node in tree.body if isinstance(node, ast.If)]
        if _defines_getattr(tree.body) or any(_defines_getattr(b) for b in branches):
            parts = Path(folder).relative_to(root).parts
            found[".".join((root.name, *parts))] = path
    return found


def type_checking_exports(tree: ast.Module) -> tuple[dict[str, tuple[str, str | None]], list[str]]:
    """The ``TYPE_CHECKING`` block's names, as ``_EXPORTS`` writes them (public name -> (module,
    its name there), None for a module itself), and what in the block is not such a re-export."""
    block = _type_checking_block(tree)
    names, problems = {}, []
    for node in block.body if block else ():
        if not (isinstance(node, ast.ImportFrom) and node.level == 1):
            problems.append(f"line {node.lineno}: not a relative `from` import")
            continue
        for alias in node.names:
            if alias.asname is None:
                problems.append(f"line {node.lineno}: {alias.name} without `as` (write "
                                f"`{alias.name} as {alias.name}`, an explicit re-export)")
            elif alias.asname in names:
                problems.append(f"line {node.lineno}: {alias.asname} imported twice")
            names[alias.asname or alias.name] = ((node.module, alias.name) if node.module
                                                 else (alias.name, None))
    return names, problems


def _assigned(tree: ast.Module, name: str) -> ast.expr | None:
    return next((node.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)), None)


def export_problems(source: str, delegated: tuple[str, list[str]] | None = None) -> list[str]:
    """How a lazy package's ``TYPE_CHECKING`` block (and ``__getattr__``, and ``__all__``) differ
    from what it exports at run time: its ``_EXPORTS``, or for a package that delegates,
    ``delegated``: (the subpackage its ``__getattr__`` imports, that subpackage's ``__all__``),
    every name re-exported as is."""
    tree = ast.parse(source)
    block = _type_checking_block(tree)
    if block is None:
        return ["no `if TYPE_CHECKING:` block"]
    problems = []
    if _defines_getattr(tree.body) or _defines_getattr(block.body):
        problems.append("__getattr__ is defined where type checkers see it (every name would "
                        "resolve); define it in the `else:` of the TYPE_CHECKING block")
    seen, block_problems = type_checking_exports(tree)
    problems += block_problems
    if delegated is not None:
        module, names = delegated
        wanted = {name: (module, name) for name in names}
    elif (table := _assigned(tree, "_EXPORTS")) is not None:
        wanted = ast.literal_eval(table)
        wanted = {name: tuple(value) for name, value in wanted.items()}
    else:
        return [*problems, "no _EXPORTS table"]
    for name in sorted(wanted.keys() - seen.keys()):
        problems.append(f"{name} is exported but not in the TYPE_CHECKING block")
    for name in sorted(seen.keys() - wanted.keys()):
        problems.append(f"{name} is in the TYPE_CHECKING block but not exported")
    for name in sorted(wanted.keys() & seen.keys()):
        if wanted[name] != seen[name]:
            problems.append(f"{name}: exported as {wanted[name]}, the TYPE_CHECKING block "
                            f"imports {seen[name]}")
    renamed = [name for name, (module, attribute) in wanted.items() if attribute != name]
    written = _assigned(tree, "__all__")
    if isinstance(written, ast.List):
        if ast.literal_eval(written) != list(wanted):
            problems.append("__all__ is not the names of _EXPORTS, in their order")
    elif renamed:
        problems.append(f"{', '.join(renamed)} exported under another name than their own: "
                        "write __all__ out, so that tools count them as exported")
    return problems


LAZY = lazy_packages()


def test_the_lazy_packages_are_found():
    assert {"attnproof", "attnproof.numeric", "attnproof.report"} <= set(LAZY)


@pytest.mark.parametrize("package", sorted(LAZY))
def test_type_checkers_see_what_a_lazy_package_exports(package):
    source = LAZY[package].read_text(encoding="utf-8")
    delegated = None
    if package in DELEGATED:
        module = DELEGATED[package].rsplit(".", 1)[1]
        assert f'importlib.import_module(".{module}", __name__)' in source  # what it delegates to
        delegated = (module, list(importlib.import_module(DELEGATED[package]).__all__))
    problems = export_problems(source, delegated)
    assert not problems, f"{LAZY[package].relative_to(PACKAGE.parent)}:\n  " + "\n  ".join(
        problems)


def test_the_export_check_names_each_way_of_drifting():
    source = '''
from typing import TYPE_CHECKING
_EXPORTS = {"Device": ("_devices", "Device"), "check": ("_search", "check"),
             "profile_timeout": ("_profiles", "timeout"), "devices": ("_devices", None)}
__all__ = list(_EXPORTS)
if TYPE_CHECKING:
    from . import _devices as devices
    from ._devices import Device
    from ._plan import check as check
    from ._profiles import profile as profile_timeout
    from ._record import NumericRecord as NumericRecord
def __getattr__(name): ...
'''
    assert export_problems(source) == [
        "__getattr__ is defined where type checkers see it (every name would resolve); "
        "define it in the `else:` of the TYPE_CHECKING block",
        "line 8: Device without `as` (write `Device as Device`, an explicit re-export)",
        "NumericRecord is in the TYPE_CHECKING block but not exported",
        "check: exported as ('_search', 'check'), the TYPE_CHECKING block imports "
        "('_plan', 'check')",
        "profile_timeout: exported as ('_profiles', 'timeout'), the TYPE_CHECKING block "
        "imports ('_profiles', 'profile')",
        "profile_timeout, devices exported under another name than their own: write __all__ "
        "out, so that tools count them as exported",
    ]
    assert export_problems("def __getattr__(name): ...\n") == ["no `if TYPE_CHECKING:` block"]
    delegating = '''
if TYPE_CHECKING:
    from .symbolic import Dim as Dim
    from .symbolic import Theorem as Theorem
else:
    def __getattr__(name): ...
'''
    assert export_problems(delegating, ("symbolic", ["Dim", "Theorem"])) == []
    assert export_problems(delegating, ("symbolic", ["Dim", "Theorem", "Tensor"])) == [
        "Tensor is exported but not in the TYPE_CHECKING block"]
    assert export_problems(delegating, ("numeric", ["Dim", "Theorem"])) == [
        "Dim: exported as ('numeric', 'Dim'), the TYPE_CHECKING block imports "
        "('symbolic', 'Dim')",
        "Theorem: exported as ('numeric', 'Theorem'), the TYPE_CHECKING block imports "
        "('symbolic', 'Theorem')"]
