"""The verdicts a user meets first, planted on every backend and format: an ``implementation=``
that returns the wrong shape is refuted at the sizes where it does (with both shapes) when it
returns the stated shape at others, and a declaration error when it never does; code that is NaN
where the statement is finite is refuted, its guarded twin checked; a claim declared over sizes
≥ 2 is never refuted below them."""

import dataclasses

import pytest
import sympy as sp
from sample_theorems import flash, flash_attention

from attnproof import AtLeast, Dim, Equals, Mask, Sizes, Source, Tensor, Theorem, masked_softmax
from attnproof.numeric import check


def _checked(implementation, backend="numpy", dtype="float64"):
    theorem = dataclasses.replace(flash, implementation=implementation)
    return check(theorem, backend, dtype, "cpu", profile="quick")


@pytest.mark.parametrize(("implementation", "got"), [
    (lambda xp, Q, K, V, B: None, "returned a NoneType"),
    (lambda xp, Q, K, V, B: xp.concatenate([Q, Q], axis=1), "returned shape ("),
    (lambda xp, Q, K, V, B: V.sum(), "returned shape ()"),
], ids=["none", "wrong-shape", "scalar"])
def test_a_wrong_implementation_is_blamed_by_name_with_both_shapes(implementation, got):
    record = _checked(implementation)
    assert record.status == "error"
    message = record.reason
    assert message.startswith(
        "ImplementationError: theorem 'flash_attention': implementation <lambda> " + got)
    assert "expected an array of shape (" in message and "(batch, n_q, d_v)" in message


# -- code that is wrong only at some sizes, or only on some rows: refuted there ------------------


def _padded_to_query_blocks(xp, Q, K, V, B):
    """Block-wise attention whose output buffer is sized by whole query blocks of B: right
    whenever B divides n_q, and too long otherwise."""
    n_q = Q.shape[1]
    rows = -(-n_q // B) * B
    padding = xp.zeros((Q.shape[0], rows - n_q, Q.shape[2]), dtype=Q.dtype)
    out = flash_attention(xp, xp.concatenate([Q, padding], axis=1), K, V, B)
    return out


@pytest.mark.parametrize(("backend", "dtype"), [
    (b, d) for b in ("numpy", "jax", "mlx") for d in ("float64", "float32", "float16", "bfloat16")])
def test_code_whose_shape_is_wrong_at_some_sizes_is_refuted_there_with_both_shapes(backend, dtype):
    record = _checked(_padded_to_query_blocks, backend, dtype)
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status == "failed" and record.refutes, record.reason
    example = record.counterexample
    n_q, block = example["sizes"]["n_q"], example["integers"]["B"]
    assert n_q % block != 0  # exactly where the buffer is sized by the block
    expected, returned = example["expected_shape"], example["returned_shape"]
    assert expected[1] == n_q and returned[1] == -(-n_q // block) * block
    assert "returned shape" in record.reason and record.replay


def test_code_that_never_returns_the_stated_shape_is_a_declaration_error():
    # one row too many at every size: no size gives the stated shape
    record = _checked(lambda xp, Q, K, V, B: xp.zeros((Q.shape[0], Q.shape[1] + 1, V.shape[2])))
    assert record.status == "error" and "at every size drawn" in record.reason
    assert "at its smallest and at its largest" in record.reason


def test_a_shape_right_only_where_an_axis_has_size_one_is_refuted_not_an_error():
    # (batch, n_q, 1) is the stated shape exactly when d_v = 1, a size the draws include
    record = _checked(lambda xp, Q, K, V, B: Q[:, :, :1] * 0)
    assert record.status == "failed" and record.counterexample


n_q, n_k = Dim("n_q"), Dim("n_k")
(i,), (j,) = n_q.indices("i"), n_k.indices("j")
S, M = Tensor("S", (n_q, n_k)), Tensor("M", (n_q, n_k), Mask())


def softmax_with_minus_infinity_fill(xp, S, M, **_):
    """The most common masked-softmax bug: a fully masked row is 0/0."""
    s = xp.where(M > 0.5, S, -xp.inf)
    e = xp.exp(s - xp.max(s, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def softmax_with_guarded_rows(xp, S, M, **_):
    """The same, with a fully masked row given zero weights, as the statement says."""
    keep = M > 0.5
    peak = xp.max(xp.where(keep, S, -xp.inf), axis=-1, keepdims=True)
    peak = xp.where(xp.isfinite(peak), peak, 0.0)
    e = xp.where(keep, xp.exp(xp.where(keep, S, 0.0) - peak), 0.0)
    total = xp.sum(e, axis=-1, keepdims=True)
    return e / xp.where(total > 0, total, 1.0)


def _masked(implementation):
    return Theorem(name="masked_softmax_code", source=Source("tests", "planted"),
                   claim=Equals(sp.Function("Impl")(i, j), masked_softmax(S[i, j], M[i, j], j)),
                   inputs=(S, M), implementation=implementation)


BACKEND_DTYPES = [(b, d) for b in ("numpy", "jax", "mlx")
                  for d in ("float64", "float32", "float16", "bfloat16")]


@pytest.mark.parametrize(("backend", "dtype"), BACKEND_DTYPES)
def test_nan_where_the_statement_is_finite_is_refuted_in_every_format(backend, dtype):
    record = check(_masked(softmax_with_minus_infinity_fill), backend, dtype, "cpu",
                   profile="quick")
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status == "failed" and record.refutes, record.reason
    example = record.counterexample
    assert example["lhs"] == "nan" and example["rhs"] == 0.0
    assert not any(example["inputs"]["M"][example["entry"]["i"]])  # a fully masked row
    assert record.undecided == 0  # the statement is finite everywhere: nothing set aside


@pytest.mark.parametrize(("backend", "dtype"), BACKEND_DTYPES)
def test_the_guarded_twin_is_checked_in_every_format(backend, dtype):
    record = check(_masked(softmax_with_guarded_rows), backend, dtype, "cpu", profile="quick")
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status == "passed", record.reason
    assert record.undecided == 0 and not record.refutes


@pytest.mark.parametrize(("backend", "dtype"), BACKEND_DTYPES)
def test_a_claim_true_from_two_keys_on_declared_so_passes_every_numeric_record(backend, dtype):
    keys = Dim("n_k", Sizes(2, 8))
    theorem = Theorem(name="half_at_least_inverse_size", source=Source("tests", "planted"),
                      claim=AtLeast(sp.Rational(1, 2), 1 / keys.symbol),
                      inputs=(Tensor("S", (keys,)),))
    record = check(theorem, backend, dtype, "cpu", profile="quick")
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status in ("passed", "too-few"), record.reason
    assert record.status == "passed" or dtype != "float64"
