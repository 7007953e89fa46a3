"""Rows whose scores the format cannot resolve (all near −1e30 in float32): judged by what holds
whatever the rounding, the kept values' range per feature and the lse interval, which every
other row must meet too; honest kernels, in every dtype, meet them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, check_kernel, proved_tolerance, replay
from attnproof.kernels._cases import instance
from attnproof.kernels._tolerance import (
    HULL_THEOREMS,
    LSE_THEOREMS,
    hull_factor,
    lse_interval,
    unresolved_rows,
    value_hull,
)
from attnproof.kernels._truth import Inputs, condition, truth_lse
from attnproof.symbolic import FLOAT16, FLOAT32

from . import planted

FAR = Case(n_q=2, n_k=3, d_k=1, d_v=2, offset="below:-1e+30", seed=3)
ALL_DTYPES = ("float64", "float32", "float16", "bfloat16")


def _forward_only(kernel):
    """``kernel`` declared without its lse: the output alone is judged."""
    def forward(q, k, v, **keywords):
        return kernel.fn(q, k, v, **keywords)[0]

    return dataclasses.replace(kernel, fn=forward, returns_lse=False, merge=None)


def test_rows_far_below_are_unresolved_by_float32_and_ordinary_rows_are_not():
    far = instance(FAR, FLOAT32, FLOAT32)
    assert unresolved_rows(far, FLOAT32).all()
    # the rule's floor there: 4 ulps of float32 times 1 + |score|, some 10^23 relative
    assert np.all(4 * np.finfo(np.float32).eps * condition(far)["out"] > 1e22)
    near = instance(dataclasses.replace(FAR, offset=None), FLOAT32, FLOAT32)
    assert not unresolved_rows(near, FLOAT32).any()


def test_the_running_max_plant_returns_zeros_there_and_the_rule_alone_let_it_pass():
    """The measured defect: the 2x rule passed these rows at about 10^-25 of its allowance;
    the value range now fails them."""
    kernel = _forward_only(planted.running_max_finite_start)
    x = instance(FAR, FLOAT32, FLOAT32)
    out = kernel.fn(*(a.astype(np.float32) for a in (x.q, x.k, x.v)))
    assert np.all(out == 0)  # no weight at all: exp(s + 1e6) underflows
    result = replay(kernel, "row_offset", "float32", dataclasses.replace(FAR, n_k=1))
    assert result.status == "fail"
    assert result.detail["check"] == "value hull" and not result.detail["resolved"]
    assert all(name in result.message for name in HULL_THEOREMS)
    assert "does not resolve this row's scores" in result.message


@pytest.mark.parametrize("name", ["running_max_finite_start", "far_rows_constant"])
def test_a_kernel_wrong_where_the_scores_are_unresolved_fails_row_offset_in_float32(name):
    cell = check_kernel(getattr(planted, name), properties=["row_offset"],
                        examples=20).cells[0]
    assert cell.status == "fails", cell
    case = Case.from_json(cell.counterexample["case"])
    assert case.n_k <= 16
    x = instance(case, FLOAT32, FLOAT32)  # rows whose scores the format cannot resolve
    assert unresolved_rows(x, FLOAT32).all() and cell.counterexample["resolved"] is False
    theorems = LSE_THEOREMS if cell.counterexample["check"] == "lse interval" else \
        HULL_THEOREMS
    assert all(name in cell.counterexample["message"] for name in theorems)


def test_returning_zeros_there_fails_on_the_output_alone_and_a_clamped_lse_on_the_lse():
    out_only = check_kernel(_forward_only(planted.running_max_finite_start),
                            properties=["row_offset"], examples=20).cells[0]
    assert out_only.status == "fails" and out_only.counterexample["check"] == "value hull"
    both = replay(planted.running_max_finite_start, "row_offset", "float32", FAR)
    assert both.status == "fail" and both.detail["check"] == "lse interval"
    assert both.detail["kept"] == 3 and both.detail["kernel"][0] > -1.1e6  # clamped at −1e6


def test_the_constant_plant_fails_by_the_kept_values_not_by_the_rule():
    result = replay(planted.far_rows_constant, "row_offset", "float32", FAR)
    assert result.status == "fail" and result.detail["check"] == "value hull"
    low, high = result.detail["bounds"]
    assert high < 10 and result.detail["kernel"][0] == planted.CONSTANT
    assert result.detail["excess"] > 100 * result.detail["allowance"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_the_correct_kernel_conforms_where_the_scores_are_unresolved(dtype):
    kernel = dataclasses.replace(planted.correct, dtypes=(dtype,))
    result = check_kernel(kernel, properties=["row_offset", "forward", "fully_masked_rows"],
                          examples=20)
    assert result.ok, [c for c in result.cells if c.status != "conforms"]
    assert {c.status for c in result.cells} == {"conforms"}


# kernels computing every step in a half-precision format, as declared: softmax-then-matmul
# leaves the kept values' range by a rounding or two (measured: 0.17x and 0.20x of the
# allowance, at 2 and 3 kept keys), within it
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_an_honest_kernel_computing_in_half_precision_meets_the_value_range(dtype):
    kernel = planted.precision_kernel(f"{dtype} inside", dtype, dtype, dtype)
    result = check_kernel(kernel, properties=["forward", "row_offset", "mask", "block_lengths",
                                              "gqa"], examples=20)
    assert result.ok, [(c.property, c.counterexample) for c in result.failures()]


def test_the_range_is_over_kept_keys_only_and_widens_with_their_count():
    x = instance(Case(n_q=3, n_k=6, d_k=2, d_v=2, mask="padding", seed=1), FLOAT32, FLOAT32)
    hull = value_hull(x, FLOAT32, FLOAT32)
    masked = ~x.keep[0, 0, 0]
    assert masked.any()
    kept_v = x.v[0, 0][~masked]
    assert np.array_equal(hull.low[0, 0, 0], kept_v.min(axis=0))
    assert np.array_equal(hull.high[0, 0, 0], kept_v.max(axis=0))
    u = 2.0 ** -24
    factors = hull_factor(np.array([1, 16, 1024]), u)
    assert np.all(np.diff(factors) > 0) and factors[0] == pytest.approx(13 * u, rel=1e-6)
    assert np.isinf(hull_factor(np.array([600]), 2.0 ** -11))  # (4n + 9)u ≥ 1: no bound


def test_an_output_outside_the_range_fails_and_one_inside_by_rounding_does_not():
    case = dataclasses.replace(FAR, n_k=1)
    x = instance(case, FLOAT32, FLOAT32)
    hull = value_hull(x, FLOAT32, FLOAT32)
    v = np.repeat(x.v, 1, axis=1)[:, :, :1, :]  # the one kept key's values, every row
    assert np.all(hull.ratio(np.broadcast_to(v, hull.low.shape)) == 0)
    one_ulp = np.broadcast_to(v * (1 + 2.0 ** -23), hull.low.shape)
    assert np.all(hull.ratio(one_ulp) <= 1)  # a rounding: 13 allowed at one key
    assert np.all(hull.ratio(np.zeros_like(hull.low)) > 1e5)


def test_the_lse_interval_follows_the_format_and_holds_an_overflowed_lse():
    x = instance(FAR, FLOAT32, FLOAT32)
    interval = lse_interval(x, FLOAT32, FLOAT32, "numpy")
    truth, _ = truth_lse(x)
    assert np.all(interval.ratio(truth) == 0)  # the truth lies inside, by the statements
    assert np.all(interval.margin < 1e-5 * np.abs(interval.top))  # relative to the scores
    assert np.all(interval.ratio(np.full_like(truth, -1e6)) > 1e5)
    assert np.all(interval.ratio(np.full_like(truth, np.nan)) == np.inf)
    # float16 inputs computed in float32, a row's scores near −7.3e4: its lse lies past
    # float16's range, and −inf, its rounding, is inside; a finite value is not
    half = instance(Case(n_q=2, n_k=2, d_k=1, d_v=1, offset="below:-5e+04", seed=0),
                    FLOAT16, FLOAT32)
    interval = lse_interval(half, FLOAT16, FLOAT32, "numpy")
    past = np.isneginf(interval.low) & np.isneginf(interval.high)
    assert past.any() and not past.all()
    assert np.all(interval.ratio(np.full(past.shape, -np.inf))[past] == 0)
    assert np.all(interval.ratio(np.full(past.shape, -65504.0))[past] == np.inf)


def test_a_users_tolerance_holds_the_output_to_the_kept_values_too():
    x = instance(FAR, FLOAT32, FLOAT32)
    q, k, v = (a.astype(np.float32) for a in (x.q, x.k, x.v))
    tolerance = proved_tolerance(q, k, v)
    tolerance.assert_close(planted.correct.fn(q, k, v)[0])
    with pytest.raises(AssertionError, match="lies outside .* the values of its feature"):
        tolerance.assert_close(planted.far_rows_constant.fn(q, k, v)[0])
    assert "within the values of its feature over the row's kept keys" in str(tolerance)


def test_a_row_that_keeps_no_key_is_left_to_its_convention():
    keep = np.zeros((1, 1, 1, 2), dtype=bool)
    x = Inputs(np.ones((1, 1, 1, 1)), np.ones((1, 1, 2, 1)), np.ones((1, 1, 2, 1)), keep,
               np.zeros((1, 1, 1, 1)), 1.0)
    hull = value_hull(x, FLOAT32, FLOAT32)
    assert hull.kept[0, 0, 0] == 0 and np.isinf(hull.low).all()
