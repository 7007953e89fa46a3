"""The tutorial's worked examples (§11): fixed numbers, checked to the digits printed.

Each claim evaluates the example exactly (SymPy, 50 digits) and asks whether every printed
entry is the value rounded to the digits shown. A printed table that is off is refuted entry by
entry; its corrected table is stated beside it and checked the same way.
"""

from __future__ import annotations

import sympy as sp

from attnproof import Rounds, Source, Theorem

from ._dims import TUTORIAL

Q = sp.Matrix([[1, 0], [0, 1]])  # (71)
K = sp.Matrix([[1, 0], [0, 1], [1, 1]])
V = sp.Matrix([[2, 0], [0, 2], [1, 1]])
S = Q * K.T / sp.sqrt(2)  # (72), d_k = 2


def softmax_rows(scores: sp.Matrix, temperature: sp.Expr | int = 1) -> sp.Matrix:
    """Row-wise softmax at a temperature, written out with exact exponentials."""
    rows = []
    for r in range(scores.rows):
        weights = [sp.exp(x / temperature) for x in scores.row(r)]
        rows.append([w / sum(weights) for w in weights])
    return sp.Matrix(rows)


A = softmax_rows(S)  # (73)
EXAMPLE_1 = "§11.1 Example 1: 2-Query, 3-Key Attention"

worked_example_scores = Theorem(
    name="worked_example_scores",
    source=Source(TUTORIAL, EXAMPLE_1, "(72)"),
    claim=Rounds(S, [["0.707", "0", "0.707"], ["0", "0.707", "0.707"]]),
    inputs=(),
)

worked_example_exponentials = Theorem(
    name="worked_example_exponentials",
    source=Source(TUTORIAL, EXAMPLE_1, "Step 2, row 1"),
    claim=Rounds(
        [[sp.exp(x) for x in S.row(0)] + [sum(sp.exp(x) for x in S.row(0))]],
        [["2.028", "1.000", "2.028", "5.056"]],
    ),
    inputs=(),
    note="exp([0.707, 0, 0.707]) and its sum, as printed before (73).",
)

worked_example_weights = Theorem(
    name="worked_example_weights",
    source=Source(TUTORIAL, EXAMPLE_1, "(73)"),
    claim=Rounds(A, [["0.401", "0.198", "0.401"], ["0.198", "0.401", "0.401"]]),
    inputs=(),
)

worked_example_output = Theorem(
    name="worked_example_output",
    source=Source(TUTORIAL, EXAMPLE_1, "(75)–(77)"),
    claim=Rounds(A * V, [["1.203", "0.797"], ["0.797", "1.203"]]),
    inputs=(),
)

# -- §11.2: temperature effects on the scores [2, 1, 0] --------------------------------------

EXAMPLE_2 = "§11.2 Example 2: Temperature Effects"
scores_2 = sp.Matrix([[2, 1, 0]])
T = sp.Symbol("T", positive=True)
temperatures = [sp.Rational(1, 4), sp.Rational(1, 2), 1, 2]


def table_weights() -> sp.Matrix:
    rows = [list(softmax_rows(scores_2, t).row(0)) for t in temperatures]
    rows.append([sp.limit(w, T, sp.oo) for w in softmax_rows(scores_2, T).row(0)])  # T → ∞
    return sp.Matrix(rows)


def table_entropy(weights: sp.Matrix) -> sp.Matrix:
    return sp.Matrix([[-sum(p * sp.log(p) for p in weights.row(r) if p != 0)]
                      for r in range(weights.rows)])


weights_2 = table_weights()

worked_example_temperature_weights = Theorem(
    name="worked_example_temperature_weights",
    source=Source(TUTORIAL, EXAMPLE_2, "table, Weights column"),
    claim=Rounds(weights_2, [
        ["0.997", "0.003", "0.000"],
        ["0.876", "0.118", "0.006"],
        ["0.665", "0.245", "0.090"],
        ["0.474", "0.316", "0.211"],
        ["0.333", "0.333", "0.333"],
    ]),
    inputs=(),
    expect="refuted",
    note="The rows printed for T = 0.25, 0.5 and 2 do not match softmax(S/T); T = 1 and the "
    "limit T → ∞ (exactly 1/3) do.",
)

worked_example_temperature_weights_corrected = Theorem(
    name="worked_example_temperature_weights_corrected",
    source=Source(TUTORIAL, EXAMPLE_2, "table, Weights column, recomputed"),
    claim=Rounds(weights_2, [
        ["0.982", "0.018", "0.000"],
        ["0.867", "0.117", "0.016"],
        ["0.665", "0.245", "0.090"],
        ["0.506", "0.307", "0.186"],
        ["0.333", "0.333", "0.333"],
    ]),
    inputs=(),
    corrects="worked_example_temperature_weights",
)

worked_example_temperature_entropy = Theorem(
    name="worked_example_temperature_entropy",
    source=Source(TUTORIAL, EXAMPLE_2, "table, Entropy column"),
    claim=Rounds(table_entropy(weights_2), [["0.02"], ["0.42"], ["0.80"], ["1.02"], ["1.10"]]),
    inputs=(),
    expect="refuted",
    note="The entropies printed for T = 0.25, 0.5 and 1 are off; those for T = 2 and ∞ match.",
)

worked_example_temperature_entropy_corrected = Theorem(
    name="worked_example_temperature_entropy_corrected",
    source=Source(TUTORIAL, EXAMPLE_2, "table, Entropy column, recomputed"),
    claim=Rounds(table_entropy(weights_2), [["0.09"], ["0.44"], ["0.83"], ["1.02"], ["1.10"]]),
    inputs=(),
    corrects="worked_example_temperature_entropy",
)

# -- §11.3: the softmax Jacobian of s = [1, 2] ----------------------------------------------

EXAMPLE_3 = "§11.3 Example 3: Softmax Jacobian Verification"
a = softmax_rows(sp.Matrix([[1, 2]])).row(0)

worked_example_softmax = Theorem(
    name="worked_example_softmax",
    source=Source(TUTORIAL, EXAMPLE_3, "(78)"),
    claim=Rounds([list(a)], [["0.269", "0.731"]]),
    inputs=(),
)

worked_example_jacobian = Theorem(
    name="worked_example_jacobian",
    source=Source(TUTORIAL, EXAMPLE_3, "(79)–(80)"),
    claim=Rounds(
        [[a[r] * (int(r == c) - a[c]) for c in range(2)] for r in range(2)],
        [["0.197", "-0.197"], ["-0.197", "0.197"]],
    ),
    inputs=(),
)
