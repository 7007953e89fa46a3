"""The compiler: source it emits (no backend needed) and values against hand-written NumPy."""

import numpy as np
import pytest
import sympy as sp
from sample_theorems import A, K, O, P, Q, S, T, V, a, i, j, k, nk, scores
from sympy import KroneckerDelta as delta

from attnproof.numeric import compile_expression
from attnproof.symbolic import (
    BFLOAT16,
    FLOAT32,
    Defined,
    Dim,
    Equals,
    Mask,
    Source,
    Tensor,
    Theorem,
    format_named,
    lse,
    masked_softmax,
    rowsum,
)

RNG = np.random.default_rng(7)
SIZES = {"batch": 4, "n_q": 3, "n_k": 5, "d_k": 2, "d_v": 6}


def _inputs():
    return {
        "S": RNG.normal(size=(4, 3, 5)) * 40,
        "T": np.exp(RNG.uniform(-3, 3, size=4)),
        "Q": RNG.normal(size=(4, 3, 2)),
        "K": RNG.normal(size=(4, 5, 2)),
        "V": RNG.normal(size=(4, 5, 6)),
    }


_FIXED = _inputs()


def _reference_softmax(x, axis):
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def test_product_under_a_sum_is_one_einsum():
    compiled = compile_expression(rowsum(Q[i, 0] * K[j, 0] * V[j, 1], j), (i,), inputs=(Q, K, V))
    assert compiled.source.count("xp.einsum(") == 1
    assert "optimize=True" in compiled.source


def test_kronecker_delta_is_eye():
    compiled = compile_expression(delta(i, j) * S[i, j], (i, j), inputs=(S,))
    assert "xp.eye(" in compiled.source
    assert "for " not in compiled.source and " if " not in compiled.source


def test_softmax_is_max_shifted():
    compiled = compile_expression(A[i, j], (i, j), inputs=(S, T), definitions=(A,))
    assert "xp.max(" in compiled.source and "keepdims=True" in compiled.source
    assert "xp.isfinite(" in compiled.source


def test_exp_over_sum_of_exp_is_rewritten_stably():
    ratio = sp.exp(S[i, j]) / rowsum(sp.exp(S[i, k]), k)
    compiled = compile_expression(ratio, (i, j), inputs=(S,))
    assert "xp.max(" in compiled.source
    values = compiled(np, _FIXED, SIZES)
    assert np.isfinite(values).all()
    np.testing.assert_allclose(values, _reference_softmax(_FIXED["S"], 2), rtol=1e-12, atol=1e-300)


def test_exp_of_minus_energy_over_its_sum_is_shifted_by_the_minimum():
    # the Gibbs weights exp(−E_j)/Σ_k exp(−E_k) peak at the smallest energy
    ratio = sp.exp(-S[i, j]) / rowsum(sp.exp(-S[i, k]), k)
    compiled = compile_expression(ratio, (i, j), inputs=(S,))
    spread = {**_FIXED, "S": _FIXED["S"] * 10}  # max − min well past exp's range
    values = compiled(np, spread, SIZES)
    assert np.isfinite(values).all()
    np.testing.assert_allclose(values, _reference_softmax(-spread["S"], 2), rtol=1e-12,
                               atol=1e-300)


def test_same_expression_same_compiled_object():
    first = compile_expression(A[i, j], (i, j), inputs=(S, T), definitions=(A,))
    again = compile_expression(A[i, j], (i, j), inputs=(S, T), definitions=(A,))
    assert first is again


def test_softmax_values_match_numpy_even_for_large_logits():
    arrays = _FIXED
    compiled = compile_expression(A[i, j], (i, j), inputs=(S, T), definitions=(A,))
    expected = _reference_softmax(arrays["S"] / arrays["T"][:, None, None], 2)
    np.testing.assert_allclose(compiled(np, arrays, SIZES), expected, rtol=1e-12, atol=1e-300)


def test_lse_matches_numpy_and_requested_axis_order():
    arrays = _FIXED
    compiled = compile_expression(lse(S[i, k], k) + 0 * S[i, j], (j, i), inputs=(S,))
    expected = np.log(np.exp(arrays["S"]).sum(axis=2))
    values = compiled(np, arrays, SIZES)
    assert values.shape == (4, 5, 3)
    np.testing.assert_allclose(values[:, 0, :], expected, rtol=1e-12)


def test_attention_forward_matches_numpy():
    arrays = _FIXED
    e = O.indices[1]
    compiled = compile_expression(O[i, e], (i, e), inputs=(Q, K, V), definitions=(scores, P, O))
    logits = np.einsum("zia,zja->zij", arrays["Q"], arrays["K"]) / np.sqrt(2)
    expected = np.einsum("zij,zje->zie", _reference_softmax(logits, 2), arrays["V"])
    np.testing.assert_allclose(compiled(np, arrays, SIZES), expected, rtol=1e-12)


def test_partial_range_sum_is_masked():
    n = Dim("n")
    x = Tensor("x", (n,))
    (a,) = n.indices("a")
    half = sp.Sum(x[a], (a, 0, 1))
    compiled = compile_expression(half, (), inputs=(x,))
    values = np.arange(12.0).reshape(3, 4)
    result = compiled(np, {"x": values}, {"batch": 3, "n": 4})
    np.testing.assert_allclose(result, values[:, :2].sum(1))


def test_abs_scale_bounds_the_value_and_sees_cancellation():
    n = Dim("n")
    x, y = Tensor("x", (n,)), Tensor("y", (n,))
    (a,) = n.indices("a")
    value = compile_expression(x[a] - y[a], (a,), inputs=(x, y))
    scale = compile_expression(x[a] - y[a], (a,), inputs=(x, y), abs_scale=True)
    assert "xp.abs(" in scale.source
    arrays = {"x": RNG.uniform(1, 2, size=(3, 4))}
    arrays["y"] = arrays["x"] * (1 + 1e-7)
    v, s = value(np, arrays, {"batch": 3, "n": 4}), scale(np, arrays, {"batch": 3, "n": 4})
    np.testing.assert_allclose(s, arrays["x"] + arrays["y"])
    assert (s > 1e6 * np.abs(v)).all()


@pytest.mark.parametrize("name", ["jax", "mlx"])
def test_other_targets_agree_with_numpy(name):
    from attnproof.numeric._backends import backend, to_numpy, unavailable_reason

    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    xp = row.load()
    expr = O[i, O.indices[1]]
    compiled = compile_expression(expr, (i, O.indices[1]), inputs=(Q, K, V),
                                  definitions=(scores, P, O), target=row.target)
    reference = compile_expression(expr, (i, O.indices[1]), inputs=(Q, K, V),
                                   definitions=(scores, P, O))
    arrays = {k: row.place(xp, v, "float32", None) for k, v in _FIXED.items()}
    np.testing.assert_allclose(to_numpy(compiled(xp, arrays, SIZES)),
                               reference(np, _FIXED, SIZES), rtol=1e-4, atol=1e-5)


def test_mlx_source_avoids_numpy_only_keywords_and_gaps_are_refused():
    from attnproof.numeric._compiler import TARGETS, Target

    compiled = compile_expression(rowsum(Q[i, 0] * K[j, 0], j), (i,), inputs=(Q, K), target="mlx")
    assert "optimize" not in compiled.source
    assert TARGETS["mlx"].missing >= {"amax", "amin", "select", "dot", "diagflat"}
    TARGETS["pretend"] = Target("pretend", "xp.einsum({operands})", frozenset({"eye"}))
    try:
        with pytest.raises(NotImplementedError, match="pretend lacks eye"):
            compile_expression(delta(i, j) * S[i, j], (i, j), inputs=(S,), target="pretend")
    finally:
        del TARGETS["pretend"]


def test_bfloat16_stays_bfloat16_through_constants_and_contractions():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from attnproof.numeric._backends import backend

    row = backend("numpy")
    xp = row.namespace(np, BFLOAT16)
    compiled = compile_expression(rowsum(Q[i, a] * K[j, a], a) / 2 + 1, (i, j), inputs=(Q, K))
    arrays = {k: row.place(xp, _FIXED[k], "bfloat16", None) for k in ("Q", "K")}
    assert compiled(xp, arrays, SIZES).dtype == np.dtype(ml_dtypes.bfloat16)


def test_softmax_at_low_temperature_never_forms_the_scaled_logits():
    compiled = compile_expression(A[i, j], (i, j), inputs=(S, T), definitions=(A,))
    arrays = {"S": (_FIXED["S"] / 40 * 100).astype(np.float16),
              "T": np.full(4, 1e-3, dtype=np.float16)}
    with np.errstate(over="ignore"):  # beta (x - max x) reaches -inf: exp makes it the exact 0
        values = compiled(np, arrays, SIZES)
    assert values.dtype == np.float16 and np.isfinite(values).all()
    np.testing.assert_allclose(values.sum(axis=2), 1.0, atol=1e-3)


def test_dimension_size_symbols_become_ints():
    compiled = compile_expression(rowsum(S[i, k], k) / nk.symbol, (i,), inputs=(S,))
    np.testing.assert_allclose(compiled(np, _FIXED, SIZES), _FIXED["S"].mean(axis=2))


# -- masked softmax ------------------------------------------------------------------------------

M = Tensor("M", (S.dims[0], nk), Mask())
A_masked = Defined("A", (i, j), masked_softmax(S[i, j], M[i, j], j, 1 / T.symbol))


def _masked_inputs(dtype=np.float64):
    """Large logits on masked keys (they would overflow exp and win the max), row 0 of
    every instance fully masked, row 1 of the first instance keeping a single key."""
    mask = (RNG.random((4, 3, 5)) < 0.6).astype(dtype)
    mask[:, 0] = 0
    mask[0, 1] = [0, 0, 1, 0, 0]
    logits = np.where(mask > 0, RNG.uniform(-3, 3, (4, 3, 5)), 1e4)
    return {"S": logits.astype(dtype), "M": mask, "T": np.exp(RNG.uniform(-3, 3, 4)).astype(dtype)}


def _reference_masked_softmax(arrays):
    logits = np.where(arrays["M"] > 0, arrays["S"] / arrays["T"][:, None, None], -np.inf)
    peak = logits.max(axis=2, keepdims=True)
    weights = np.exp(logits - np.where(np.isfinite(peak), peak, 0))
    total = weights.sum(axis=2, keepdims=True)
    return weights / np.where(total > 0, total, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_masked_softmax_weighs_only_kept_keys_and_zeroes_fully_masked_rows(dtype):
    arrays = _masked_inputs(dtype)
    compiled = compile_expression(A_masked[i, j], (i, j), inputs=(S, M, T), definitions=(A_masked,))
    values = compiled(np, arrays, SIZES)
    assert values.dtype == dtype and np.isfinite(values).all()
    assert (values[:, 0] == 0).all() and (values[arrays["M"] == 0] == 0).all()
    assert values[0, 1, 2] == 1
    expected = _reference_masked_softmax({k: v.astype(np.float64) for k, v in arrays.items()})
    np.testing.assert_allclose(values, expected, atol=4 * np.finfo(dtype).eps)


def test_masked_derivative_and_its_abs_scale_stay_finite_past_masked_overflow():
    """SymPy's derivative of a masked softmax multiplies exp of masked logits by their 0 mask:
    value and abs-scale must be exactly 0 there, never 0 * inf = nan."""
    derivative = sp.Derivative(A_masked[i, j], S[i, k])
    theorem = Theorem("masked_jacobian_block", Source("test", "unit"), Equals(derivative, 0),
                      inputs=(S, M, T), definitions=(A_masked,))
    expanded = theorem.expand(derivative)
    arrays = _masked_inputs()
    for abs_scale in (False, True):
        compiled = compile_expression(expanded, (i, j, k), inputs=(S, M, T),
                                      definitions=(A_masked,), abs_scale=abs_scale)
        with np.errstate(over="ignore", invalid="ignore"):  # inf and nan left out by xp.where
            values = compiled(np, arrays, SIZES)
        assert np.isfinite(values).all(), compiled.source
        assert (values[:, 0] == 0).all()


def test_every_node_kind_has_a_value_rule_and_an_error_scale_rule():
    from attnproof.numeric import _compiler

    kinds = [name for _, name in _compiler.NODE_KINDS] + [_compiler.CONSTANT]
    rules = _compiler._Compilation
    assert [k for k in kinds if not hasattr(rules, f"value_{k}")] == []
    assert [k for k in kinds if not hasattr(rules, f"scale_{k}")] == []
    exponents = {n[len("exponents_"):] for n in dir(rules) if n.startswith("exponents_")}
    assert exponents - {"of"} <= set(kinds)


@pytest.mark.parametrize("name", ["numpy", "jax", "mlx"])
def test_rotary_rotation_matches_numpy_on_every_backend(name):
    """R(j·t)_{ca} x_{ja}: cos and sin, an index used as a number, the rotation node."""
    from attnproof.numeric._backends import backend, to_numpy, unavailable_reason
    from attnproof.symbolic import Real, Scalar, Sizes, rotation

    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    two = Dim("two", Sizes(2, 2))
    c, b = two.indices("c b")
    x, t = Tensor("x", (nk, two)), Scalar("t", Real(-3, 3))
    expr = sp.Sum(rotation(j * t.symbol, c, b) * x[j, b], (b, 0, two.symbol - 1))
    compiled = compile_expression(expr, (j, c), inputs=(x, t), target=row.target)
    values = {"x": RNG.normal(size=(4, 5, 2)), "t": RNG.uniform(-3, 3, size=4)}
    angle = np.arange(5)[None, :] * values["t"][:, None]
    cos, sin = np.cos(angle), np.sin(angle)
    turned = np.stack([cos * values["x"][..., 0] - sin * values["x"][..., 1],
                       sin * values["x"][..., 0] + cos * values["x"][..., 1]], axis=-1)
    xp = row.load()
    arrays = {k: row.place(xp, v, "float32", None) for k, v in values.items()}
    got = to_numpy(compiled(xp, arrays, {"batch": 4, "n_k": 5, "two": 2}))
    np.testing.assert_allclose(got, turned, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["numpy", "jax", "mlx"])
def test_index_masks_and_running_sums_match_numpy_on_every_backend(name):
    """Σ_{j ≤ i}, a strided indicator [j mod s = 0] and a block indicator ⌊i/s⌋ = ⌊j/s⌋, exact
    in bfloat16 too."""
    from attnproof.numeric._backends import backend, to_numpy, unavailable_reason
    from attnproof.symbolic import Integer, Scalar, Sizes, indicator

    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    n = Dim("n", Sizes(1, 8))
    p, q = n.indices("p q")
    x, s = Tensor("x", (n,)), Scalar("s", Integer(1, 4))
    data = RNG.integers(-4, 5, size=(3, 8)).astype(float)
    positions = np.arange(8)
    cases = [
        (sp.Sum(x[q], (q, 0, p)), (p,), np.cumsum(data, axis=1)),
        (sp.Sum(indicator(sp.Eq(sp.Mod(q, s.symbol), 0)) * x[q], (q, 0, n.symbol - 1)), (),
         data[:, ::3].sum(axis=1)),
        (indicator(sp.Eq(sp.floor(p / s.symbol), sp.floor(q / s.symbol))) * x[q], (p, q),
         (positions[:, None] // 3 == positions[None, :] // 3) * data[:, None, :]),
    ]
    for dtype in ("float32", "bfloat16"):
        xp = row.namespace(row.load(), format_named(dtype))
        arrays = {"x": row.place(xp, data, dtype, None), "s": 3}
        for expr, out, expected in cases:
            compiled = compile_expression(expr, out, inputs=(x, s), target=row.target)
            got = to_numpy(compiled(xp, arrays, {"batch": 3, "n": 8}))
            np.testing.assert_array_equal(got, expected, err_msg=f"{dtype}: {expr}")


def test_a_condition_on_real_values_is_refused():
    from attnproof.symbolic import indicator

    with pytest.raises(NotImplementedError, match="rounding could flip it"):
        compile_expression(indicator(S[i, j] > 0) * S[i, j], (i, j), inputs=(S,))


def test_index_arithmetic_gathers_and_an_index_that_may_leave_its_axis_is_refused():
    from attnproof.symbolic import Sizes, flat

    heads, per_head, tokens = Dim("H", Sizes(1, 4)), Dim("D", Sizes(1, 4)), Dim("T", Sizes(1, 5))
    h, c, t = heads.index("h"), per_head.index("c"), tokens.index("t")
    X = Tensor("X", (tokens, flat(heads, per_head)))
    data = RNG.normal(size=(2, 5, 12))
    compiled = compile_expression(X[t, h * per_head.symbol + c], (h, t, c), inputs=(X,))
    got = compiled(np, {"X": data}, {"batch": 2, "H": 3, "D": 4, "T": 5})
    np.testing.assert_array_equal(got, data.reshape(2, 5, 3, 4).transpose(0, 2, 1, 3))
    with pytest.raises(NotImplementedError, match="may leave axis"):
        compile_expression(S[i, j + 1], (i, j), inputs=(S,))


@pytest.mark.parametrize("name", ["numpy", "jax", "mlx"])
def test_deltas_with_a_fixed_entry_or_a_modulus_are_equality_tests_on_every_backend(name):
    """δ(j, 0), δ(j, i mod s) and δ(0, j mod s) (an index against an integer expression) compile
    as the equality they test, exactly, in float32 and bfloat16; a delta between two indices
    stays an eye."""
    from attnproof.numeric._backends import backend, to_numpy, unavailable_reason
    from attnproof.symbolic import Integer, Scalar, Sizes

    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    n = Dim("n", Sizes(1, 8))
    p, q = n.indices("p q")
    x, s = Tensor("x", (n,)), Scalar("s", Integer(1, 4))
    data = RNG.integers(-4, 5, size=(3, 7)).astype(float)
    positions = np.arange(7)
    cases = [
        (sp.Sum(delta(q, 0) * x[q], (q, 0, n.symbol - 1)), (), data[:, 0]),
        (delta(q, sp.Mod(p, s.symbol)) * x[q], (p, q),
         (positions[None, :] == positions[:, None] % 3) * data[:, None, :]),
        (delta(0, sp.Mod(q, s.symbol)) * x[q], (q,), (positions % 3 == 0) * data),
    ]
    for dtype in ("float32", "bfloat16"):
        xp = row.namespace(row.load(), format_named(dtype))
        arrays = {"x": row.place(xp, data, dtype, None), "s": 3}
        for expr, out, expected in cases:
            compiled = compile_expression(expr, out, inputs=(x, s), target=row.target)
            got = to_numpy(compiled(xp, arrays, {"batch": 3, "n": 7}))
            np.testing.assert_array_equal(got, expected, err_msg=f"{dtype}: {expr}")
    assert "xp.eye(" in compile_expression(delta(p, q) * x[q], (p, q), inputs=(x,)).source


@pytest.mark.parametrize("name", ["numpy", "jax", "mlx"])
def test_an_entry_read_at_the_floor_and_modulus_of_a_flat_index_gathers_on_every_backend(name):
    """X[t, f] read back as Y[⌊f/D⌋, t, f mod D] from its split-and-transposed layout."""
    from attnproof.numeric._backends import backend, to_numpy, unavailable_reason
    from attnproof.symbolic import Sizes, flat

    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    heads, per_head, tokens = Dim("H", Sizes(1, 4)), Dim("D", Sizes(1, 4)), Dim("T", Sizes(1, 5))
    t, f = tokens.index("t"), flat(heads, per_head).index("f")
    Y = Tensor("Y", (heads, tokens, per_head))
    data = RNG.normal(size=(2, 3, 5, 4)).astype(np.float32)
    entry = Y[sp.floor(f / per_head.symbol), t, sp.Mod(f, per_head.symbol)]
    compiled = compile_expression(entry, (t, f), inputs=(Y,), target=row.target)
    xp = row.namespace(row.load(), FLOAT32)
    got = to_numpy(compiled(xp, {"Y": row.place(xp, data, "float32", None)},
                            {"batch": 2, "H": 3, "D": 4, "T": 5}))
    np.testing.assert_array_equal(got, data.transpose(0, 2, 1, 3).reshape(2, 5, 12))
    # ⌊f/H⌋ runs to D − 1, which may leave the axis of H heads: refused, not gathered
    with pytest.raises(NotImplementedError, match="may leave axis H"):
        compile_expression(Y[sp.floor(f / heads.symbol), t, sp.Mod(f, per_head.symbol)],
                           (t, f), inputs=(Y,))


@pytest.mark.parametrize("name", ["numpy", "jax", "mlx"])
def test_rowmin_is_the_minimum_with_the_rows_largest_scale(name):
    from attnproof.numeric._backends import backend, to_numpy, unavailable_reason
    from attnproof.symbolic import rowmin

    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    xp = row.namespace(row.load(), FLOAT32)
    values = _FIXED["S"].astype(np.float32)
    arrays = {"S": row.place(xp, values, "float32", None)}
    compiled = compile_expression(rowmin(S[i, j], j), (i,), inputs=(S,), target=row.target)
    np.testing.assert_array_equal(to_numpy(compiled(xp, arrays, SIZES)), values.min(axis=2))
    scale = compile_expression(rowmin(S[i, j], j), (i,), inputs=(S,), abs_scale=True)
    np.testing.assert_array_equal(scale(np, {"S": values}, SIZES), np.abs(values).max(axis=2))
