"""Planted cost claims: the false one must be refuted (symbolically and by the count of an
instrumented run), the true one beside it must not be."""

from attnproof.symbolic import Source, Theorem
from attnproof.symbolic.kinds.cost import Cost
from attnproof.theorems import costs
from attnproof.theorems import example48_numerics as example48

PLANTED = "tests/planted/kinds_cost.py"

# the standard algorithm claimed to need linear memory: it holds the n × n matrix A
planted_standard_attention_memory_linear = Theorem(
    name="planted_standard_attention_memory_linear",
    source=Source(PLANTED, "planted", "standard attention in O(n) memory"),
    claim=Cost(costs.n.symbol, costs.STANDARD_PEAK, counted="entries", order="O",
               growing=(costs.n,), implementation=costs.standard_attention),
    inputs=(costs.Q, costs.K, costs.V),
    expect="refuted",
)

# the tiled algorithm in linear memory: true
planted_tiled_attention_memory_linear = Theorem(
    name="planted_tiled_attention_memory_linear",
    source=Source(PLANTED, "planted", "tiled attention in O(n) memory"),
    claim=Cost(costs.n.symbol, costs.TILED_PEAK, counted="entries", order="O",
               growing=(costs.n,), implementation=costs.tiled_attention),
    inputs=(costs.Q, costs.K, costs.V, costs.B),
    expect="holds",
)

# an exact count off by the output: the score matrix claimed as T² + T entries
planted_score_matrix_entries_off_by_t = Theorem(
    name="planted_score_matrix_entries_off_by_t",
    source=Source(PLANTED, "planted", "T² + T score entries"),
    claim=Cost(costs.T.symbol**2 + costs.T.symbol, costs.notebook_score_matrix_entries.claim.steps,
               counted="entries", implementation=costs.score_matrix),
    inputs=(costs.Q_T, costs.K_T),
    expect="refuted",
)

# a triangular solve: n(n − 1)/2 multiply-adds, summed over ranges that depend on the entry
solve = example48.example48_triangular_solve_cost_quadratic.claim

planted_triangular_solve_cost_quadratic = Theorem(
    name="planted_triangular_solve_cost_quadratic",
    source=Source(PLANTED, "planted", "forward substitution in Θ(n²)"),
    claim=solve,
    inputs=(example48.L, example48.y),
)

planted_triangular_solve_cost_linear = Theorem(
    name="planted_triangular_solve_cost_linear",
    source=Source(PLANTED, "planted", "forward substitution in O(n)"),
    claim=Cost(example48.size.symbol, solve.steps, counted="multiply-adds", order="O",
               growing=(example48.size,), implementation=solve.implementation),
    inputs=(example48.L, example48.y),
    expect="refuted",
)
