"""Paged KV caches: each batch element's keys and values stored in fixed-size pages of one
cache, found through a block table (vLLM's and FlashInfer's paged attention), and the pages a
case lays its keys in.

Key j of element b lies in page ``block_table[b, j // P]`` at slot ``j % P`` (P the page
size), for j below ``seq_lens[b]``; the cache's other slots (the rest of a last page, pages no
table entry names) and the table's entries past an element's last page hold whatever a cache
held before. Paged attention equals dense attention over each element's first ``seq_lens[b]``
keys, for every page table and page size (``tests/kernels/test_paged.py`` holds the gathered
cache to the dense keys).

The caches are (pages, page size, K/V heads, features), ``cache_layout="nhd"`` (vLLM's flash
layout, FlashInfer's NHD), or (pages, K/V heads, page size, features), ``"hnd"``; the table
(batch, pages per element) and the lengths (batch,) are int32.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from hypothesis import strategies as st

from ._cases import CACHES, GARBAGE_ALLOWED, Case, padding_lengths
from ._cases import cases as dense_cases
from ._packed import SLACK_DEFAULT, slack_values
from ._shapes import kind

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._frameworks import Framework
    from ._truth import Inputs

PAGED_FORMS = ("block_table",)
CACHE_LAYOUTS = ("nhd", "hnd")
# how many pages a case's cache holds (``_cases.CACHES``): just those its keys fill, and 1,025
# and more (page ids past 255 and past 1,024: a table read in a narrow integer type, an id
# scaled into an offset that overflows)
LARGE_CACHE = 1025
# the most entries one cache of a case may hold: a large cache of big pages and wide heads
# keeps its page count and gives up the page ids past 1,024
MOST_CACHE_ENTRIES = 2**22


class PagedKernel(Protocol):
    """What this module reads of a paged kernel's declaration (``_declaration.Kernel``, which
    imports this module, so it is named by what it has)."""

    @property
    def page_sizes(self) -> tuple[int, ...]: ...
    @property
    def cache_layout(self) -> str: ...
    @property
    def paged_arguments(self) -> tuple[str, str]: ...
    @property
    def masked_inputs(self) -> str: ...
    @property
    def gqa(self) -> bool: ...


@dataclass(frozen=True)
class Paging:
    """Where each element's keys lie: ``table`` (batch, pages per element) of page ids,
    ``lengths`` (batch,), in a cache of ``pages`` pages of ``page_size`` slots."""

    table: np.ndarray
    lengths: np.ndarray
    pages: int
    page_size: int


def paging(lengths: np.ndarray, page_size: int, cache: str, entries_per_slot: int,
           seed: int) -> Paging:
    """A page table for keys of ``lengths``: each element's pages drawn without replacement
    from a cache of the pages they fill plus one (``tight``) or of about 1,025 (``large``),
    in random order, the table's entries past an element's last page naming pages no element
    uses (or page 0 where every page is used)."""
    rng = np.random.default_rng([seed, page_size])
    needed = [-(-int(n) // page_size) for n in lengths]
    used = sum(needed)
    pages = used + 1
    if cache == "large":
        pages = max(pages, min(LARGE_CACHE + used,
                               MOST_CACHE_ENTRIES // (page_size * entries_per_slot)))
    order = rng.permutation(pages)
    free = order[used:]
    width = max(max(needed), 1)
    table = np.empty((len(lengths), width), dtype=np.int64)
    start = 0
    for element, count in enumerate(needed):
        table[element, :count] = order[start:start + count]
        table[element, count:] = rng.choice(free, size=width - count) if len(free) else 0
        start += count
    return Paging(table.astype(np.int32), np.asarray(lengths, dtype=np.int32), pages, page_size)


def cache(array: np.ndarray, layout: Paging, fill: np.ndarray) -> np.ndarray:
    """``array`` (b, h_kv, n_k, d) laid in pages, (pages, page size, h_kv, d): the slots no
    element's key lies in take ``fill``'s values (an array of the cache's shape)."""
    stored = fill.copy()
    for element, length in enumerate(layout.lengths):
        j = np.arange(int(length))  # each key's page and slot: distinct pairs
        stored[layout.table[element, j // layout.page_size], j % layout.page_size] = \
            np.transpose(array[element, :, :length], (1, 0, 2))
    return stored


def gathered(stored: np.ndarray, layout: Paging, element: int) -> np.ndarray:
    """Element ``element``'s keys read back from a (pages, page size, h_kv, d) cache through
    the table: (h_kv, length, d)."""
    j = np.arange(int(layout.lengths[element]))
    pages = layout.table[element, j // layout.page_size]
    return np.transpose(stored[pages, j % layout.page_size], (1, 0, 2))


def in_layout(stored: np.ndarray, cache_layout: str) -> np.ndarray:
    """A canonical (pages, page size, h_kv, d) cache in the kernel's ``cache_layout``."""
    return stored if cache_layout == "nhd" else np.ascontiguousarray(
        np.transpose(stored, (0, 2, 1, 3)))


def unused_fill(shape: tuple[int, ...], garbage: str, like: np.ndarray, dtype: Format,
                seed: int) -> np.ndarray:
    """What the slots no key lies in hold (``_packed.slack_values``: NaN, ±∞, the format's
    largest, or values of the keys' own scale)."""
    return slack_values(shape, garbage, like, dtype, np.random.default_rng([seed, 7]))


# -- the cases of ``paged_kv`` ---------------------------------------------------------------------


def cases(kernel: PagedKernel) -> st.SearchStrategy[Case]:
    """Decode (one query) and a few queries over 2 to 4 elements' keys, most often padded to
    lengths of their own (so across page edges; one element alone is every other property's
    case), each page size the kernel declares, a tight cache and one
    of about 1,025 pages, unused slots and table entries holding what ``masked_inputs`` lets
    unused entries hold; heads grouped where declared."""
    group = (1, 7 if kernel.gqa else 1)
    base = dense_cases(where=kind(lengths="any", batch=(2, 4), n=(1, 129), d=(1, 64),
                                  group=group),
                       mask=st.sampled_from(("padding", "padding", "none")))

    def paged(case: Case) -> st.SearchStrategy[Case]:
        return st.tuples(st.sampled_from(kernel.page_sizes), st.sampled_from(CACHES),
                         st.sampled_from(GARBAGE_ALLOWED[kernel.masked_inputs])).map(
            lambda drawn: dataclasses.replace(case, page_size=drawn[0], cache=drawn[1],
                                              garbage=drawn[2]))

    return base.flatmap(paged)


def explicit(kernel: PagedKernel) -> tuple[Case, ...]:
    """One query over a page less one key, a page, a page and one, and two pages and one, at
    each declared page size, in a large cache with NaN in its unused slots where the kernel
    lets them hold anything: a key read from the wrong slot or a page past the length shows;
    then a batch of three lengths apart."""
    garbage = GARBAGE_ALLOWED[kernel.masked_inputs][0]
    lengths = sorted({n for size in kernel.page_sizes
                      for n in (size - 1, size, size + 1, 2 * size + 1) if n >= 1})
    edges = tuple(Case(n_q=1, n_k=n_k, batch=2, heads=2, kv_heads=2, d_k=4, d_v=4,
                       page_size=size, cache="large", garbage=garbage, seed=seed)
                  for seed, (size, n_k) in enumerate((size, n) for size in kernel.page_sizes
                                                     for n in lengths if n <= 4 * size + 1))
    # three elements of lengths 5, 17 and 31 (the padding its seed draws): a decode batch
    # whose elements end in other pages and slots (a length read from the wrong element)
    apart = tuple(Case(n_q=1, n_k=33, batch=3, heads=2, kv_heads=2, mask="padding",
                       page_size=size, cache="large", garbage=garbage, seed=APART_SEED)
                  for size in kernel.page_sizes)
    return edges + apart


APART_SEED = 4


def arrays(kernel: PagedKernel, x: Inputs, case: Case,
           dtype: Format) -> tuple[np.ndarray, np.ndarray, Paging]:
    """The K and V caches of ``x`` in the kernel's cache layout and their paging: each
    element's keys up to its length (its padding where the case pads, else all n_k), at the
    case's page size (the kernel's first where the case names none), the other slots holding
    the case's garbage (values of the keys' own scale where it names none)."""
    b, kv_heads, n_k, _ = x.k.shape
    lengths = padding_lengths(x.keep) if case.mask == "padding" else np.full(b, n_k, np.int32)
    size = case.page_size or kernel.page_sizes[case.seed % len(kernel.page_sizes)]
    widest = max(x.k.shape[3], x.v.shape[3])
    layout = paging(lengths, size, case.cache or "tight", kv_heads * widest, case.seed)
    stored: list[np.ndarray] = []
    for array in (x.k, x.v):
        shape = (layout.pages, size, kv_heads, array.shape[3])
        fill = unused_fill(shape, case.garbage or SLACK_DEFAULT, array, dtype,
                           case.seed + len(stored))
        stored.append(in_layout(cache(array, layout, fill), kernel.cache_layout))
    return stored[0], stored[1], layout


def keywords(kernel: PagedKernel, fw: Framework, layout: Paging, device: str) -> dict[str, Any]:
    """The block table and the lengths, int32 on the kernel's device."""
    table, lengths = kernel.paged_arguments
    return {table: fw.put(layout.table, "int32", device),
            lengths: fw.put(layout.lengths, "int32", device)}
