"""Hand-built reports covering every field of the results schema."""

from attnproof.numeric import NumericRecord
from attnproof.report import ErrorEntry, Report, SymbolicOutcome, TheoremResult


def sample_report() -> Report:
    proved = TheoremResult(
        name="softmax_rows", source="tutorial §6.3, eq. (39)", expect="holds", status="proved",
        ok=True, note="A note with | pipes and *stars*.", statement_latex=r"\sum_{j} A_{i j} = 1",
        definitions_latex=[r"A_{i j} = \operatorname{softmax}_{j}(S_{i j})"],
        origin="/tmp/t/softmax.py",
        assumptions=[{"name": "S", "latex": "S", "domain": "real in [-3, 3]"},
                     {"name": "T", "latex": "T",
                      "domain": "positive in [0.001, 1000] (log-uniform)"},
                     {"name": "n_k", "latex": "n_{k}", "domain": "sizes 1–8 in numeric checks"}],
        symbolic=SymbolicOutcome("proved", "sum normal form (all sizes)", None, 0.25),
        numeric=[NumericRecord("numpy", "float64", "cpu", "eager", "passed", 20, 1280, 4.0,
                                2.3, 1.5, ground_truth_ulps=0.5),
                 NumericRecord("jax", "bfloat16", "cpu", "jit", "passed", 20, 1280, 2.0,
                                1.58, 0.5)],
    )
    refuted = TheoremResult(
        name="wrong_claim", source="tutorial §9.2", expect="refuted", status="refuted", ok=True,
        statement_latex="x_{i} = 2 x_{i}", origin="/tmp/t/wrong.py",
        symbolic=SymbolicOutcome("refuted", "exact counterexample at small sizes", None, 0.1,
                                 {"sizes": {"n": 1}, "values": {"x[0]": "1"}}, "-x[i]"),
        numeric=[NumericRecord("jax", "float64", "cpu", "jit", "failed", 3, 192, 1e15, 50.0,
                                2.0, {"x[0]": 1.0}, "attnproof replay wrong_claim --seed 1"),
                 NumericRecord("numpy", "bfloat16", "cpu", "eager", "not-decisive", 20, 1280,
                                3.0, 2.0, 0.4, reason="false in float64 but within bfloat16's "
                                "rounding bound: this format cannot decide the claim")],
    )
    corrected = TheoremResult(
        name="right_claim", source="tutorial §9.2, corrected", expect="holds", status="proved",
        ok=True, corrects="wrong_claim", origin="/tmp/t/wrong.py",
        symbolic=SymbolicOutcome("proved", "sum normal form (all sizes)", None, 0.1),
    )
    return Report(
        theorems=[proved, refuted, corrected],
        errors=[ErrorEntry("/tmp/t/broken.py", None, "SyntaxError: ``` invalid | syntax")],
        partial=False, generated="2025-01-01T00:00:00+00:00", run={"by": "attnproof prove"},
        environment={"python": "3.11.7", "sympy": "1.14.0", "numpy": "2.4.6", "jax": None,
                     "mlx": None, "devices": ["numpy:cpu"]},
    )
