"""Running sums Σ_{j ≤ i} in every format: a proved identity over causal sums (linear
attention's prefix state against its step recurrence) evaluates in float32, float16 and bfloat16
as in float64, and its false twin is refuted there. The error analysis counts sums over a whole
range of sizes; a sum whose limits depend on an index is outside it, so the low-precision judge
from proved bounds leaves such an equation to the calibrated comparison instead of converting a
count that depends on i to a number."""

import pytest

from attnproof.numeric import check
from attnproof.numeric._backends import backend, unavailable_reason
from attnproof.numeric.kinds.proved_bound import bounded_sides
from attnproof.symbolic.kinds.error_bound import UnsupportedOperation, derive
from tests.planted import causal_linear_attention as planted

TRUE = planted.planted_causal_linear_attention_step_recurrence
FALSE = planted.planted_causal_linear_attention_reads_the_state_too_early


def _available(rows):
    return [(name, dtype) for name, dtype in rows if unavailable_reason(backend(name)) is None]


def test_the_error_analysis_refuses_a_sum_whose_limits_depend_on_an_index():
    dims = {d.name: d.symbol for d in TRUE.dims}
    with pytest.raises(UnsupportedOperation, match="limits depend on an index"):
        derive(planted.prefix(planted.k_feat[planted.j, planted.f], planted.j, planted.i), dims)
    whole = planted.prefix(planted.k_feat[planted.j, planted.f], planted.j, planted.j.upper)
    assert derive(whole, dims).count == planted.length.symbol - 1
    assert bounded_sides(TRUE) is None


@pytest.mark.parametrize(("name", "dtype"), _available(
    [("numpy", "float32"), ("numpy", "float16"), ("numpy", "bfloat16"), ("jax", "float32"),
     ("mlx", "float32")]))
def test_a_proved_causal_identity_passes_in_lower_formats(name, dtype):
    record = check(TRUE, name, dtype, profile="quick")
    assert record.status == "passed", record.reason


@pytest.mark.parametrize(("name", "dtype"), _available(
    [("numpy", "float64"), ("numpy", "float32"), ("jax", "float32")]))
def test_its_false_twin_is_refuted_in_those_formats(name, dtype):
    record = check(FALSE, name, dtype, profile="quick")
    assert record.status == "failed", record.reason
