"""Packed sequences by segment ids: a kernel that takes a batch of one and each token's
sequence id is checked in every property (its batch's elements as sequences of one length,
each its own segment) and, by ``packed_sequences``, on sequences of several lengths, empty
ones and padding, each sequence judged against its own attention.

Planted (``planted_segments``): a correct kernel conforms in every property; one that drops
the ids, one that lets every query attend the padding, one that compares ids in 8 bits and one
that reads the keys' ids from the queries' array each fail ``packed_sequences``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, KernelError, _properties, check_kernel
from attnproof.kernels._packed import (
    PADDING_SEGMENT,
    SEGMENT_GAPS,
    SLACK_DEFAULT,
    Packing,
    packing_of,
)
from attnproof.kernels._properties import by_name

from . import planted_segments
from ._cells import every_case_holds, not_conforming, one_cell


def _cell(kernel, seed=None):
    return one_cell(kernel, "packed_sequences", seed)


def test_the_correct_segment_kernel_conforms_in_every_property():
    result = check_kernel(planted_segments.correct, examples=10)
    assert not not_conforming(result)
    assert result.cell("packed_sequences", "float32").status == "conforms"
    assert result.cell("nq_ne_nk", "float32").status == "conforms"


@pytest.mark.parametrize("name", planted_segments.DEFECTS)
def test_each_planted_segment_defect_fails_packed_sequences(name):
    cell = _cell(planted_segments.PLANTED[name])
    assert cell.status == "fails", cell.reason
    assert cell.counterexample["message"].startswith("sequence ")


@pytest.mark.parametrize("seed", [1, 2])
def test_each_defect_is_found_by_the_draws_alone(monkeypatch, seed):
    rows = tuple(dataclasses.replace(row, explicit=()) if row.name == "packed_sequences"
                 else row for row in _properties.PROPERTIES)
    monkeypatch.setattr(_properties, "PROPERTIES", rows)
    for name in planted_segments.DEFECTS:
        assert _cell(planted_segments.PLANTED[name], seed).status == "fails", name


def test_the_ids_increase_by_one_gap_with_the_padding_last():
    gaps = set()
    for seed in range(40):
        packing = Packing(((3, 2), (0, 0), (1, 4)), slack=2, seed=seed)
        q_ids, k_ids = packing.segment_ids(0)[0], packing.segment_ids(1)[0]
        assert q_ids.dtype == np.int32 and q_ids.shape == (3 + 1 + 2,)
        gap = int(k_ids[-3] - k_ids[0]) // 2  # the third sequence's id, two gaps on
        assert gap in SEGMENT_GAPS
        gaps.add(gap)
        first, third = 1, 1 + 2 * gap  # the empty second sequence's id is never used
        assert list(q_ids) == [first] * 3 + [third] + [PADDING_SEGMENT] * 2
        assert list(k_ids) == [first] * 2 + [third] * 4 + [PADDING_SEGMENT] * 2
    assert gaps == set(SEGMENT_GAPS)  # every gap is drawn, the colliding ones included


# the keywords each call got (a module's list: a kernel's own state is copied fresh per case)
SEEN: list = []


def _recording(q, k, v, **keywords):
    SEEN.append(sorted(set(keywords) - {"scale"}))
    ids = keywords.get("segment_ids", keywords.get("q_segment_ids"))
    kv_ids = keywords.get("segment_ids", keywords.get("kv_segment_ids"))
    return planted_segments.segment_attention(q, k, v, ids, kv_ids,
                                              scale=keywords.get("scale"))


def test_the_kernel_gets_the_declared_keywords_and_one_array_where_it_takes_one():
    seen = SEEN
    seen.clear()
    two = planted_segments.with_declaration(fn=_recording, gradients=None)
    assert one_cell(two, "packed_sequences").status == "conforms"
    assert seen and all(s == ["kv_segment_ids", "q_segment_ids"] for s in seen)
    seen.clear()
    one = dataclasses.replace(two, segment_ids_arguments=("segment_ids",))
    assert one_cell(one, "packed_sequences").status == "conforms"
    assert seen and all(s == ["segment_ids"] for s in seen)


def test_one_array_for_both_asks_sequences_as_long_in_queries_as_in_keys():
    one = planted_segments.with_declaration(segment_ids_arguments=("segment_ids",))

    def holds(case: Case):
        assert all(n_q == n_k for n_q, n_k in case.packed)

    every_case_holds(by_name()["packed_sequences"], one, holds)
    # a dense case of n_q != n_k is refused, not run: the cell is n/a
    assert one_cell(one, "nq_ne_nk").status == "n/a"


def test_the_padding_holds_values_of_the_inputs_scale_and_its_gradients_are_not_asked():
    def holds(case: Case):
        assert packing_of(case).garbage == SLACK_DEFAULT  # NaN there would reach every row

    every_case_holds(by_name()["packed_sequences"], planted_segments.correct, holds)

    def nan_at_padding(q, k, v, g, q_segment_ids, kv_segment_ids, **keywords):
        grads = planted_segments.segment_attention_vjp(q, k, v, g, q_segment_ids,
                                                       kv_segment_ids, **keywords)
        pad_q, pad_k = (np.asarray(ids)[0] == PADDING_SEGMENT
                        for ids in (q_segment_ids, kv_segment_ids))
        return tuple(np.where(pad[None, None, :, None], np.nan, grad)
                     for grad, pad in zip(grads, (pad_q, pad_k, pad_k), strict=True))

    # the padding is a segment of its own: what its tokens get is no promise of the kernel's
    kernel = planted_segments.with_declaration(gradients=nan_at_padding)
    assert _cell(kernel).status == "conforms"


@pytest.mark.parametrize(("changes", "field"), [
    ({"layout": "thd"}, "layout"),
    ({"segment_ids_arguments": ("a", "b", "c")}, "segment_ids_arguments"),
    ({"segment_ids_arguments": ("not a name",)}, "segment_ids_arguments"),
    ({"max_seqlen_arguments": ("max_q", "max_k")}, "max_seqlen_arguments"),
    ({"mask": "bool"}, "packed"),
])
def test_a_segment_declaration_that_cannot_be_checked_names_its_field(changes, field):
    with pytest.raises(KernelError, match=field):
        planted_segments.with_declaration(**changes)


def test_a_jitted_jax_segment_kernel_conforms_and_its_8_bit_ids_fail():
    # the ids traced under the checker's jit, the shapes static
    pytest.importorskip("jax")
    result = check_kernel(planted_segments.jax_segments, examples=6,
                          properties=["forward", "backward_dq", "nq_ne_nk", "packed_sequences"])
    assert {c.status for c in result.cells} == {"conforms"}
    narrow = check_kernel(planted_segments.jax_segments_int8, examples=6,
                          properties=["packed_sequences"]).cells[0]
    assert narrow.status == "fails"
