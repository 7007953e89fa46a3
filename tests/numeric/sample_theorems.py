"""A sample catalog for the numeric checker's own tests and timings (true and planted-false).

The project's real catalog lives in ``theorems/``; these exist so ``numeric`` can be tested on
its own: each has a known verdict.
"""

from __future__ import annotations

import sympy as sp

from attnproof.symbolic import (
    AtLeast,
    Defined,
    Dim,
    Equals,
    Integer,
    Positive,
    Real,
    Scalar,
    Simplex,
    Source,
    Tensor,
    Theorem,
    entropy,
    kl,
    lse,
    rowsum,
    softmax,
)

HERE = Source("tests/numeric/sample_theorems.py", "sample")


delta = sp.KroneckerDelta
nq, nk, dk, dv = Dim("n_q", latex="n_q"), Dim("n_k"), Dim("d_k"), Dim("d_v")
i, m = nq.indices("i m")
j, n, k = nk.indices("j n k")
a, b = dk.indices("a b")
e, f = dv.indices("e f")
S = Tensor("S", (nq, nk), Real(-3, 3))
T = Scalar("T", Positive(1e-3, 1e3))
beta = 1 / T.symbol
A = Defined("A", (i, j), softmax(S[i, j], j, beta))
p = Tensor("p", (nq, nk), Simplex())
c = Tensor("c", (nq,), Real(-3, 3))
H = Defined("H", (i,), entropy(A[i, j], j))


def _softmax_theorem(name, claim, extra=(), definitions=(A,), expect="holds"):
    return Theorem(name, HERE, claim, inputs=(S, T, *extra), definitions=definitions,
                   expect=expect)


rows_sum_to_one = _softmax_theorem("rows_sum_to_one", Equals(rowsum(A[i, j], j), 1))
softmax_jacobian = _softmax_theorem("softmax_jacobian", Equals(
    sp.Derivative(A[i, j], S[m, n]), delta(i, m) * A[i, j] * (delta(j, n) - A[i, n]) / T.symbol))
softmax_jacobian_missing_beta = _softmax_theorem("softmax_jacobian_missing_beta", Equals(
    sp.Derivative(A[i, j], S[m, n]), delta(i, m) * A[i, j] * (delta(j, n) - A[i, n])),
    expect="refuted")
shift_invariance = _softmax_theorem("shift_invariance", Equals(
    softmax(S[i, j] + c[i], j, beta), A[i, j]), extra=(c,))
log_softmax = _softmax_theorem("log_softmax", Equals(
    sp.log(A[i, j]), S[i, j] / T.symbol - lse(S[i, k] / T.symbol, k)))
explicit_softmax = _softmax_theorem("explicit_softmax", Equals(
    sp.exp(S[i, j] / T.symbol) / rowsum(sp.exp(S[i, k] / T.symbol), k), A[i, j]))
lse_gradient = _softmax_theorem("lse_gradient", Equals(
    sp.Derivative(T.symbol * lse(S[i, k] / T.symbol, k), S[m, n]), delta(i, m) * A[i, n]))
temperature_derivative = _softmax_theorem("temperature_derivative", Equals(
    sp.Derivative(A[i, j], T.symbol),
    -A[i, j] * (S[i, j] - rowsum(A[i, k] * S[i, k], k)) / T.symbol**2))
free_energy = _softmax_theorem("free_energy_gap", Equals(
    -rowsum(p[i, j] * S[i, j], j) - T.symbol * entropy(p[i, j], j)
    + T.symbol * lse(S[i, k] / T.symbol, k), T.symbol * kl(p[i, j], A[i, j], j)), extra=(p,))
gibbs = _softmax_theorem("gibbs_inequality", AtLeast(kl(p[i, j], A[i, j], j), 0), extra=(p,))
kl_symmetric = _softmax_theorem("kl_symmetric", Equals(
    kl(p[i, j], A[i, j], j), kl(A[i, j], p[i, j], j)), extra=(p,), expect="refuted")
entropy_at_most_log_n = _softmax_theorem("entropy_at_most_log_n", AtLeast(
    sp.log(nk.symbol), H[i]), definitions=(A, H))
entropy_nonnegative = _softmax_theorem("entropy_nonnegative", AtLeast(H[i], 0),
                                       definitions=(A, H))

# -- attention ----------------------------------------------------------------------------

Q = Tensor("Q", (nq, dk))
K = Tensor("K", (nk, dk))
V = Tensor("V", (nk, dv))
G = Tensor("G", (nq, dv))
scores = Defined("Z", (i, j), rowsum(Q[i, a] * K[j, a], a) / sp.sqrt(dk.symbol))
P = Defined("P", (i, j), softmax(scores[i, j], j))
O = Defined("O", (i, e), rowsum(P[i, j] * V[j, e], j))
loss = rowsum(rowsum(G[i, e] * O[i, e], e), i)
dP = Defined("dP", (i, j), rowsum(G[i, e] * V[j, e], e))
dZ = Defined("dZ", (i, j), P[i, j] * (dP[i, j] - rowsum(P[i, k] * dP[i, k], k)))
attention = (Q, K, V)
backward = (scores, P, O, dP, dZ)


def _attention_theorem(name, claim, inputs=attention, definitions=(scores, P, O), **extra):
    return Theorem(name, HERE, claim, inputs=inputs, definitions=definitions, **extra)


attention_explicit = _attention_theorem("attention_explicit", Equals(
    O[i, e], rowsum(sp.exp(scores[i, j]) * V[j, e], j) / rowsum(sp.exp(scores[i, k]), k)))
attention_dv = _attention_theorem("attention_backward_dv", Equals(
    sp.Derivative(loss, V[n, f]), rowsum(P[i, n] * G[i, f], i)), inputs=(*attention, G),
    definitions=backward)
attention_dq = _attention_theorem("attention_backward_dq", Equals(
    sp.Derivative(loss, Q[m, b]), rowsum(dZ[m, j] * K[j, b], j) / sp.sqrt(dk.symbol)),
    inputs=(*attention, G), definitions=backward)
attention_dk = _attention_theorem("attention_backward_dk", Equals(
    sp.Derivative(loss, K[n, b]), rowsum(dZ[i, n] * Q[i, b], i) / sp.sqrt(dk.symbol)),
    inputs=(*attention, G), definitions=backward)
attention_dk_transposed = _attention_theorem("attention_backward_dk_transposed", Equals(
    sp.Derivative(loss, K[n, b]), rowsum(dZ[i, n] * K[n, b], i) / sp.sqrt(dk.symbol)),
    inputs=(*attention, G), definitions=backward, expect="refuted")

# -- Hopfield ----------------------------------------------------------------------------

X = Tensor("X", (nk, dk))
xi = Tensor("xi", (dk,))
hopfield_energy = -lse(T.symbol * rowsum(X[k, a] * xi[a], a), k) / T.symbol \
    + rowsum(xi[a] ** 2, a) / 2
hopfield_gradient = Theorem("hopfield_gradient", HERE, Equals(
    sp.Derivative(hopfield_energy, xi[b]),
    xi[b] - rowsum(softmax(rowsum(X[j, a] * xi[a], a), j, T.symbol) * X[j, b], j)),
    inputs=(X, xi, T))

# -- block-wise (flash) attention, an algorithm checked through ``implementation`` ----------

B = Scalar("B", Integer(1, 4))


def flash_attention(xp, Q, K, V, B, rescale=True):
    """Online softmax over key blocks of size B, as in FlashAttention's forward loop."""
    batch, n_q, d_k = Q.shape
    n_k = K.shape[1]
    peak = xp.full((batch, n_q, 1), -xp.inf, dtype=Q.dtype)
    total = xp.zeros((batch, n_q, 1), dtype=Q.dtype)
    out = xp.zeros((batch, n_q, V.shape[2]), dtype=Q.dtype)
    for start in range(0, n_k, B):
        z = xp.einsum("zia,zja->zij", Q, K[:, start:start + B]) / d_k**0.5
        new_peak = xp.maximum(peak, xp.max(z, axis=2, keepdims=True))
        weights = xp.exp(z - new_peak)
        carried = xp.exp(peak - new_peak) if rescale else 1.0
        total = total * carried + xp.sum(weights, axis=2, keepdims=True)
        out = out * carried + xp.einsum("zij,zje->zie", weights, V[:, start:start + B])
        peak = new_peak
    return out / total


flash = _attention_theorem("flash_attention", Equals(O[i, e], rowsum(P[i, j] * V[j, e], j)),
                           inputs=(*attention, B), implementation=flash_attention)
flash_without_rescale = _attention_theorem(
    "flash_attention_without_rescale", Equals(O[i, e], rowsum(P[i, j] * V[j, e], j)),
    inputs=(*attention, B), expect="refuted",
    implementation=lambda xp, **arrays: flash_attention(xp, **arrays, rescale=False))

SAMPLE = tuple(v for v in dict(globals()).values() if isinstance(v, Theorem))
