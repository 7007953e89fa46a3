"""Planted theorems for the checker's verdicts: each false one must be refuted, and the true one
beside it must not be. Each pair is a way the checker was once wrong in one direction or the
other (a false "proved", a false alarm).

These are test fixtures, discovered from this directory like any user's theorem directory.
They never enter the catalog or its reports.
"""

import sympy as sp

from attnproof.symbolic import (
    AtLeast,
    Dim,
    Equals,
    Mask,
    Real,
    Source,
    Tensor,
    Theorem,
    masked_softmax,
    softmax,
)
from attnproof.theorems import online_softmax as online

PLANTED = "tests/planted/soundness.py"

# -- 1. a kernel wrong only for block sizes >= 4, declared with the correct invariant lemmas ------


def blockwise_without_rescale_from_block_four(xp, Q, K, V, B, **_):
    """§10.1.2 as written, except that for blocks of 4 keys or more the running O and ℓ are
    not rescaled when the maximum grows: right for B <= 3, wrong beyond."""
    n_keys = K.shape[-2]
    scores_all = xp.einsum("...ia,...ja->...ij", Q, K) / xp.sqrt(xp.asarray(Q.shape[-1], Q.dtype))
    O = xp.zeros(Q.shape[:-1] + (V.shape[-1],), Q.dtype)
    ell = xp.zeros(Q.shape[:-1], Q.dtype)
    m = xp.full(Q.shape[:-1], -xp.inf, Q.dtype)
    for start in range(0, n_keys, B):
        scores = scores_all[..., start:start + B]
        m_new = xp.maximum(m, xp.max(scores, axis=-1))
        rescale = xp.exp(m - m_new) if B < 4 else xp.ones_like(m)
        weights = xp.exp(scores - m_new[..., None])
        O = O * rescale[..., None] + xp.einsum("...ij,...jb->...ib", weights,
                                               V[..., start:start + B, :])
        ell = ell * rescale + xp.sum(weights, axis=-1)
        m = m_new
    return O / ell[..., None]


planted_blockwise_without_rescale_from_block_four = Theorem(
    name="planted_blockwise_without_rescale_from_block_four",
    source=Source(PLANTED, "planted", "§10.1.2 with the rescale dropped for B >= 4"),
    claim=online.online_softmax_blockwise.claim,
    inputs=online.online_softmax_blockwise.inputs,
    definitions=online.online_softmax_blockwise.definitions,
    lemmas=online.invariant_lemmas,  # correct lemmas: they say nothing about this code
    implementation=blockwise_without_rescale_from_block_four,
    expect="refuted",
)

# -- 3. an inequality false only where a matrix maps a vector to 0 --------------------------------

n_rows, n_cols = Dim("N"), Dim("d")
r = n_rows.index("r")
a, c = n_cols.indices("a c")
K = Tensor("K", (n_rows, n_cols))
x = Tensor("x", (n_cols,))
y = Tensor("y", (n_cols,))
image = sp.Sum(K[r, a] * x[a], (a, 0, n_cols.symbol - 1))
norm_x = sp.Sum(x[c] ** 2, (c, 0, n_cols.symbol - 1))

planted_every_matrix_is_injective = Theorem(
    name="planted_every_matrix_is_injective",
    source=Source(PLANTED, "planted", "‖Kx‖² ≥ 1e-9 ‖x‖²: false for x in the kernel of K"),
    claim=AtLeast(sp.Sum(image ** 2, (r, 0, n_rows.symbol - 1)), sp.Rational(1, 10**9) * norm_x),
    inputs=(K, x),
    expect="refuted",
)

planted_cauchy_schwarz = Theorem(
    name="planted_cauchy_schwarz",
    source=Source(PLANTED, "planted", "(Σ x y)² ≤ Σ x² Σ y², equality for parallel vectors"),
    claim=AtLeast(norm_x * sp.Sum(y[c] ** 2, (c, 0, n_cols.symbol - 1)),
                  sp.Sum(x[a] * y[a], (a, 0, n_cols.symbol - 1)) ** 2),
    inputs=(x, y),
)

# -- 4 and 6. IEEE values: a log of a mask (log 0 = -inf, a fully masked row 0/0) ---------------

n_keys = Dim("n")
k = n_keys.index("k")
M = Tensor("M", (n_keys,), Mask())
s = Tensor("s", (n_keys,))

planted_softmax_of_log_mask_is_masked_softmax = Theorem(
    name="planted_softmax_of_log_mask_is_masked_softmax",
    source=Source(PLANTED, "planted", "softmax(s + log M) = masked softmax (57), M a 0/1 mask"),
    claim=Equals(softmax(s[k] + sp.log(M[k]), k), masked_softmax(s[k], M[k], k, 1)),
    inputs=(M, s),
    note="Where M = 0, log M = -inf and its error scale is NaN; a fully masked row is 0/0.",
)

# -- 5. an at= hook is an assumption ---------------------------------------------------------

z = Tensor("z", (n_keys,), Real(-3, 3))


def at_zero_or_one(np, z, **_):
    """Round every entry to 0 or 1: where the claim below is asserted."""
    return {"z": (z > 0).astype(np.float64)}


def at_zero_one_or_two(np, z, **_):
    """Round every entry to 0, 1 or 2: the claim below fails at 2."""
    return {"z": np.clip(np.round(np.abs(z)), 0.0, 2.0)}


planted_hook_points_are_idempotent = Theorem(
    name="planted_hook_points_are_idempotent",
    source=Source(PLANTED, "planted", "z² = z where a hook puts z in {0, 1}"),
    claim=Equals(z[k] ** 2, z[k]),
    inputs=(z,),
    at=at_zero_or_one,
)

planted_hook_points_beyond_idempotent = Theorem(
    name="planted_hook_points_beyond_idempotent",
    source=Source(PLANTED, "planted", "z² = z where a hook puts z in {0, 1, 2}: false at 2"),
    claim=Equals(z[k] ** 2, z[k]),
    inputs=(z,),
    at=at_zero_one_or_two,
    expect="refuted",
)
