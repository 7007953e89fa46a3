"""Paged KV caches: a kernel that reads K and V through a block table is checked in every
forward property (its keys laid in pages at their full lengths) and, by ``paged_kv``, at lengths
of their own, each declared page size, tight and large caches (page ids past 255 and 1,024) and
garbage in every unused slot.

Planted (``planted_paged``): a correct paged kernel conforms in every property; a key read from
its page's first slot, 8-bit page ids, a last page read whole and every element read at the
first element's length each fail ``paged_kv``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, KernelError, _properties, check_kernel
from attnproof.kernels import _paged as paged
from attnproof.kernels._cases import GARBAGE_ALLOWED, instance
from attnproof.kernels._matrix import write
from attnproof.symbolic import FLOAT32

from . import planted_paged
from ._cells import EXAMPLES, every_case_holds, not_conforming, one_cell


def _cell(kernel, seed=None):
    return one_cell(kernel, "paged_kv", seed)


def test_the_correct_paged_kernel_conforms_in_every_property():
    result = check_kernel(planted_paged.correct, examples=10)
    assert not not_conforming(result)
    assert result.cell("paged_kv", "float32").status == "conforms"
    assert result.cell("gqa", "float32").status == "conforms"  # through pages, 7 to 1 included
    # forward only: the gradient properties do not apply
    assert result.cell("backward_dq", "float32").status == "n/a"


@pytest.mark.parametrize("name", planted_paged.DEFECTS)
def test_each_planted_paged_defect_fails_paged_kv(name):
    assert _cell(planted_paged.PLANTED[name]).status == "fails"


@pytest.mark.parametrize("seed", [1, 2])
def test_the_draws_alone_find_each_paged_defect(monkeypatch, seed):
    rows = tuple(dataclasses.replace(row, explicit=()) if row.name == "paged_kv" else row
                 for row in _properties.PROPERTIES)
    monkeypatch.setattr(_properties, "PROPERTIES", rows)
    for name in planted_paged.DEFECTS:
        assert _cell(planted_paged.PLANTED[name], seed).status == "fails", name
    assert _cell(planted_paged.correct, seed).status == "conforms"


def test_the_cache_read_through_the_table_is_the_dense_keys():
    rng = np.random.default_rng(0)
    keys = rng.standard_normal((3, 2, 33, 4))
    lengths = np.array([5, 17, 33], dtype=np.int32)
    for size in (1, 16, 64):
        for kind in paged.CACHES:
            layout = paged.paging(lengths, size, kind, 2 * 4, seed=size)
            fill = np.full((layout.pages, size, 2, 4), np.nan)
            stored = paged.cache(keys, layout, fill)
            ids = [layout.table[b, :-(-int(n) // size)] for b, n in enumerate(lengths)]
            assert len(set(np.concatenate(ids).tolist())) == sum(len(i) for i in ids)
            for b, n in enumerate(lengths):
                np.testing.assert_array_equal(paged.gathered(stored, layout, b), keys[b, :, :n])
            # every slot no key lies in holds the fill
            assert np.isnan(stored).sum() == stored.size - 2 * 4 * int(lengths.sum())
            if kind == "large" and size == 1:
                assert layout.table.max() > 1024  # ids past 255 and 1,024


def test_the_explicit_batch_has_lengths_apart_across_page_edges():
    case = [c for c in paged.explicit(planted_paged.correct) if c.batch == 3][0]
    x = instance(case, FLOAT32, FLOAT32)
    lengths = sorted(x.keep[:, 0, 0, :].sum(axis=-1).tolist())
    assert lengths == [5, 17, 31]  # a page and one, a page less one at P = 16


def test_every_paged_case_respects_the_declaration():
    prop = _properties.by_name()["paged_kv"]
    kernel = planted_paged.with_declaration(page_sizes=(16,), masked_inputs="finite",
                                            gqa=False)

    def holds(case):
        assert case.page_size == 16 and case.cache in paged.CACHES
        assert case.garbage in GARBAGE_ALLOWED["finite"]
        assert case.kv_heads == case.heads and case.mask in ("none", "padding")
        assert Case.from_json(case.to_json()) == case

    every_case_holds(prop, kernel, holds)


def test_an_hnd_cache_and_other_keywords_are_asked_as_declared():
    def hnd(q, k_cache, v_cache, pages, lengths, **keywords):
        k_cache, v_cache = (np.transpose(c, (0, 2, 1, 3)) for c in (k_cache, v_cache))
        return planted_paged.paged_attention(q, k_cache, v_cache, pages, lengths, **keywords)

    kernel = planted_paged.with_declaration(name="hnd", fn=hnd, cache_layout="hnd",
                                            paged_arguments=("pages", "lengths"))
    assert _cell(kernel).status == "conforms"
    # the same kernel declared with the other layout reads its keys wrongly
    assert _cell(dataclasses.replace(kernel, cache_layout="nhd")).status == "fails"


def test_the_report_names_the_theorem_of_paged_attention(tmp_path):
    result = check_kernel(planted_paged.PLANTED["slot_ignored"], properties=["paged_kv"],
                          dtypes=["float32"], examples=EXAMPLES)
    write([result], tmp_path)
    text = (tmp_path / "conformance.md").read_text(encoding="utf-8").replace("\\_", "_")
    assert "paged_attention_is_dense_attention_for_every_page_table" in text


@pytest.mark.parametrize(("changes", "field"), [
    (dict(paged="pages"), "paged"),
    (dict(cache_layout="hdn"), "cache_layout"),
    (dict(page_sizes=(0,)), "page_sizes"),
    (dict(page_sizes=()), "page_sizes"),
    (dict(paged_arguments=("block_table",)), "paged_arguments"),
    (dict(mask="bool"), "paged"),
    (dict(gradients="autodiff"), "paged"),
    (dict(packed="cu_seqlens", layout="thd"), "paged"),
])
def test_a_paged_declaration_that_cannot_be_checked_names_its_field(changes, field):
    with pytest.raises(KernelError, match=field):
        planted_paged.with_declaration(**changes)


def test_a_dense_kernel_is_never_asked_a_paged_cache():
    from . import planted

    cell = check_kernel(planted.correct, properties=["paged_kv"], dtypes=["float32"],
                        examples=4).cells[0]
    assert cell.status == "n/a" and "paged" in cell.reason
    with pytest.raises(ValueError, match="page_size"):
        Case.from_json('{"page_size": 0}')
    with pytest.raises(ValueError, match="cache"):
        Case.from_json('{"cache": "huge"}')
