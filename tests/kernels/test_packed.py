"""Packed sequences (cu_seqlens): a kernel that takes a batch as sequences end to end is checked
in every property (its batch's elements packed as sequences of one length) and, by
``packed_sequences``, on sequences of several lengths, empty ones and slack tokens of garbage,
each sequence judged against its own attention and the slack's gradients asked to be 0.

Planted (``planted_packed``): a correct varlen kernel conforms in every property; a fallback
that lets attention bleed across sequences, NaN gradients at the slack, the last sequence run
to the buffer's end, keys cut by the queries' offsets, and an empty sequence read as the
batch's end each fail ``packed_sequences``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, KernelError, _properties, check_kernel
from attnproof.kernels._cases import GARBAGE_ALLOWED
from attnproof.kernels._matrix import write
from attnproof.kernels._packed import SLACKS
from attnproof.kernels._shapes import LENGTHS, SMALL_LENGTHS

from . import planted_packed
from ._cells import EXAMPLES, every_case_holds, not_conforming, one_cell


def _cell(kernel, seed=None):
    return one_cell(kernel, "packed_sequences", seed)


def test_the_correct_varlen_kernel_conforms_in_every_property():
    result = check_kernel(planted_packed.correct, examples=10)
    assert not not_conforming(result)
    assert result.cell("packed_sequences", "float32").status == "conforms"
    # asked as sequences of one length, the dense properties apply too
    assert result.cell("causal_nq_ne_nk", "float32").status == "conforms"


@pytest.mark.parametrize("name", planted_packed.DEFECTS)
def test_each_planted_varlen_defect_fails_packed_sequences(name):
    cell = _cell(planted_packed.PLANTED[name])
    assert cell.status == "fails", cell.reason


@pytest.mark.parametrize("seed", [1, 2])
def test_the_defects_that_need_slack_or_an_empty_sequence_are_found_by_the_draws(
        monkeypatch, seed):
    rows = tuple(dataclasses.replace(row, explicit=()) if row.name == "packed_sequences"
                 else row for row in _properties.PROPERTIES)
    monkeypatch.setattr(_properties, "PROPERTIES", rows)
    for name in ("slack_gradient_nan", "last_to_end", "stops_at_empty"):
        assert _cell(planted_packed.PLANTED[name], seed).status == "fails", name
    assert _cell(planted_packed.correct, seed).status == "conforms"


def test_nan_gradients_at_the_slack_are_named_and_left_out_of_the_precision():
    cell = _cell(planted_packed.PLANTED["slack_gradient_nan"])
    example = cell.counterexample
    assert "slack token" in example["message"] and "is not 0" in example["message"]
    assert example["mechanism"]["values"] == "slack"
    case = Case.from_json(example["case"])
    assert case.slack >= 1 and case.packed is not None


def test_a_packed_failure_replays_from_its_json():
    from attnproof.kernels._check import replay

    kernel = planted_packed.PLANTED["keys_by_query_offsets"]
    cell = _cell(kernel)
    case = Case.from_json(cell.counterexample["case"])
    assert replay(kernel, "packed_sequences", "float32", case).status == "fail"
    assert replay(planted_packed.correct, "packed_sequences", "float32", case).status == "pass"


def test_a_failing_sequence_is_named_with_its_lengths():
    cell = _cell(planted_packed.PLANTED["stops_at_empty"])
    assert "sequence " in cell.counterexample["message"]
    case = Case.from_json(cell.counterexample["case"])
    assert (0, 0) in case.packed  # an empty sequence before the one left at zero


def test_the_report_names_the_theorems_the_truth_comes_from(tmp_path):
    result = check_kernel(planted_packed.PLANTED["last_to_end"], properties=["packed_sequences"],
                          dtypes=["float32"], examples=EXAMPLES)
    write([result], tmp_path)  # the JSON of the shape of its schema, or a ConformanceError
    text = (tmp_path / "conformance.md").read_text(encoding="utf-8").replace("\\_", "_")
    assert "packed_output_ignores_other_sequences_values" in text


def test_every_theorem_a_property_names_is_in_the_catalog_and_proved_as_expected():
    from attnproof.symbolic._catalog import discover

    catalog = {t.name: t for t in discover().theorems}
    named = {name for prop in _properties.PROPERTIES for name in prop.theorems}
    assert named >= set(_properties.PACKED_THEOREMS)
    missing = sorted(named - set(catalog))
    assert not missing
    assert all(catalog[name].expect == "holds" for name in named)


def test_every_packed_case_respects_the_declaration():
    prop = _properties.by_name()["packed_sequences"]
    kernel = planted_packed.with_declaration(masked_inputs="ordinary", causal_argument=None,
                                             causal_alignment=None, gqa=False)

    def holds(case):
        assert case.packed is not None and case.batch == len(case.packed)
        # each sequence's lengths on the ladder (the drawn ones on its small end)
        assert all(n in (0, *LENGTHS) for pair in case.packed for n in pair)
        assert case.slack in SLACKS
        assert case.garbage in (None, *GARBAGE_ALLOWED["ordinary"])
        assert not case.causal_flag and case.mask == "none"
        assert case.kv_heads == case.heads and case.sinks is None
        assert Case.from_json(case.to_json()) == case

    def small(case):
        assert all(n in (0, *SMALL_LENGTHS) for pair in case.packed for n in pair)

    every_case_holds(prop, kernel, holds, small)


def test_the_keywords_are_the_declared_ones():
    def torch_style(q, k, v, cu_seq_q, cu_seq_k, max_q, max_k, **keywords):
        assert isinstance(max_q, int) and max_q == int(np.max(np.diff(cu_seq_q)))
        return planted_packed.varlen_attention(q, k, v, cu_seq_q, cu_seq_k, max_q, max_k,
                                               **keywords)

    def torch_style_vjp(q, k, v, g, cu_seq_q, cu_seq_k, max_q, max_k, **keywords):
        return planted_packed.varlen_attention_vjp(q, k, v, g, cu_seq_q, cu_seq_k, **keywords)

    kernel = planted_packed.with_declaration(
        name="torch_style", fn=torch_style, gradients=torch_style_vjp,
        cu_seqlens_arguments=("cu_seq_q", "cu_seq_k"), max_seqlen_arguments=("max_q", "max_k"))
    assert _cell(kernel).status == "conforms"


@pytest.mark.parametrize(("changes", "field"), [
    (dict(layout="bhsd"), "layout"),
    (dict(lse_layout="bhs"), "lse_layout"),  # the varlen kernel returns its lse
    (dict(mask="bool"), "packed"),
    (dict(packed="segments"), "packed"),
    (dict(cu_seqlens_arguments=("cu_seqlens_q",)), "cu_seqlens_arguments"),
    (dict(max_seqlen_arguments=("max q", "max_k")), "max_seqlen_arguments"),
])
def test_a_packed_declaration_that_cannot_be_checked_names_its_field(changes, field):
    with pytest.raises(KernelError, match=field):
        planted_packed.with_declaration(**changes)


@pytest.mark.parametrize("fields", [
    dict(packed=[[3, 3], [0, 2]], batch=2, n_q=3, n_k=3),  # queries over no key
    dict(packed=[[3, 3], [2, 2]], batch=3, n_q=3, n_k=3),  # batch not the count
    dict(packed=[[3, 3], [2, 5]], batch=2, n_q=3, n_k=3),  # n_k not the longest
    dict(packed=[[0, 0]], batch=1, n_q=1, n_k=1),  # nothing but an empty sequence
    dict(slack=2),  # slack with no sequences
])
def test_a_packed_case_written_by_hand_is_checked(fields):
    import json

    with pytest.raises(ValueError, match="packed|slack"):
        Case.from_json(json.dumps(fields))


def test_a_dense_kernel_is_never_asked_packed_sequences():
    from . import planted

    cell = check_kernel(planted.correct, properties=["packed_sequences"], dtypes=["float32"],
                        examples=4).cells[0]
    assert cell.status == "n/a" and "packed" in cell.reason


@pytest.mark.slow  # a JAX program per packed length: about a minute on two cores
def test_a_jitted_jax_varlen_kernel_conforms_and_its_unzeroed_slack_fails():
    # the offsets traced under the checker's jit, the shapes static; without zeroing the
    # tokens no sequence owns, NaN slack reaches the output through a zero weight
    pytest.importorskip("jax")
    result = check_kernel(planted_packed.jax_segments, examples=6,
                          properties=["forward", "backward_dq", "causal_nq_ne_nk",
                                      "packed_sequences"])
    assert {c.status for c in result.cells} == {"conforms"}
    unzeroed = check_kernel(planted_packed.jax_segments_unzeroed, examples=6,
                            properties=["packed_sequences"]).cells[0]
    assert unzeroed.status == "fails" and "non-finite" in unzeroed.counterexample["message"]


def _varlen_attn_in_torch(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, *, scale=None,
                          window_size=(-1, -1), enable_gqa=False):
    """A stand-in for torch's CUDA-only varlen_attn on the CPU, per its documentation: each
    sequence through SDPA's math, window_size (-1, 0) causal (aligned lower-right here)."""
    import torch
    import torch.nn.functional as F

    assert cu_seq_q.dtype == torch.int32 and isinstance(max_q, int)
    out = torch.zeros(query.shape[:2] + value.shape[2:], dtype=query.dtype)
    for i in range(len(cu_seq_q) - 1):
        (q0, q1), (k0, k1) = cu_seq_q[i:i + 2].tolist(), cu_seq_k[i:i + 2].tolist()
        q, k, v = (a.transpose(0, 1)[None] for a in (query[q0:q1], key[k0:k1], value[k0:k1]))
        left, right = window_size
        rows = torch.arange(q1 - q0)[:, None] + (k1 - k0) - (q1 - q0)
        cols = torch.arange(k1 - k0)[None, :]
        keep = ((left < 0) | (cols >= rows - left)) & ((right < 0) | (cols <= rows + right))
        if q1 > q0:
            out = out.index_put((torch.arange(q0, q1),), F.scaled_dot_product_attention(
                q, k, v, attn_mask=keep, scale=scale, enable_gqa=enable_gqa)[0].transpose(0, 1))
    return out


def test_the_torch_varlen_declaration_asks_as_its_documentation_says(monkeypatch):
    # varlen_attn runs on CUDA only: here its wrapper and declaration are checked against a
    # stand-in written from its documentation, on the CPU
    pytest.importorskip("torch")
    from torch.nn.attention import varlen

    from attnproof.kernels.library import LIBRARY

    monkeypatch.setattr(varlen, "varlen_attn", _varlen_attn_in_torch)
    kernel = dataclasses.replace(LIBRARY["torch-varlen"](), devices=("cpu",),
                                 dtypes=("float32",), causal_alignment="lower_right")
    result = check_kernel(kernel, examples=6, properties=[
        "forward", "backward_dq", "causal_nq_ne_nk", "sliding_window", "gqa",
        "packed_sequences"])
    assert {c.status for c in result.cells} == {"conforms"}, not_conforming(result)
    assert LIBRARY["torch-varlen"]().devices == ("gpu",)  # where it runs as declared
