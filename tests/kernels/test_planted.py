"""The kernel check must catch every planted bug, each at its property, with a small shrunk
counterexample, and must pass the correct kernel everywhere (no false alarm)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnproof.kernels import Case, check_kernel
from attnproof.kernels._truth import Inputs, truth

from . import planted

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

EXAMPLES = 20


def _gaussian(shape=(1, 2, 8, 8, 4), seed=0) -> Inputs:
    b, h, n_q, n_k, d = shape
    rng = np.random.default_rng(seed)
    q, k, v, g = (rng.standard_normal(s) for s in ((b, h, n_q, d), (b, h, n_k, d),
                                                   (b, h, n_k, d), (b, h, n_q, d)))
    return Inputs(q, k, v, np.ones((b, h, n_q, n_k), dtype=bool), g, d ** -0.5)


@pytest.mark.parametrize("name", sorted(planted.PLANTED))
def test_planted_kernel_is_correct_on_gaussian_inputs_at_a_fixed_shape(name):
    x = _gaussian()
    kernel = getattr(planted, name)
    out, _ = kernel.fn(*(a.astype(np.float32) for a in (x.q, x.k, x.v)))
    np.testing.assert_allclose(out, truth(x, ("out",))["out"][0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(planted.PLANTED))
def test_planted_bug_is_caught_at_its_property_with_a_small_counterexample(name):
    prop, most_keys = planted.PLANTED[name]
    cell = check_kernel(getattr(planted, name), properties=[prop], examples=EXAMPLES,
                        spec=f"tests.kernels.planted:{name}").cells[0]
    assert cell.status == "fails", cell
    case = Case.from_json(cell.counterexample["case"])
    assert case.n_k <= most_keys, case
    assert cell.replay.startswith(f"attnproof kernels --kernel tests.kernels.planted:{name} "
                                  f"--property {prop} --dtype float32")
    assert json.loads(cell.replay.split("--case ")[1].strip("'")) == json.loads(case.to_json())


def test_the_correct_kernel_conforms_in_every_property():
    result = check_kernel(planted.correct, examples=EXAMPLES)
    assert result.ok, [c for c in result.cells if c.status != "conforms"]
    checked = [c for c in result.cells if c.property != "score_mod"]  # it declares none
    assert {c.status for c in checked} == {"conforms"}
    assert result.cell("score_mod", "float32").status == "n/a"
    assert all(c.decided >= 3 and c.ratio <= 2 for c in checked)
    conventions = {k: v for c in result.cells for k, v in c.conventions.items()}
    assert conventions == {"fully_masked": "zeros", "fully_masked_lse": "-inf",
                           "causal_alignment": "lower_right"}
