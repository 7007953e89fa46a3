"""Code under test that raises, planted on every backend: code that raises at some inputs the
claim covers is refuted there (the counterexample names the exception, the line and the inputs,
with a replay); code that raises wherever it runs is an error of the declaration; code that
cannot be compiled by jit but runs eagerly is checked eagerly, and its jit failure is reported
as a finding about the code, not as an error of the checker."""

import dataclasses
from pathlib import Path

import pytest
from sample_theorems import flash, flash_attention

from attnproof.numeric import FINDING, check


def _checked(implementation, backend="numpy", dtype="float64", mode=None):
    theorem = dataclasses.replace(flash, implementation=implementation)
    return check(theorem, backend, dtype, "cpu", mode, profile="quick")


def _whole_blocks_only(xp, Q, K, V, B):
    """Block-wise attention whose running statistics are allocated for a whole block of keys:
    right whenever B divides n_k, and a shape mismatch (an exception) otherwise."""
    if K.shape[1] % B:
        raise ValueError(f"operands could not be broadcast together: {K.shape[1]} keys in "
                         f"blocks of {B}")
    return flash_attention(xp, Q, K, V, B)


def _always_raises(xp, Q, K, V, B):
    raise RuntimeError("not written yet")


def _float_of_the_first_score(xp, Q, K, V, B):
    """Correct attention that calls float() on an array value: fine eagerly, impossible on a
    traced value under jit."""
    scale = float(xp.max(Q[0, 0])) * 0 + 1.0
    return flash_attention(xp, Q * scale, K, V, B)


@pytest.mark.parametrize(("backend", "dtype"), [("numpy", "float64"), ("jax", "float64"),
                                                ("mlx", "float32")])
def test_code_that_raises_at_some_inputs_is_refuted_there_with_its_exception(backend, dtype):
    record = _checked(_whole_blocks_only, backend, dtype)
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status == "failed" and record.refutes, record.reason
    example = record.counterexample
    assert example["comparison"] == "implementation raised"
    assert example["sizes"]["n_k"] % example["integers"]["B"] != 0  # exactly where it raises
    assert example["exception"].startswith("ValueError: operands could not be broadcast")
    assert example["raised_at"].endswith(f"test_raising_implementations.py:{_raise_line()}")
    assert record.reason.startswith("refuted: the implementation raised ValueError")
    assert record.replay and "--sizes" in record.replay


def _raise_line() -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if "raise ValueError(f\"operands" in line)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_code_that_raises_everywhere_is_an_error_of_the_declaration(backend):
    record = _checked(_always_raises, backend)
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status == "error"
    assert "raised RuntimeError: not written yet" in record.reason
    assert "at every size drawn" in record.reason


def test_code_that_cannot_be_traced_is_checked_eagerly_and_its_jit_failure_is_a_finding():
    pytest.importorskip("jax")
    record = _checked(_float_of_the_first_score, "jax", "float64", "jit")
    assert record.status == "passed", record.reason
    assert record.reason.startswith(FINDING + "the implementation cannot run under jax's jit")
    assert "but runs eagerly" in record.reason


def test_traceable_code_has_no_finding():
    pytest.importorskip("jax")
    record = _checked(flash_attention, "jax", "float64", "jit")
    assert record.status == "passed"
    assert not (record.reason or "").startswith(FINDING)


def test_the_replay_of_a_raising_batch_names_the_exception_and_exits_1(tmp_path, capsys):
    from attnproof.numeric import replay

    planted = tmp_path / "planted_raise.py"
    planted.write_text(
        "import dataclasses, sys\n"
        f"sys.path.insert(0, {str(_here())!r})\n"
        "from sample_theorems import flash\n"
        "from test_raising_implementations import _whole_blocks_only\n"
        "raising = dataclasses.replace(flash, name='raising', "
        "implementation=_whole_blocks_only)\n")
    code = replay.main(["raising", "--theorems", str(tmp_path), "--backend", "numpy",
                        "--dtype", "float64", "--seed", "0", "--batch", "4",
                        "--sizes", "n_q=2,d_k=3,n_k=4,d_v=5", "--integers", "B=3"])
    printed = capsys.readouterr().out
    assert code == 1
    assert '"comparison": "implementation raised"' in printed
    assert "ValueError: operands could not be broadcast" in printed


def _here():
    return Path(__file__).resolve().parent
