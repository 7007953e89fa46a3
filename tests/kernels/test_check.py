"""The kernel check's own behaviour: declarations, the verdict rule, conventions, layouts,
kernels that raise, the truth, and the command line."""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnproof.cli import main
from attnproof.kernels import Case, Kernel, KernelError, check_kernel, replay
from attnproof.kernels._frameworks import rounded
from attnproof.kernels._truth import Inputs, reference, truth
from attnproof.symbolic import BFLOAT16, FLOAT32, FLOAT64, format_named

from . import planted


def _variant(**changes) -> Kernel:
    return dataclasses.replace(planted.correct, **changes)


# -- declarations --------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("layout", "bhsx"), ("layout", "bhss"), ("mask", "float"), ("fully_masked", "mean"),
    ("causal_alignment", "left"), ("dtypes", ("float8",)), ("framework", "tensorflow"),
    ("compute_dtype", "float128"), ("mask", ()), ("mask", None),
])
def test_a_bad_declaration_names_the_kernel_and_the_field(field, value):
    with pytest.raises(KernelError, match=rf"kernel 'correct', {field.split('_')[0]}"):
        _variant(**{field: value})


def test_numpy_kernels_need_an_explicit_vjp():
    with pytest.raises(KernelError, match="numpy has no autodiff"):
        _variant(gradients="autodiff")


# -- the truth -----------------------------------------------------------------------------------


def test_the_plain_float64_reference_agrees_with_the_compiled_statements():
    rng = np.random.default_rng(1)
    b, h, kv, n_q, n_k, d_k, d_v = 2, 4, 2, 5, 7, 3, 6
    keep = rng.random((b, h, n_q, n_k)) < 0.6
    keep[0, 0, 0] = False  # a fully masked row: zero weights in both
    x = Inputs(rng.standard_normal((b, h, n_q, d_k)), rng.standard_normal((b, kv, n_k, d_k)),
               rng.standard_normal((b, kv, n_k, d_v)), keep,
               rng.standard_normal((b, h, n_q, d_v)), 0.7)
    exact, plain = truth(x), reference(x, FLOAT64, FLOAT64)
    for name, (value, _) in exact.items():
        np.testing.assert_allclose(plain[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    assert np.all(exact["out"][0][0, 0, 0] == 0)


def test_a_bias_enters_the_statements_as_features_and_agrees_with_the_plain_reference():
    rng = np.random.default_rng(2)
    b, h, kv, n_q, n_k, d_k, d_v = 2, 4, 2, 5, 7, 3, 6
    x = Inputs(rng.standard_normal((b, h, n_q, d_k)), rng.standard_normal((b, kv, n_k, d_k)),
               rng.standard_normal((b, kv, n_k, d_v)), rng.random((b, h, n_q, n_k)) < 0.7,
               rng.standard_normal((b, h, n_q, d_v)), 0.7,
               bias=5 * rng.standard_normal((b, h, n_q, n_k)))
    exact, plain = truth(x), reference(x, FLOAT64, FLOAT64)
    for name, (value, _) in exact.items():
        np.testing.assert_allclose(plain[name], value, rtol=1e-10, atol=1e-12, err_msg=name)
    unbiased = truth(dataclasses.replace(x, bias=None))["out"][0]
    assert np.max(np.abs(unbiased - exact["out"][0])) > 0.1  # the bias matters


# -- the verdict rule ----------------------------------------------------------------------------


def _float32_inside(q, k, v, **keywords):
    """A float64-in, float64-out kernel that computes in float32."""
    out, lse = planted.attention(q.astype(np.float32), k.astype(np.float32),
                                 v.astype(np.float32), **keywords)
    return out.astype(q.dtype), lse.astype(q.dtype)


def test_a_kernel_computing_in_float32_conforms_at_float32_accuracy():
    kernel = _variant(fn=_float32_inside, dtypes=("float64",), compute_dtype="float32",
                      gradients=None)
    cell = check_kernel(kernel, properties=["forward"], examples=10).cells[0]
    assert cell.status == "conforms", cell


def test_the_same_kernel_declared_float64_fails():
    kernel = _variant(fn=_float32_inside, dtypes=("float64",), compute_dtype=None,
                      gradients=None)
    cell = check_kernel(kernel, properties=["forward"], examples=10).cells[0]
    assert cell.status == "fails"
    assert cell.ratio > 1e3


def _additive(q, k, v, mask=None, **keywords):
    keep = None if mask is None else mask == 0
    return planted.attention(q, k, v, mask=keep, **keywords)


def test_an_additive_mask_kernel_gets_masks_in_other_dtypes_too():
    kernel = _variant(fn=_additive, mask="additive", gradients=None)
    seen = []
    result = check_kernel(kernel, properties=["mask", "fully_masked_rows"], examples=15,
                          on_case=lambda case, dtype: seen.append(case.mask_dtype))
    assert result.ok, result.failures()
    assert {None, "float32", "float64"} <= set(seen)


# -- conventions, layouts, raising kernels -------------------------------------------------------


def _mean_of_v_when_fully_masked(q, k, v, mask=None, **keywords):
    out, lse = planted.attention(q, k, v, mask=mask, **keywords)
    if mask is not None:
        rows = ~np.any(mask, axis=-1)
        out = np.where(rows[..., None], np.mean(v, axis=2, keepdims=True), out).astype(q.dtype)
    return out, lse


def test_an_undeclared_convention_is_a_finding_not_a_failure():
    kernel = _variant(fn=_mean_of_v_when_fully_masked, fully_masked=None, gradients=None)
    cell = check_kernel(kernel, properties=["fully_masked_rows"], examples=10).cells[0]
    assert cell.status == "conforms"
    assert cell.conventions == {"fully_masked": "mean_v", "fully_masked_lse": "-inf"}


def test_a_declared_convention_the_kernel_breaks_fails():
    kernel = _variant(fn=_mean_of_v_when_fully_masked, gradients=None)  # declares zeros
    cell = check_kernel(kernel, properties=["fully_masked_rows"], examples=10).cells[0]
    assert cell.status == "fails"
    assert "declared returns zeros, returns the mean of V" in cell.counterexample["message"]


def _bshd_out(q, k, v, **keywords):
    out, lse = planted.attention(q, k, v, **keywords)
    return out.transpose(0, 2, 1, 3), lse


def test_a_wrong_axis_order_names_the_expected_and_the_actual_layout():
    kernel = _variant(fn=_bshd_out, gradients=None)
    cell = check_kernel(kernel, properties=["forward"], examples=10).cells[0]
    assert cell.status == "layout"
    message = cell.counterexample["message"]
    assert "out: expected layout 'bhsd'" in message and "reads as layout 'bshd'" in message


def _raises_on_one_key(q, k, v, **keywords):
    if k.shape[2] == 1:
        raise IndexError("no second key to pair with")
    return planted.attention(q, k, v, **keywords)


def test_a_kernel_that_raises_is_reported_with_sizes_traceback_and_replay():
    kernel = _variant(fn=_raises_on_one_key, gradients=None)
    cell = check_kernel(kernel, properties=["forward"], examples=10, spec="my.module:k").cells[0]
    assert cell.status == "raised"
    assert cell.counterexample["sizes"].startswith("b=1 h=1 n_q=1 n_k=1")
    assert "IndexError: no second key to pair with" in cell.counterexample["message"]
    assert "_raises_on_one_key" in cell.counterexample["message"]  # a traceback frame
    assert cell.replay.startswith("attnproof replay forward --kernel my.module:k --dtype float32")


def test_replay_runs_the_shrunk_case_again():
    result = replay(planted.no_max_shift, "row_offset", "float32", Case(offset="1e4"))
    assert result.status == "fail"
    assert replay(planted.correct, "row_offset", "float32", Case(offset="1e4")).status == "pass"


def test_inputs_are_rounded_to_the_dtype_before_the_truth_sees_them():
    values = np.array([1 / 3])
    assert rounded(values, BFLOAT16)[0] == 0.333984375


# -- the command line ----------------------------------------------------------------------------


def test_the_command_writes_the_matrix_and_exits_by_the_verdict(tmp_path, capsys):
    spec = ["--property", "forward", "--examples", "5", "--out", str(tmp_path)]
    assert main(["kernels", "--kernel", "tests.kernels.planted:correct", *spec]) == 0
    assert main(["kernels", "--kernel", "tests.kernels.planted:no_max_shift",
                 "--property", "row_offset", *spec]) == 1
    text = (tmp_path / "conformance.md").read_text()
    assert "❌" in text
    assert "attnproof replay row_offset --kernel tests.kernels.planted:no_max_shift" in text
    assert (tmp_path / "conformance.json").exists()


def test_the_command_replays_a_case(capsys):
    argv = ["kernels", "--kernel", "tests.kernels.planted:no_max_shift", "--property",
            "row_offset", "--dtype", "float32", "--case", '{"offset":"1e4"}']
    assert main(argv) == 1
    assert '"status": "fail"' in capsys.readouterr().out


def test_a_printed_replay_command_runs_as_printed(capsys):
    cell = check_kernel(planted.no_max_shift, properties=["row_offset"], examples=5,
                        spec="tests.kernels.planted:no_max_shift").cells[0]
    argv = shlex.split(cell.replay)
    assert argv[:3] == ["attnproof", "replay", "row_offset"]  # one command for every replay
    assert main(argv[1:]) == 1
    assert '"status": "fail"' in capsys.readouterr().out


def test_a_kernel_case_replay_refuses_a_theorems_options(capsys):
    argv = ["replay", "row_offset", "--kernel", "tests.kernels.planted:no_max_shift",
            "--dtype", "float32", "--seed", "3", "--case", '{"offset":"1e4"}']
    assert main(argv) == 2
    assert "--seed: for a theorem's record, not a kernel's case" in capsys.readouterr().err


def test_the_command_refuses_what_is_not_a_kernel(capsys):
    assert main(["kernels", "--kernel", "tests.kernels.planted:BLOCK"]) == 2
    assert "not an attnproof Kernel" in capsys.readouterr().err


def test_an_unknown_property_names_the_closest_one(capsys):
    with pytest.raises(ValueError, match=r"unknown property 'masks' \(did you mean 'mask'\?\)"):
        check_kernel(planted.correct, properties=["masks"])
    assert main(["kernels", "--kernel", "tests.kernels.planted:correct", "--property",
                 "row_ofset"]) == 2
    error = capsys.readouterr().err
    assert "did you mean 'row_offset'" in error and "masked_garbage" in error


def test_a_kernel_no_module_holds_replays_by_a_python_snippet():
    kernel = _variant(fn=_raises_on_one_key, gradients=None)  # held by no module attribute
    cell = check_kernel(kernel, properties=["forward"], examples=10).cells[0]
    assert cell.replay.startswith("from attnproof.kernels import Case, replay\n")
    assert "replay(kernel, 'forward', 'float32', Case.from_json(" in cell.replay


def test_a_failing_cell_shows_its_counterexample_s_ratio():
    cell = check_kernel(planted.lse_ignores_mask, properties=["mask"], examples=10).cells[0]
    assert cell.status == "fails"
    assert cell.ratio == cell.counterexample["ratio"] > 2
    again = replay(planted.lse_ignores_mask, "mask", "float32",
                   Case.from_json(cell.counterexample["case"]))
    assert again.ratio == cell.ratio


# -- the cases ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sentinel", ["-10000", "-50000"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_a_row_below_a_sentinel_has_every_score_below_it(sentinel, dtype):
    from attnproof.kernels._cases import instance

    for seed in range(5):
        case = Case(n_q=6, n_k=9, d_k=8, d_v=8, heads=2, kv_heads=2, fill="spikes",
                    offset=f"below:{sentinel}", seed=seed)
        x = instance(case, format_named(dtype), FLOAT32)
        scores = x.scale * np.einsum("bhqd,bhkd->bhqk", x.q, x.k)
        assert np.all(scores < float(sentinel)), (seed, scores.max())


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_range_offsets_reach_the_formats_end_and_stay_representable(dtype):
    from attnproof.kernels._cases import instance, largest_offset

    case = Case(n_q=3, n_k=4, offset="range:-1", scale=0.5)
    dtype = format_named(dtype)
    x = instance(case, dtype, FLOAT32)
    scores = x.scale * np.einsum("bhqd,bhkd->bhqk", x.q, x.k)
    top = largest_offset(dtype, FLOAT32, 0.5)
    assert np.all(np.isfinite(scores)) and np.all(scores <= -top / 2 * 0.99)
    assert np.all(np.isfinite(rounded(x.q, dtype))) and np.all(np.isfinite(rounded(x.k, dtype)))


@pytest.mark.parametrize("garbage", ["nan", "inf", "-inf", "huge"])
def test_garbage_goes_only_where_no_query_looks_and_the_truth_does_not_see_it(garbage):
    from attnproof.kernels._cases import instance, unused_keys

    case = Case(n_q=3, n_k=7, batch=3, heads=4, kv_heads=2, mask="padding", garbage=garbage,
                seed=5)
    x, clean = instance(case, FLOAT32, FLOAT32), instance(dataclasses.replace(
        case, garbage=None), FLOAT32, FLOAT32)
    unused = unused_keys(x.keep, x.group)
    assert unused.any()
    for argument in "kv":
        spoiled = x.passed(argument) != getattr(clean, argument)
        assert np.any(spoiled) and not np.any(spoiled & ~unused[..., None])
        assert np.array_equal(getattr(x, argument), getattr(clean, argument))


# -- head sharing --------------------------------------------------------------------------------


def _one_kv_head_only(q, k, v, **keywords):
    """Broadcasts a single K/V head to every query head (so it cannot take 2 of 4)."""
    shape = (q.shape[0], q.shape[1], *k.shape[2:])
    k, v = np.broadcast_to(k, shape), np.broadcast_to(v, (*shape[:3], v.shape[-1]))
    return planted.attention(q, k, v, **keywords)


def test_a_kernel_declared_gqa_that_shares_one_head_only_is_a_declaration_error():
    kernel = _variant(fn=_one_kv_head_only, gradients=None)  # declares gqa=True
    result = check_kernel(kernel, properties=["gqa", "mqa"], examples=10)
    gqa, mqa = result.cell("gqa", "float32"), result.cell("mqa", "float32")
    assert gqa.status == "declaration", gqa
    assert "declare mqa=True, gqa=False" in gqa.counterexample["message"]
    assert "could not be broadcast" in gqa.counterexample["message"]
    assert mqa.status == "conforms"
    declared = check_kernel(_variant(fn=_one_kv_head_only, gradients=None, gqa=False, mqa=True),
                            properties=["gqa", "mqa"], examples=10)
    assert [c.status for c in declared.cells] == ["n/a", "conforms"]


# -- score modifications -------------------------------------------------------------------------


def test_the_truth_through_an_identity_score_mod_is_the_statements_truth():
    from attnproof.kernels._score_mod import from_callable

    rng = np.random.default_rng(3)
    b, h, kv, n_q, n_k, d_k, d_v = 2, 4, 2, 5, 7, 3, 6
    x = Inputs(rng.standard_normal((b, h, n_q, d_k)), rng.standard_normal((b, kv, n_k, d_k)),
               rng.standard_normal((b, kv, n_k, d_v)), rng.random((b, h, n_q, n_k)) < 0.7,
               rng.standard_normal((b, h, n_q, d_v)), 0.7)
    through = truth(dataclasses.replace(x, score_mod=from_callable(_identity)))
    for name, (value, _) in truth(x).items():
        np.testing.assert_allclose(through[name][0], value, rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def _identity(score, batch, head, i, j):
    return score


def _distance_penalty(score, batch, head, i, j):
    return score - (head + 1) * (i - j) ** 2 / 8


def _penalised(q, k, v, mask=None, scale=None, **keywords):
    """Scores minus (head + 1)(i - j)²/8, through a bias (its own score_mod)."""
    h, n_q, n_k = q.shape[1], q.shape[2], k.shape[2]
    i, j = np.arange(n_q)[:, None], np.arange(n_k)[None, :]
    penalty = -(np.arange(h)[:, None, None] + 1) * (i - j) ** 2 / 8
    bias = np.broadcast_to(penalty, (q.shape[0], h, n_q, n_k)).astype(np.float32)
    float_mask = np.where(np.ones(bias.shape, bool) if mask is None else mask, bias, -np.inf)
    return planted.attention(q, k, v, mask=float_mask.astype(np.float32), scale=scale)


def test_a_kernel_with_its_declared_score_mod_conforms_and_another_mod_fails():
    kernel = _variant(fn=_penalised, score_mod=_distance_penalty, gradients=None,
                      causal_argument=None, merge=None, softcap_argument=None, mask="bool")
    result = check_kernel(kernel, properties=["score_mod", "forward", "split_kv"], examples=10)
    assert [c.status for c in result.cells] == ["conforms", "conforms", "n/a"], result.cells
    wrong = dataclasses.replace(kernel, score_mod=_identity)
    assert check_kernel(wrong, properties=["score_mod"], examples=10).cells[0].status == "fails"


def test_a_score_mod_that_is_not_sympy_is_a_declaration_error():
    with pytest.raises(KernelError, match="score_mod: must take SymPy symbols"):
        _variant(score_mod=lambda score, batch, head, i, j: np.tanh(score))


# -- biases and mask kinds -----------------------------------------------------------------------


def test_a_kernel_taking_boolean_and_float_masks_gets_both():
    seen = []
    result = check_kernel(planted.correct, properties=["mask", "bias"], examples=15,
                          on_case=lambda case, dtype: seen.append((case.mask_kind, case.bias)))
    assert result.ok, result.failures()
    assert {"bool", "bias"} <= {kind for kind, _ in seen}
    assert {"alibi", "gaussian", "large"} <= {bias for _, bias in seen}


def test_a_kernel_that_scales_its_bias_conforms_when_it_declares_so():
    declared = dataclasses.replace(planted.bias_scaled_too, bias_scaled=True)
    assert check_kernel(declared, properties=["bias"], examples=15).cells[0].status == \
        "conforms"


def test_a_merge_needs_a_kernel_that_returns_its_lse():
    with pytest.raises(KernelError, match="merge: must be a callable, of a kernel that returns"):
        _variant(returns_lse=False)


def test_the_matrix_is_written_through_the_reports_escaping():
    from attnproof.kernels._check import Cell, Conformance

    cell = Cell("forward", "float32", "cpu", "fails", ratio=3.0, cases=1,
                counterexample={"sizes": "n_q=1", "message": "worse | <b>"}, replay="replay")
    result = Conformance("k|<img>", "numpy", {"layout": "bhsd", "mask": "none",
                                              "gradients": "<function vjp>", "compute": {}},
                         [cell])
    text = result.to_markdown()
    assert "## k\\|\\<img\\> (numpy)" in text
    assert "gradients \\<function vjp\\>" in text
    assert "| forward O | ❌ 3.00× |" in text
    assert "```\nworse | <b>\n```" in text  # a listing keeps its text as it is


def test_a_kernel_computing_in_float32_stays_within_the_proved_float32_bound():
    kernel = _variant(fn=_float32_inside, dtypes=("float64",), compute_dtype="float32",
                      gradients=None)
    cell = check_kernel(kernel, properties=["forward"], examples=10).cells[0]
    assert cell.bound_ratio is not None and 0 < cell.bound_ratio <= 1, cell


def test_the_same_kernel_declared_float64_is_above_the_proved_float64_bound():
    kernel = _variant(fn=_float32_inside, dtypes=("float64",), compute_dtype=None,
                      gradients=None)
    result = check_kernel(kernel, properties=["forward"], examples=10)
    assert result.cells[0].bound_ratio > 1
    assert "⚠" in result.to_markdown()


def test_a_score_bias_has_no_proved_bound():
    kernel = planted.correct
    cell = check_kernel(kernel, properties=["bias"], examples=4).cells[0]
    assert cell.status == "conforms" and cell.bound_ratio is None


@pytest.mark.parametrize("argv", [
    ["--examples", "0"], ["--budget", "-1"],
    ["--property", "forward", "--dtype", "float32", "--case", "{bad"],
    ["--property", "forward", "--dtype", "float32", "--case", '{"n_x": 1}']])
def test_bad_kernel_options_are_one_line_and_exit_two(argv, capsys):
    try:
        code = main(["kernels", "--kernel", "tests.kernels.planted:correct", *argv])
    except SystemExit as exited:  # argparse's own usage error
        code = exited.code
    assert code == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and error.strip()


@pytest.mark.parametrize(("case", "says"), [
    ('{"n_q": -3}', "n_q must be a whole number of at least 1, got -3"),
    ('{"d_k": 0}', "d_k must be a whole number of at least 1, got 0"),
    ('{"batch": 2.5}', "batch must be a whole number of at least 1, got 2.5"),
    ('{"n_q": 100000, "n_k": 100000}', "the scores would hold batch × heads × n_q × n_k = "
                                       "1 × 1 × 100000 × 100000 = 10,000,000,000 entries, "
                                       "more than the 67,108,864 a case may hold"),
    ('{"d_v": 1000000000}', "v would hold batch × kv_heads × n_k × d_v"),
    ('{"seed": -1}', "seed must be a whole number of at least 0, got -1"),
    ('{"heads": 3, "kv_heads": 2}', "heads must be a multiple of kv_heads"),
    ('{"empty_element": 5}', "empty_element must be one of the batch's elements, 0 to 0"),
    ('{"garbage": "nothing"}', "garbage must be one of nan, inf, -inf, huge, ordinary"),
    ('{"history": [["float32", {"n_k": -1}]]}', "n_k must be a whole number of at least 1"),
    ("[4, 4]", "a case is a JSON object of its fields, not a list"),
], ids=["negative", "zero", "fraction", "huge-scores", "huge-features", "seed", "heads",
        "empty-element", "garbage", "history", "not-an-object"])
@pytest.mark.parametrize("command", ["kernels", "replay"])
def test_a_case_no_kernel_can_run_is_one_line_naming_the_field(case, says, command, capsys):
    spec = "tests.kernels.planted:correct"
    argv = (["kernels", "--kernel", spec, "--property", "forward", "--dtype", "float32"]
            if command == "kernels" else
            ["replay", "forward", "--kernel", spec, "--dtype", "float32", "--device", "cpu"])
    assert main([*argv, "--case", case]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"attnproof kernels: --case {case!r} is not a case: ")
    assert says in error and len(error.strip().splitlines()) == 1


@pytest.mark.parametrize(("source", "says"), [
    ("raise RuntimeError('no GPU here')\n", "raised RuntimeError: no GPU here at {file}:1"),
    ("import numpy\n1 / 0\n", "raised ZeroDivisionError: division by zero at {file}:2"),
    ("import a_package_nobody_installed\n",
     "raised ModuleNotFoundError: No module named 'a_package_nobody_installed' at {file}:1"),
    ("def broken(:\n", "raised SyntaxError: invalid syntax at {file}:1"),
    ("import sys\nsys.exit(3)\n", "raised SystemExit: 3 at {file}:2"),
], ids=["raises", "divides-by-zero", "a-missing-dependency", "syntax", "exits"])
@pytest.mark.parametrize("command", ["kernels", "replay"])
def test_a_kernel_module_that_fails_at_import_is_one_line_naming_it_and_the_exception(
        tmp_path, monkeypatch, capsys, source, says, command):
    name = f"fails_at_import_{len(says)}_{command}"  # a module no other test has imported
    module = tmp_path / f"{name}.py"
    module.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["kernels", "--kernel", f"{name}:kernel"] if command == "kernels" else \
        ["replay", "forward", "--kernel", f"{name}:kernel", "--dtype", "float32", "--case", "{}"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.strip() == (f"attnproof kernels: {name}:kernel: importing module {name!r} "
                             + says.format(file=module))


def _returns(value):
    def kernel(q, k, v, **keywords):
        return value(planted.attention(q, k, v, **keywords)[0])

    return kernel


@pytest.mark.parametrize(("returned", "says"), [
    (lambda out: out.tolist(), "out: expected an array, layout 'bhsd', shape (1, 1, 4, 4); got "
                               "a Python list of 1 item"),
    (lambda out: None, "out: expected an array, layout 'bhsd', shape (1, 1, 4, 4); got None "
                       "(the kernel returned nothing)"),
    (lambda out: float(out.sum()), "got a float"),
], ids=["list", "none", "float"])
def test_a_kernel_that_returns_no_array_is_a_layout_failure_naming_what_it_returned(
        returned, says):
    kernel = _variant(fn=_returns(returned), returns_lse=False, merge=None, gradients=None)
    result = replay(kernel, "forward", "float32", Case())
    assert result.status == "layout" and says in result.message


def test_a_kernel_declared_to_return_its_lse_that_returns_no_pair_says_so():
    kernel = _variant(fn=_returns(lambda out: None), gradients=None)
    result = replay(kernel, "forward", "float32", Case())
    assert result.status == "layout"
    assert result.message == ("declared returns_lse: expected a pair (out, lse), got None (the "
                              "kernel returned nothing)")


def test_a_kernel_module_in_the_current_folder_is_found_without_pythonpath(tmp_path):
    """As `python -m` and pytest find it: the folder the command runs in is searched."""
    (tmp_path / "kernel_of_mine.py").write_text(
        "from tests.kernels.planted import correct as mine\n")
    repository = Path(__file__).resolve().parents[2]
    environment = {**os.environ, "PYTHONPATH": str(repository)}
    ran = subprocess.run([sys.executable, "-c", "import sys, attnproof.cli; sys.path.remove('');"
                          " sys.exit(attnproof.cli.main(sys.argv[1:]))", "kernels", "--kernel",
                          "kernel_of_mine:mine", "--property", "forward", "--examples", "2",
                          "--out", str(tmp_path / "out")],
                         cwd=tmp_path, env=environment, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "out" / "conformance.md").exists()


@pytest.mark.parametrize(("spec", "says"), [
    ("mxl", "did you mean 'mlx'?"),
    ("no_such_module_here:kernel", "no module named 'no_such_module_here'"),
    ("tests.kernels.planted:no_such_kernel", "has no attribute 'no_such_kernel'"),
])
def test_a_kernel_that_cannot_be_found_is_one_line_naming_the_nearest(spec, says, capsys):
    assert main(["kernels", "--kernel", spec]) == 2
    error = capsys.readouterr().err
    assert says in error and len(error.strip().splitlines()) == 1


def test_a_counterexample_shows_the_inputs_it_was_found_with():
    result = check_kernel(planted.no_max_shift, properties=["row_offset"], dtypes=["float32"],
                          examples=10)
    (cell,) = [c for c in result.cells if c.status == "fails"]
    shown = cell.counterexample["inputs"]
    case = Case.from_json(cell.counterexample["case"])
    x = replay_inputs(case)
    for name in ("q", "k", "v"):
        array = getattr(x, name)
        if array.size <= 64:
            assert np.array_equal(np.asarray(shown[name]), array)
        else:
            assert shown[name]["shape"] == list(array.shape)
            assert shown[name]["max"] == float(array.max())


def replay_inputs(case):
    from attnproof.kernels._cases import instance

    kernel = planted.no_max_shift
    return instance(case, FLOAT32, kernel.compute_for(FLOAT32, "cpu"),
                    kernel.causal_alignment or "upper_left")


def test_the_matrix_prints_a_counterexample_s_inputs():
    result = check_kernel(planted.no_max_shift, properties=["row_offset"], dtypes=["float32"],
                          examples=10)
    markdown = result.to_markdown()
    assert "Inputs (rounded to the dtype):" in markdown and '"q": [[[[' in markdown
