"""A kernel property is one row of ``_properties.PROPERTIES``: the checker asks nothing else of a
property than the row's fields, so a new one needs no change anywhere else.

Shown with a property this repository does not have, added here as one row: a call repeated on
the same inputs returns the same outputs (within what the rule allows). A planted kernel that
adds a little noise at each call fails it, the correct kernel conforms.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from attnproof.kernels import _properties, check_kernel
from attnproof.kernels._call import call
from attnproof.kernels._cases import cases
from attnproof.kernels._properties import Property
from attnproof.kernels._shapes import kind

from . import planted

KERNELS = Path(_properties.__file__).parent


def _called_again(kernel, fw, x, case, dtype, device, outputs):
    return call(kernel, fw, x, case, dtype, device, outputs)


REPEATABLE = Property("repeatable", "a call repeated on the same inputs returns the same",
                      lambda k: cases(where=kind(n_k=(2, 8))), lambda k: ("out",),
                      run_beside=_called_again)


@pytest.fixture
def with_repeatable(monkeypatch):
    monkeypatch.setattr(_properties, "PROPERTIES", (*_properties.PROPERTIES, REPEATABLE))


def _noisy(q, k, v, **keywords):
    """Right to a few parts in 10³, differently at every call: a race in a reduction, say."""
    out, lse = planted.attention(q, k, v, **keywords)
    noise = 1 + 1e-3 * np.random.default_rng().standard_normal(out.shape)
    return (out * noise).astype(q.dtype), lse


def test_a_new_property_is_one_row(with_repeatable):
    correct = check_kernel(planted.correct, properties=["repeatable"], examples=8)
    assert correct.cell("repeatable", "float32").status == "conforms"
    noisy = dataclasses.replace(planted.correct, name="noisy", fn=_noisy)
    failed = check_kernel(noisy, properties=["repeatable"], examples=8)
    cell = failed.cell("repeatable", "float32")
    assert cell.status == "fails" and cell.replay, cell.reason


def test_no_module_of_the_checker_asks_which_property_it_runs():
    asked = []
    for path in sorted(KERNELS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) \
                    and isinstance(node.left.value, ast.Name) \
                    and node.left.value.id in ("prop", "property") \
                    and node.left.attr in ("name", "kind"):
                asked.append(f"{path.name}:{node.lineno}")
    assert asked == []


def test_every_row_names_only_fields_the_runner_reads():
    fields = {f.name for f in dataclasses.fields(Property)}
    assert "kind" not in fields
    for prop in _properties.PROPERTIES:
        assert prop.plain().run_beside is None and prop.plain().outputs_instead is None
