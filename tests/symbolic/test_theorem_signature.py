"""The constructor the type checker reads for ``Theorem`` is the one the dataclass writes.

``Theorem`` declares its ``__init__`` under ``TYPE_CHECKING`` (so that ``inputs`` may list a
Dim, as declarations do); nothing runs it, so only this test keeps its parameters, their order,
defaults and types in step with the dataclass's fields.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect

from attnproof.symbolic import Theorem, _theorem

# the one parameter whose type is wider than its field's, and why: a Dim among the inputs
# moves to ``dimensions`` when the theorem is made
WIDER = {"inputs": ("tuple[Tensor | Scalar, ...]", "tuple[Tensor | Scalar | Dim, ...]")}


def _declared_init() -> ast.FunctionDef:
    tree = ast.parse(inspect.getsource(_theorem))
    theorem = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Theorem")
    guarded = [n for n in theorem.body if isinstance(n, ast.If)
               and ast.unparse(n.test) == "TYPE_CHECKING"]
    return next(n for block in guarded for n in block.body
                if isinstance(n, ast.FunctionDef) and n.name == "__init__")


def test_the_declared_constructor_has_the_fields_in_order_with_their_defaults():
    declared = _declared_init().args
    names = [a.arg for a in declared.args][1:]  # without self
    fields = [f for f in dataclasses.fields(Theorem) if f.init]
    assert names == [f.name for f in fields]
    defaults = dict(zip(names[len(names) - len(declared.defaults):],
                        (ast.literal_eval(d) for d in declared.defaults), strict=True))
    for f in fields:
        if f.default is dataclasses.MISSING:
            assert f.name not in defaults, f.name
        else:
            assert defaults[f.name] == f.default, f.name


def test_the_declared_constructor_types_each_parameter_as_its_field_but_inputs():
    declared = {a.arg: ast.unparse(a.annotation) for a in _declared_init().args.args[1:]}
    for f in dataclasses.fields(Theorem):
        field_type, parameter_type = WIDER.get(f.name, (f.type, f.type))
        assert f.type == field_type, f.name
        assert declared[f.name] == parameter_type, f.name
