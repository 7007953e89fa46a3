"""The checker itself: planted false theorems are refuted, true ones pass, records replay."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from sample_theorems import SAMPLE

from attnproof.cli import main as cli_main
from attnproof.numeric import NumericRecord, available_configurations, check
from attnproof.numeric._strategies import Structure, fill_batch, from_theorem, profile
from attnproof.numeric._tolerance import format_truth_ulps
from attnproof.symbolic import (
    BFLOAT16,
    FLOAT16,
    FLOAT32,
    Defined,
    Dim,
    Equals,
    Positive,
    Scalar,
    Simplex,
    Source,
    Tensor,
    Theorem,
    discover,
    lse,
    softmax,
)
from tests.backends import require_backend

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

SAMPLE_FILE = Path(__file__).with_name("sample_theorems.py")
RECORD_FIELDS = ["backend", "dtype", "device", "mode", "status", "examples", "instances",
                 "max_error_ulps", "max_error_bits", "seconds", "counterexample", "replay",
                 "reason", "ground_truth_ulps", "undecided", "refutes"]


def _tiny(name, beta_on_rhs):
    n = Dim("n")
    j, k = n.indices("j k")
    x = Tensor("x", (n,))
    temperature = Scalar("T", Positive(0.1, 10.0))
    weights = Defined("w", (j,), softmax(x[j], j, 1 / temperature.symbol))
    beta = 1 / temperature.symbol if beta_on_rhs else 1
    claim = Equals(sp.Derivative(weights[j], x[k]),
                   beta * weights[j] * (sp.KroneckerDelta(j, k) - weights[k]))
    return Theorem(name, Source("test", "inline"), claim, inputs=(x, temperature),
                   definitions=(weights,))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_true_tiny_theorem_passes_and_false_one_fails(backend):
    true = check(_tiny("tiny_true", beta_on_rhs=True), backend, "float64", profile="quick")
    false = check(_tiny("tiny_false", beta_on_rhs=False), backend, "float64", profile="quick")
    if true.status == "skipped":
        pytest.skip(true.reason)
    assert true.status == "passed", true.reason
    assert false.status == "failed"
    assert false.counterexample["error_ulps"] > 1e6
    assert false.replay.startswith("attnproof replay tiny_false")


def test_record_has_exactly_the_documented_fields():
    record = check(_tiny("tiny_true", True), "numpy", "float64", profile="quick")
    assert list(record.to_json()) == RECORD_FIELDS
    assert json.loads(json.dumps(record.to_json()))["status"] == "passed"
    assert record.instances >= record.examples > 0


def test_the_record_is_the_type_the_results_carry_and_survives_its_json():
    from attnproof.numeric import NumericStatus
    from attnproof.report import result_from_records

    record = check(_tiny("tiny_false", False), "numpy", "float64", profile="quick")
    assert record.status is NumericStatus.FAILED
    again = NumericRecord.from_json(json.loads(json.dumps({"theorem": "t", **record.to_json()})))
    assert again.to_json() == record.to_json() and again.status is NumericStatus.FAILED
    result = result_from_records({"name": "t", "source": "s", "expect": "refuted"}, None, [again])
    assert result.numeric == [again] and (result.status, result.ok) == ("refuted", True)


def test_default_profile_checks_at_least_a_thousand_instances():
    assert profile("default").truth.instances >= 1000
    assert profile("default").formats.instances >= 1000  # float32 too


@pytest.mark.parametrize("theorem", SAMPLE, ids=lambda t: t.name)
def test_sample_verdicts_in_float64_and_float32(theorem):
    for dtype in ("float64", "float32"):
        record = check(theorem, "numpy", dtype, profile="quick")
        expected = "passed" if theorem.expect == "holds" else "failed"
        assert record.status == expected, (dtype, record.reason, record.counterexample)


def test_unshifted_log_sum_exp_is_true_in_float64_but_unstable_in_float32():
    n = Dim("n")
    (k,) = n.indices("k")
    x = Tensor("x", (n,))
    naive = sp.log(sp.Sum(sp.exp(x[k]), (k, 0, n.symbol - 1)))
    claim = Theorem("naive_lse", Source("t", "s"), Equals(naive, lse(x[k], k)), inputs=(x,))
    assert check(claim, "numpy", "float64", profile="quick").status == "passed"
    low = check(claim, "numpy", "float32", profile="quick")
    assert low.status == "failed"
    assert low.counterexample["comparison"] == "lhs in float32"


def test_exp_ratio_is_rewritten_so_float32_stays_stable():
    n = Dim("n")
    j, k = n.indices("j k")
    x = Tensor("x", (n,))
    naive = sp.exp(x[j]) / sp.Sum(sp.exp(x[k]), (k, 0, n.symbol - 1))
    claim = Theorem("ratio_softmax", Source("t", "s"), Equals(naive, softmax(x[j], j)),
                    inputs=(x,))
    assert check(claim, "numpy", "float32", profile="quick").status == "passed"


def test_unknown_device_and_missing_dtype_are_skipped_with_a_reason():
    theorem = _tiny("tiny_true", True)
    record = check(theorem, "numpy", "float64", device="gpu:7", profile="quick")
    assert record.status == "skipped" and "gpu:7" in record.reason
    record = check(theorem, "numpy", "float8_e4m3fn", profile="quick")
    assert record.status == "skipped" and "float8_e4m3fn" in record.reason
    require_backend("jax")  # without JAX the record is skipped as "not installed" instead
    record = check(theorem, "jax", "float64", mode="compiled", profile="quick")
    assert record.status == "skipped" and "compiled" in record.reason


def _off_by(name, factor):
    n = Dim("n")
    (j,) = n.indices("j")
    x = Tensor("x", (n,))
    temperature = Scalar("T", Positive(1e-3, 1e3))
    weights = Defined("w", (j,), softmax(x[j], j, 1 / temperature.symbol))
    return Theorem(name, Source("test", "inline"), Equals(weights[j] * factor, weights[j]),
                   inputs=(x, temperature), definitions=(weights,), expect="refuted")


def test_a_slip_below_a_formats_rounding_is_not_decisive_there_but_refuted_above():
    slip = _off_by("one_percent_off", 1 + sp.Rational(1, 100))
    assert check(slip, "numpy", "float64", profile="quick").status == "failed"
    refuted_in_format = check(slip, "numpy", "float32", profile="quick")
    assert refuted_in_format.status == "failed"
    # the record's worst error is the lhs-rhs difference that failed it, not a side's rounding
    assert refuted_in_format.max_error_ulps > format_truth_ulps(FLOAT32)
    coarse = check(slip, "numpy", "bfloat16", profile="quick")
    assert coarse.status == "not-decisive", coarse.reason
    assert "bfloat16" in coarse.reason


def test_every_record_reports_error_in_ulps_bits_and_truth_against_50_digits(catalog):
    theorem = catalog.by_name()["softmax_jacobian_temperature"]
    for dtype in ("float64", "float16"):
        record = check(theorem, "numpy", dtype, profile="quick")
        assert record.status == "passed"
        assert record.max_error_bits == pytest.approx(np.log2(1 + record.max_error_ulps))
        if dtype == "float64":  # the record that decides truth is measured against mpmath
            assert 0 <= record.ground_truth_ulps < 16
        else:
            assert record.ground_truth_ulps is None


def test_ground_truth_catches_a_compiled_value_that_is_wrong(catalog, monkeypatch):
    from wrong_plans import check_with_scaled_rhs

    record = check_with_scaled_rhs(catalog.by_name()["free_energy_identity"], 1.5, monkeypatch)
    assert record.status == "inconsistent" and "50-digit" in record.reason
    assert record.ground_truth_ulps > 1e6


def test_finite_differences_side_with_the_true_derivative(catalog):
    from attnproof.numeric._ground_truth import finite_difference
    from attnproof.numeric._plan import plan_for

    theorem = catalog.by_name()["softmax_jacobian_temperature"]
    plan = plan_for(theorem, "numpy")
    structure = Structure((("n_q", 2), ("n_k", 3)), (), 3)
    arrays = fill_batch(theorem, structure, 4)
    instance = {k: v[1] for k, v in arrays.items()}
    entry = {"i": 1, "j": 2, "m": 1, "n": 0}
    difference = finite_difference(plan, instance, entry, structure.size_map)
    sizes = {**structure.size_map, "batch": 4}
    exact = plan.sides["rhs"](np, arrays, sizes)[1][1, 2, 1, 0]
    assert difference.step == pytest.approx(
        np.cbrt(np.finfo(float).eps) * max(1, abs(instance["S"][1, 0])))
    assert abs(difference.estimate - exact) <= difference.uncertainty
    assert difference.uncertainty < 1e-3 * abs(exact)  # sharp enough to side with one value


def test_rows_a_format_cannot_hold_are_not_checked_in_it():
    from attnproof.numeric._tolerance import representable

    exponent_scale, largest = np.array([10.0, 1e5, 300.0]), np.array([1.0, 1.0, 1.0])
    assert representable(exponent_scale, largest, FLOAT32).tolist() == [True, True, True]
    assert representable(exponent_scale, largest, FLOAT16).tolist() == [True, False, True]
    assert representable(exponent_scale, largest, BFLOAT16).tolist() == [True, False, False]
    assert not representable(np.zeros(1), np.array([1e5]), FLOAT16)[0]


def test_a_record_that_keeps_fewer_rows_than_it_drew_draws_one_more_batch_of_the_same_shape():
    """float16 cannot hold the exponentials of rows scaled to ±100: the record's one batch
    keeps fewer than 512 instances, so a second batch of the same sizes is drawn, compiled
    once on JAX; float32 keeps every row and draws nothing more."""
    pytest.importorskip("jax")
    from jax import monitoring
    from sample_theorems import softmax_jacobian

    from attnproof.numeric._search import search

    compiles, listening = [], [True]  # JAX has no public way to remove a listener
    monitoring.register_event_duration_secs_listener(
        lambda event, duration, **_: compiles.append(event) if listening[0]
        and event == "/jax/core/compile/backend_compile_duration" else None)
    asked = profile().half_formats
    record, _ = search(softmax_jacobian, "jax", "float16", seed=3)
    listening[0] = False
    assert record.examples == asked.examples + 1
    assert asked.batch < record.instances, "one batch holds at most 512: the second one counts"
    assert len(compiles) == 1, "the second batch reuses the first one's program"
    full, _ = search(softmax_jacobian, "numpy", "float32", seed=3)
    assert (full.examples, full.instances) == (2, 1024)


def test_replay_command_reproduces_the_failure(capsys):
    catalog = discover([SAMPLE_FILE])
    theorem = catalog.by_name()["kl_symmetric"]
    record = check(theorem, "numpy", "float64", profile="quick")
    assert record.status == "failed"
    command, *argv = shlex.split(record.replay)
    assert command == "attnproof"
    assert cli_main(argv) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["failing_row"] is not None
    # it says which instance it prints: the row as drawn, not the shrunk one the reports show
    assert replayed["instance"] == (f"row {replayed['failing_row']} of the batch rebuilt from "
                                    f"seed {argv[argv.index('--seed') + 1]}, as drawn (the "
                                    "reports show it shrunk toward round values)")
    assert record.replay.endswith("--theorems tests/numeric/sample_theorems.py")


def test_replay_of_a_catalog_theorem_needs_no_theorem_file(catalog):
    record = check(catalog.by_name()["hopfield_energy_gradient"], "numpy", "float64",
                   profile="quick")
    assert record.status == "failed" and "--theorems" not in record.replay


def test_strategies_draw_few_shapes_simplex_rows_and_temperatures_away_from_one():
    theorem = next(t for t in SAMPLE if t.name == "free_energy_gap")
    shapes = {s.sizes for s in _draws(from_theorem(theorem, profile("default")), 60)}
    assert (("n_q", 1), ("n_k", 1)) in shapes and (("n_q", 8), ("n_k", 8)) in shapes
    assert len(shapes) == 4
    arrays = fill_batch(theorem, Structure((("n_q", 3), ("n_k", 4)), (), 5), 512)
    np.testing.assert_allclose(arrays["p"].sum(axis=-1), 1.0)
    assert (np.abs(np.log(arrays["T"])) >= 0.1).all()
    assert arrays["T"].min() < 1e-2 and arrays["T"].max() > 1e2  # log-uniform over 1e-3..1e3
    peaks = np.abs(arrays["S"]).max(axis=(1, 2))
    assert peaks.max() > 88.7  # overflows a naive float32 softmax (float16's at 11.1)
    tied = (arrays["S"] == arrays["S"].max(axis=-1, keepdims=True)).sum(axis=-1) > 1
    assert tied.any()


def test_block_sizes_mostly_do_not_divide_the_key_count(catalog):
    theorem = catalog.by_name()["online_softmax_blockwise"]
    draws = _draws(from_theorem(theorem, profile("default")), 40)
    assert any(s.size_map["n_k"] % s.integer_map["B"] for s in draws)


def _draws(strategy, count):
    from hypothesis import given, settings

    seen = []

    @settings(max_examples=count, database=None)
    @given(strategy)
    def collect(value):
        seen.append(value)

    collect()
    return seen


def test_importing_symbolic_and_numeric_does_not_import_jax():
    code = "import sys, attnproof, attnproof.numeric; print('jax' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_available_configurations_lists_numpy_and_names_devices():
    configurations = available_configurations()
    assert ("numpy", "float64", "cpu", "eager") in configurations
    assert all(":" not in device or device.split(":")[1].isdigit()
               for _, _, device, _ in configurations)


def test_profiles_choose_modes_and_the_full_list_has_them_all():
    pytest.importorskip("jax")
    modes = {name: {m for b, _, _, m in available_configurations(profile=name) if b == "jax"}
             for name in ("quick", "default", "thorough")}
    assert modes == {"quick": {"jit"}, "default": {"jit"}, "thorough": {"jit", "eager"}}
    assert {m for b, _, _, m in available_configurations() if b == "jax"} == {"jit", "eager"}


def test_simplex_inputs_are_drawn_for_lemma_free_claims():
    n = Dim("n")
    (j,) = n.indices("j")
    p = Tensor("p", (n,), Simplex())
    claim = Theorem("simplex_sums_to_one", Source("t", "s"),
                    Equals(sp.Sum(p[j], (j, 0, n.symbol - 1)), 1), inputs=(p,))
    assert isinstance(check(claim, "numpy", "float64", profile="quick"), NumericRecord)
    assert check(claim, "numpy", "float64", profile="quick").status == "passed"


def test_a_fixed_point_counterexample_shows_the_fixed_point_it_was_evaluated_at(catalog):
    record = check(catalog.by_name()["hopfield_fixed_point"], "numpy", "float64", profile="quick")
    assert record.status == "failed"
    example = record.counterexample
    K = np.asarray(example["inputs"]["K"])
    xi = np.asarray(example["inputs"]["xi"])
    beta = example["scalars"]["beta"]
    logits = beta * K @ xi
    weights = np.exp(logits - logits.max())
    update = K.T @ (weights / weights.sum())
    # six printed digits: xi is (to them) a fixed point, and the gradient there is (1 - beta) xi
    assert np.allclose(xi, update, rtol=1e-4, atol=1e-4 * np.abs(xi).max())
    a = example["entry"]["a"]
    assert example["lhs"] == pytest.approx((1 - beta) * xi[a], rel=1e-4)


def test_masks_are_drawn_with_every_pattern_and_fully_masked_rows(catalog):
    theorem = catalog.by_name()["masking_softmax_jacobian"]
    masks = fill_batch(theorem, Structure((("n_q", 4), ("n_k", 4)), (), 3), 512)["M"]
    assert set(np.unique(masks)) == {0.0, 1.0}
    fully_masked = (masks == 0).all(axis=-1)
    assert fully_masked[0, 0] and 0.05 < fully_masked[:, 0].mean() < 0.25
    causal = np.tril(np.ones((4, 4)))
    rest = ~fully_masked[:, 0]
    assert (masks[rest] == causal).all(axis=(1, 2)).any()
    assert (masks[rest] == 1).all(axis=(1, 2)).any()
    padded = [(row == row[0]).all() and not row[0].all() and (np.diff(row[0]) <= 0).all()
              for row in masks[rest]]
    assert any(padded)  # every row keeps the same leading keys


def test_a_masked_backward_pass_with_unmasked_weights_is_refuted(planted):
    theorem = planted.by_name()["planted_masked_jacobian_with_unmasked_weights"]
    record = check(theorem, "numpy", "float64", profile="quick")
    assert record.status == "failed"
    assert 0 in np.asarray(record.counterexample["inputs"]["M"])


def test_a_wrong_autodiff_is_an_error_of_ours_when_finite_differences_side_with_the_claim(
        catalog, monkeypatch):
    pytest.importorskip("jax")  # NumPy has no autodiff
    from attnproof.numeric import _plan, _search

    theorem = catalog.by_name()["softmax_jacobian_temperature"]
    right = _plan.Runner._autodiff
    monkeypatch.setattr(_plan.Runner, "_autodiff",
                        lambda self, xp, arrays, sizes: right(self, xp, arrays, sizes) * 1.5)
    # as when no instance was small enough for the 50-digit check, which would answer first
    monkeypatch.setattr(_search, "ground_truth_error", lambda *args: None)
    _plan.runner_for.cache_clear()
    try:
        record = check(theorem, "jax", "float64", profile="quick")
    finally:
        _plan.runner_for.cache_clear()
    assert record.status == "error", record.reason
    assert "finite differences" in record.reason
    assert record.counterexample["finite_difference"]["agrees_with"] == "rhs"


def test_exact_evaluation_keeps_a_tiny_masked_sum_beside_the_fully_masked_indicator(catalog):
    from attnproof.numeric._ground_truth import _exact_function

    theorem = catalog.by_name()["masking_rows_sum_to_one_unless_fully_masked"]
    lhs = theorem.expand(sp.sympify(theorem.claim.lhs))
    evaluate = _exact_function(theorem, lhs, theorem.free_indices, {"n_q": 1, "n_k": 1})
    # exp(-1e5) is far below 50 digits of the 1 in Σ + (1 − M): added as Σ + 1 − M it is lost
    instance = {"S": np.array([[-100.0]]), "M": np.array([[1.0]]), "T": np.array(1e-3)}
    assert evaluate(instance).tolist() == [1.0]
