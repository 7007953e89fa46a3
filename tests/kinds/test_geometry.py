"""Geometry claims (tutorial (27)): Christoffel symbols as identities with derivatives along the
coordinates. A constant metric's vanish for all sizes; a varying metric's do not, and both the
exact refutation and the numeric routes (NumPy's compiled derivative, JAX's autodiff) say so."""

import importlib.util
from pathlib import Path

import pytest

from attnproof.numeric._search import check
from attnproof.symbolic import prove

PLANTED = Path(__file__).resolve().parents[1] / "planted" / "kinds_geometry.py"
spec = importlib.util.spec_from_file_location("planted_kinds_geometry", PLANTED)
planted = importlib.util.module_from_spec(spec)
spec.loader.exec_module(planted)

VARYING = planted.planted_christoffel_vanish_for_varying_metric
CONSTANT = planted.planted_christoffel_vanish_for_constant_metric


def test_a_constant_metric_has_vanishing_christoffel_symbols_for_all_sizes():
    result = prove(CONSTANT)
    assert result.status == "proved" and "all sizes" in result.method


def test_a_varying_metric_is_refuted_with_an_exact_counterexample():
    result = prove(VARYING)
    assert result.status == "refuted" and result.counterexample


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_the_numeric_routes_fail_the_varying_metric_and_pass_the_constant(backend):
    if backend == "jax":
        pytest.importorskip("jax")
    assert check(VARYING, backend, "float64").status == "failed"
    assert check(CONSTANT, backend, "float64").status == "passed"
