"""Exponentials below a format's normal range: an entry made of them alone (a gradient of 1e-36
beside entries of 1e2) holds no digits of the format, so its row is outside the componentwise
rounding model, as an overflowing row is; a row the underflow moves as a whole (a softmax whose
every exponential underflows, 0/0) stays in, and the formula's instability is judged there.

The first case is the printed backward pass's dL/dQ on JAX in float32, at the inputs a search
once reported as "exceeds the tolerance": the code returned 0 where the exact value is 6.6e-36,
because its softmax weights e^(s − max) ≈ 2.6e-40 are flushed to zero on the CPU.
"""

import numpy as np
import pytest
import sympy as sp

from attnproof.numeric._backends import backend
from attnproof.numeric._decide import decide
from attnproof.numeric._plan import runner_for
from attnproof.numeric._strategies import Structure
from attnproof.symbolic import FLOAT32, Dim, Equals, Real, Source, Tensor, Theorem, softmax
from attnproof.theorems.attention_backward import printed_backward_dq_matches_autodiff

# the reported counterexample (n_q = 6, d_k = 5, n_k = 8, d_v = 1)
Q = [[-65, -45, -81, 51, -53], [-20, 12, -94, 64, -48], [35, -40, -37, 46, 100],
     [-37, -40, 61, -33, -89], [-73, 72, 39, -91, -21], [0, -96, 66, 92, 68]]
K = [[3, 0, 0, 0, 0], [0, 0, 0, 0, 2], [0, 0, 0, 2, 0], [0, 0, 2, 0, 0], [3, 0, 0, 0, 0],
     [0, 2, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 0, 3]]
V = [[-92], [96], [0], [32], [-14], [-9], [-100], [18]]
G = [[18], [100], [37], [-79], [59], [-79]]


def _batch(**arrays):
    return {name: np.asarray(value, np.float64)[None] for name, value in arrays.items()}


def test_an_entry_made_only_of_underflowed_weights_is_outside_the_model():
    pytest.importorskip("jax")
    theorem = printed_backward_dq_matches_autodiff
    runner = runner_for(theorem, backend("jax"), "cpu", "jit")
    structure = Structure((("n_q", 6), ("d_k", 5), ("n_k", 8), ("d_v", 1)), (), 0)
    outcome = decide(runner, structure, 1, FLOAT32, arrays=_batch(Q=Q, K=K, V=V, G=G))
    assert outcome.out_of_range == 1 and outcome.instances == 0
    assert outcome.failing_row is None


n = Dim("n")
i = n.index("i")
x = Tensor("x", (n,), Real(-300, -200))


def _unshifted_softmax(xp, x):
    e = xp.exp(x)
    return e / xp.sum(e, axis=-1, keepdims=True)


unshifted = Theorem("unshifted_softmax_code", Source("tests", "planted"),
                    Equals(sp.Function("Code")(i), softmax(x[i], i)), inputs=(x,),
                    implementation=_unshifted_softmax)


@pytest.mark.parametrize("backend_name", ["numpy", "jax"])
def test_a_row_the_underflow_moves_as_a_whole_is_judged_and_fails(backend_name):
    pytest.importorskip(backend_name)
    row = backend(backend_name)
    runner = runner_for(unshifted, row, "cpu", row.default_mode)
    structure = Structure((("n", 3),), (), 0)
    scores = _batch(x=[-250.0, -260.0, -270.0])
    outcome = decide(runner, structure, 1, FLOAT32, arrays=scores)
    assert outcome.out_of_range == 0 and outcome.instances == 1
    assert outcome.failing_row == 0  # every e^x is 0 in float32: 0/0, where softmax is finite
