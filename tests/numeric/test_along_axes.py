"""The error bounds' evaluation is the one as-written evaluator walked along axes: the same
operations, in the same order and format, as ``AsWritten``'s walk entry by entry."""

import numpy as np
import pytest
import sympy as sp

from attnproof.numeric._backends import backend
from attnproof.numeric.kinds import error_bound as route
from attnproof.numeric.kinds._along_axes import along_axes
from attnproof.numeric.kinds._evaluate import ArrayArithmetic
from attnproof.numeric.route import numpy_dtype
from attnproof.symbolic import BFLOAT16, rowsum
from attnproof.symbolic.route import AsWritten, free_indices, index_env
from attnproof.theorems import rounding

S, V, i, j, k, e, n = (rounding.S, rounding.V, rounding.i, rounding.j, rounding.k, rounding.e,
                       rounding.n)
d = rounding.values.symbol


class _Entries(ArrayArithmetic):
    """``AsWritten``'s arithmetic for one entry of every instance of a batch at once, in the
    inputs' NumPy format."""

    def __init__(self, arrays: dict):
        super().__init__(np)
        self.arrays = arrays
        self.format = next(iter(arrays.values())).dtype

    def literal(self, value):
        return np.asarray(float(value), self.format)

    exact = size = literal

    def input(self, key):
        tensor, indices = key
        return self.arrays[tensor][(slice(None), *indices)]


EXPRESSIONS = {
    "softmax as written": rounding.unshifted,
    "softmax shifted by the row maximum": rounding.shifted,
    "lse shifted": rounding.lse_shifted,
    "attention output, weights first": rowsum(rounding.weights * V[j, e], j),
    "a power, a root and its reciprocal": (sp.sqrt(S[i, j] ** 2 + 1)
                                           * (S[i, j] ** 3 + 2) ** sp.Rational(-1, 2)),
    "a quotient of a sum over two indices": (sp.Sum(S[i, j] * V[j, e], (j, 0, n - 1),
                                                    (e, 0, d - 1))
                                             / (1 + rowsum(sp.exp(S[i, k]), k))),
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_the_walk_along_axes_computes_what_the_walk_entry_by_entry_does(name, dtype):
    expr = EXPRESSIONS[name]
    sizes = {"n_q": 2, "n_k": 7, "d_v": 3}
    rng = np.random.default_rng(5)
    arrays = {"S": (rng.standard_normal((4, 2, 7)) * 2).astype(dtype),
              "V": rng.standard_normal((4, 7, 3)).astype(dtype)}
    out = sorted(free_indices(expr), key=str)
    with np.errstate(all="ignore"):
        along = along_axes(np, arrays, sizes, out).eval(expr)
        entries = AsWritten(_Entries(arrays), sizes, fixed={})
        for env in index_env(expr, sizes):
            at = tuple(int(env[index.label]) for index in out)
            expected = entries.eval(expr, env)
            assert along.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(along[(slice(None), *at)], expected)


def test_numpy_bfloat16_is_evaluated_in_bfloat16():
    """NumPy's bfloat16 combined with a Python float gives float32: every literal is rounded
    into the format, so the softmax's sum is bfloat16's left-to-right sum. (Before, −1·max
    carried float32 into the rest of the softmax, and NumPy's bfloat16 records measured
    float32's error.)"""
    bfloat16 = numpy_dtype("bfloat16")
    theorem = rounding.softmax_shifted_error_bound
    scores = np.random.default_rng(0).standard_normal((1, 1, 512)).astype(bfloat16)
    evaluation = route.Evaluation(theorem, backend("numpy"), BFLOAT16, "cpu")
    computed = evaluation.as_written(theorem.claim.computed, {"n_q": 1, "n_k": 512},
                                     {"S": scores.astype(np.float64)}, low=True)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    total = weights[..., 0]
    for k in range(1, 512):
        total = total + weights[..., k]
    assert total.dtype == bfloat16
    np.testing.assert_array_equal(computed, (weights / total[..., None]).astype(np.float64))
