"""Planted paged-attention kernels in NumPy, shaped like vLLM's and FlashInfer's decode kernels:
``fn(q, k_cache, v_cache, block_table=..., seq_lens=...)``, q (b, h, n_q, d), caches (pages, page
size, K/V heads, features), queries aligned to the last keys.

``correct`` gathers each element's keys through its block table and runs the planted dense
kernel (``planted.attention``) on them. Each variant has one defect of a class the trackers
report on paged paths:

- ``slot_ignored``: key j read from slot 0 of its page (right for a page size of 1 only);
- ``page_id_uint8``: the table read as 8-bit page ids (right while every id is below 256);
- ``whole_last_page``: the last page read whole, its slots past the length included;
- ``first_length``: every element read at element 0's length.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnproof.kernels import Kernel

from . import planted

DEFECTS = ("slot_ignored", "page_id_uint8", "whole_last_page", "first_length")
PAGE_SIZES = (1, 16, 64)


def _keys(cache, table, length: int, defect: str | None):
    """(1, h_kv, length', d): the keys of one element as the kernel reads them."""
    size = cache.shape[1]
    if defect == "whole_last_page":
        length = -(-length // size) * size
    j = np.arange(length)
    pages = np.asarray(table)[j // size]
    if defect == "page_id_uint8":
        pages = pages.astype(np.uint8)
    slots = np.zeros_like(j) if defect == "slot_ignored" else j % size
    return np.transpose(cache[pages, slots], (1, 0, 2))[None]


def paged_attention(q, k_cache, v_cache, block_table, seq_lens, scale=None, causal=False, *,
                    defect: str | None = None):
    """(out (b, h, n_q, d_v), lse (b, h, n_q)), one element at a time."""
    outs, lses = [], []
    lengths = np.asarray(seq_lens)
    for b in range(q.shape[0]):
        length = int(lengths[0 if defect == "first_length" else b])
        k = _keys(k_cache, block_table[b], length, defect)
        v = _keys(v_cache, block_table[b], length, defect)
        out, lse = planted.attention(q[b:b + 1], k, v, causal=causal, scale=scale)
        outs.append(out)
        lses.append(lse)
    return np.concatenate(outs), np.concatenate(lses)


def kernel(name: str, defect: str | None = None) -> Kernel:
    def forward(q, k_cache, v_cache, **keywords):
        return paged_attention(q, k_cache, v_cache, defect=defect, **keywords)

    return Kernel(name=name, fn=forward, framework="numpy", layout="bhsd", returns_lse=True,
                  paged="block_table", page_sizes=PAGE_SIZES, causal_argument="causal",
                  causal_alignment="lower_right", gqa=True, dtypes=("float32",),
                  compute_dtype="float32")


correct = kernel("paged_correct")
PLANTED = {name: kernel(f"paged_{name}", name) for name in DEFECTS}


def with_declaration(**changes) -> Kernel:
    return dataclasses.replace(correct, **changes)
