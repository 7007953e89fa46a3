"""Planted IO counts: FlashAttention's traffic claimed linear in n, and a tiling whose key
blocks (M/(2d)) leave no room for the query block, must be refuted; standard attention's Θ(n²)
traffic as n grows must not be. Test fixtures, never in the catalog."""

from attnproof import Source, Theorem
from attnproof.symbolic.kinds.cost import Cost, Step
from attnproof.theorems import io_costs as io

PLANTED = Source("tests/planted/io_costs.py", "planted IO counts")
n, d, M = io.n.symbol, io.d.symbol, io.M.symbol

planted_flash_attention_io_linear_in_n = Theorem(
    name="planted_flash_attention_io_linear_in_n",
    source=PLANTED,
    claim=Cost(n * d ** 2 / M, io.tiled_steps, counted="io", order="Theta", growing=(io.n,),
               fast_memory=io.M),
    inputs=(io.Q, io.K, io.V, io.M),
    expect="refuted",
)

wide = M / (2 * d)  # key blocks of M/(2d): K_j and V_j alone fill the fast memory
planted_tiling_that_does_not_fit = Theorem(
    name="planted_tiling_that_does_not_fit",
    source=PLANTED,
    claim=Cost(n ** 2 * d ** 2 / M,
               (Step("update O_i", repeat=(n / wide) * (n / d), reads=((d, d), (d, d)),
                     writes=((d, d),), fast=((wide, d), (wide, d), (d, d))),),
               counted="io", order="Theta", growing=(io.n,), fast_memory=io.M),
    inputs=(io.Q, io.K, io.V, io.M),
    expect="refuted",
)

planted_standard_attention_io_quadratic_in_n = Theorem(
    name="planted_standard_attention_io_quadratic_in_n",
    source=PLANTED,
    claim=Cost(n ** 2, io.standard_steps, counted="io", order="Theta", growing=(io.n,),
               fast_memory=io.M),
    inputs=(io.Q, io.K, io.V, io.M),
)
