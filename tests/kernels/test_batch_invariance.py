"""Bitwise batch invariance, for a kernel that declares it: each element of a batch the same to
the bit as itself run alone. Planted as split-KV kernels (``planted_splits``) that differ only
in how many splits they run: a fixed count conforms; a count chosen from the batch size fails
``batch_invariance`` and no other property, and where it does so only past 128 keys, only the
property's decode cases reach it (drawn batches have at most 17 keys: 0 of 11 seeds without
them, 11 of 11 with)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import _properties, check_kernel
from attnproof.kernels._check import precision_left_out
from attnproof.kernels._run import bitwise_apart

from . import planted, planted_splits

EXAMPLES = 20
BATCH_DEPENDENT = ("splits_by_batch", "long_splits_by_batch")


def _cell(kernel, seed=None, dtype="float32"):
    return check_kernel(kernel, properties=["batch_invariance"], dtypes=[dtype],
                        examples=EXAMPLES, seed=seed).cells[0]


@pytest.mark.parametrize("name", BATCH_DEPENDENT)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_split_count_chosen_by_the_batch_size_fails_batch_invariance(name, dtype):
    cell = _cell(getattr(planted_splits, name), dtype=dtype)
    assert cell.status == "fails", cell
    example = cell.counterexample
    assert "is not the same to the bit as the element run alone" in example["message"]
    assert example["batched"] != example["alone"]
    # a promise of sameness broken is no measure of precision
    assert example["mechanism"]["values"] == "bits"
    assert precision_left_out(cell) is not None


@pytest.mark.parametrize("name", ["fixed_splits", *BATCH_DEPENDENT])
def test_each_split_kernel_fails_batch_invariance_alone_and_the_fixed_count_nothing(name):
    result = check_kernel(getattr(planted_splits, name), examples=EXAMPLES)
    failing = sorted({c.property for c in result.cells if c.status not in ("conforms", "n/a")})
    assert failing == ([] if name == "fixed_splits" else ["batch_invariance"])
    decided = [c for c in result.cells if c.property == "batch_invariance"]
    assert decided and all(c.status != "n/a" for c in decided)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_drawn_batches_alone_catch_a_split_count_chosen_by_the_batch(monkeypatch, seed):
    rows = tuple(dataclasses.replace(row, explicit=()) if row.name == "batch_invariance"
                 else row for row in _properties.PROPERTIES)
    monkeypatch.setattr(_properties, "PROPERTIES", rows)
    assert _cell(planted_splits.splits_by_batch, seed).status == "fails"
    assert _cell(planted_splits.long_splits_by_batch, seed).status == "conforms"  # > 17 keys
    assert _cell(planted_splits.fixed_splits, seed).status == "conforms"


def test_a_kernel_that_does_not_declare_it_is_not_held_to_it():
    cell = check_kernel(planted.correct, properties=["batch_invariance"],
                        examples=EXAMPLES).cells[0]
    assert cell.status == "n/a" and "batch invariance not declared" in cell.reason
    undeclared = dataclasses.replace(planted_splits.splits_by_batch, batch_invariant=False)
    assert _cell(undeclared).status == "n/a"


def test_every_case_has_two_elements_or_more_and_values_that_swamp():
    seen = []
    check_kernel(planted_splits.fixed_splits, properties=["batch_invariance"],
                 dtypes=["float32"], examples=EXAMPLES,
                 on_case=lambda case, dtype: seen.append(case))
    assert seen and all(case.batch >= 2 and case.fill == "swamping" for case in seen)
    assert any(case.n_q == 1 and case.n_k > 128 for case in seen)  # decode, first


def test_sameness_is_to_the_bit_with_nan_for_nan_and_one_zero():
    value = np.array([[[[1.0, np.nan, 0.0]]], [[[2.0, 3.0, -0.0]]]], dtype=np.float32)
    assert bitwise_apart({"out": value}, {"out": value.copy()}, ("out",)) is None
    signed = value.copy()
    signed[1, 0, 0, 2] = 0.0
    assert bitwise_apart({"out": value}, {"out": signed}, ("out",)) is None
    one_ulp = value.copy()
    one_ulp[1, 0, 0, 1] = np.nextafter(np.float32(3.0), np.float32(4.0))
    found = bitwise_apart({"out": value}, {"out": one_ulp}, ("out",))
    assert found is not None and found.status == "fail"
    assert found.detail["at"] == [1, 0, 0, 1] and found.detail["entries_differing"] == 1
    assert "out of batch element 1" in found.message
    assert found.detail["difference"] == pytest.approx(2.0 ** -22)
    nan_beside = value.copy()
    nan_beside[0, 0, 0, 0] = np.nan  # the only entry that differs is NaN beside 1.0
    found = bitwise_apart({"out": value}, {"out": nan_beside}, ("out",))
    assert found is not None and found.detail["difference"] == np.inf
