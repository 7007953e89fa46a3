"""An ``implementation=`` that returns the wrong shape, or nothing, is reported as its own
fault, with the shape expected and the shape it returned."""

import dataclasses

import pytest
from sample_theorems import flash

from attnproof.numeric import check


def _checked(implementation):
    theorem = dataclasses.replace(flash, implementation=implementation)
    return check(theorem, "numpy", "float64", "cpu", "eager", profile="quick")


@pytest.mark.parametrize(("implementation", "got"), [
    (lambda xp, Q, K, V, B: None, "returned a NoneType"),
    (lambda xp, Q, K, V, B: Q[:, :, :1] * 0, "returned shape ("),
    (lambda xp, Q, K, V, B: V.sum(), "returned shape ()"),
], ids=["none", "wrong-shape", "scalar"])
def test_a_wrong_implementation_is_blamed_by_name_with_both_shapes(implementation, got):
    record = _checked(implementation)
    assert record.status == "error"
    message = record.reason
    assert message.startswith(
        "ImplementationError: theorem 'flash_attention': implementation <lambda> " + got)
    assert "expected an array of shape (" in message and "(batch, n_q, d_v)" in message
