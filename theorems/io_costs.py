"""Slow-memory traffic of attention in a two-level memory model (FlashAttention, Dao et al.
2022, Theorem 2; outside the documents, which state its memory, not its traffic).

A fast memory holds M entries. Standard attention writes the n × n scores and weights to slow
memory and reads them back: Θ(nd + n²) entries moved as n grows (its score step also re-reads
K once per block of M/(4d) queries, 4n²d²/M, which is why the order is stated in n alone).
The tiled algorithm keeps blocks of B_c = M/(8d) keys and values in fast memory and, for each,
walks the query blocks of B_r = min(M/(8d), d) rows, reading and writing each block's running
output, sum and maximum: 2nd + 8dn²(3d + 4)/M entries, Θ(n²d²/M). Each step's blocks fit in M
(checked exactly).
"""

from __future__ import annotations

import sympy as sp

from attnproof import Dim, Integer, Scalar, Sizes, Source, Tensor, Theorem
from attnproof.symbolic.kinds.cost import Cost, Step

from ._dims import OUTSIDE

n = Dim("n", Sizes(1, 12))
d = Dim("d", Sizes(1, 6))
M = Scalar("M", Integer(64, 4096))  # entries the fast memory holds: several rows of d
Q, K, V = (Tensor(name, (n, d)) for name in "QKV")
FLASH = Source(OUTSIDE, "FlashAttention, Dao et al. (2022), Theorem 2 (the README's reference 3; "
               "the documents state its memory, not its traffic)")

# S = QKᵀ a block of B_q = M/(4d) query rows at a time, every key row streamed past it (so K
# is read n/B_q times); softmax and PV stream rows and entries through a few entries of fast
# memory
row_block = M.symbol / (4 * d.symbol)
standard_steps = (
    Step("S = QKᵀ", repeat=n.symbol / row_block,
         reads=((row_block, d), (n, d)), writes=((row_block, n),),
         fast=((row_block, d), (d,), (row_block,))),
    Step("P = softmax(S)", reads=((n, n),), writes=((n, n),), fast=((3,),)),
    Step("O = PV", reads=((n, n), (n, d)), writes=((n, d),), fast=((3,),)),
)

key_block = M.symbol / (8 * d.symbol)  # B_c
query_block = sp.Min(M.symbol / (8 * d.symbol), d.symbol)  # B_r
key_blocks, query_blocks = n.symbol / key_block, n.symbol / query_block  # T_c, T_r
tiled_steps = (
    Step("load K_j, V_j", repeat=key_blocks, reads=((key_block, d), (key_block, d)),
         fast=((key_block, d), (key_block, d))),
    Step("update O_i, ℓ_i, m_i", repeat=key_blocks * query_blocks,
         reads=((query_block, d), (query_block, d), (query_block,), (query_block,)),
         writes=((query_block, d), (query_block,), (query_block,)),
         fast=((key_block, d), (key_block, d), (query_block, d), (query_block, d),
               (query_block, key_block), (query_block,), (query_block,))),
)

standard_attention_io = Theorem(
    name="standard_attention_io",
    source=FLASH,
    claim=Cost(n.symbol * d.symbol + n.symbol ** 2, standard_steps, counted="io",
               order="Theta", growing=(n,), fast_memory=M),
    inputs=(Q, K, V, M),
    note="Θ(nd + n²) as n grows: the n × n scores and weights go to slow memory and back.",
)

flash_attention_io = Theorem(
    name="flash_attention_io",
    source=FLASH,
    claim=Cost(n.symbol ** 2 * d.symbol ** 2 / M.symbol, tiled_steps, counted="io",
               order="Theta", growing=(n, d), fast_memory=M),
    inputs=(Q, K, V, M),
    note="Θ(n²d²/M) as n or d grows with M fixed: each of the n/B_c key blocks passes over "
    "every query row once, with B_c = M/(8d).",
)
