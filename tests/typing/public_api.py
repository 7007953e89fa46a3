"""The public API used the way the README and docs/writing-theorems.md use it, for mypy.

Not a test module (pytest does not collect it) and never run: ``python -m mypy`` (configured in
pyproject.toml's ``[tool.mypy]``) reads it, and fails when a public name does not resolve to its
definition, as it would if ``attnproof``'s ``TYPE_CHECKING`` re-exports lost one
(``tests/packaging/test_public_types.py``).
"""

import numpy as np
import sympy as sp

import attnproof
from attnproof import (
    Cost,
    Defined,
    Dim,
    Equals,
    ErrorBound,
    FromCode,
    Gibbs,
    GreaterOrEqual,
    IEEEValue,
    Limit,
    Moments,
    Permutation,
    Permuted,
    Positive,
    PositiveDefinite,
    Real,
    Reshape,
    Scalar,
    Series,
    Simplex,
    Sizes,
    Source,
    Step,
    Tensor,
    Theorem,
    Variance,
    View,
    c_exp,
    entropy,
    flat,
    rowsum,
    softmax,
)
from attnproof.kernels import Kernel, check_kernel, proved_tolerance

version: str = attnproof.__version__

# README: a theorem, written and checked
n_q, n_k = Dim("n_q"), Dim("n_k")
i, m = n_q.indices("i m")
j, n = n_k.indices("j n")
S = Tensor("S", (n_q, n_k))
T = Scalar("T", Positive(1e-3, 1e3))
A = Defined("A", (i, j), softmax(S[i, j], j, 1 / T.symbol))

softmax_jacobian_temperature = Theorem(
    name="softmax_jacobian_temperature",
    source=Source("001_9db7190c12608696.txt", "§6.3", "(16), (39)"),
    claim=Equals(
        sp.Derivative(A[i, j], S[m, n]),
        sp.KroneckerDelta(i, m) * A[i, j] * (sp.KroneckerDelta(j, n) - A[i, n]) / T.symbol,
    ),
    inputs=(S, T),
    definitions=(A,),
)

# docs/writing-theorems.md: the claim kinds
uniform_at_high_temperature = Theorem(
    name="uniform_at_high_temperature",
    source=Source("001_9db7190c12608696.txt", "§4.2", "(18)"),
    claim=Limit(softmax(S[i, j], j, 1 / T.symbol), T.symbol, sp.oo, 1 / n_k.symbol,
                row=S[i, j]),
    inputs=(S, T),
)

x, eta = Scalar("x", Real(-3, 3)), Scalar("eta", Positive(1e-3, 1))
exp_step_to_second_order = Theorem(
    name="exp_step_to_second_order",
    source=Source("my_notes.md", "Taylor expansion of exp"),
    claim=Series(sp.exp(x.symbol + eta.symbol),
                 sp.exp(x.symbol) * (1 + eta.symbol + eta.symbol**2 / 2), eta.symbol, order=2),
    inputs=(x, eta),
)

d = Dim("d")
a = d.index("a")
p = Tensor("p", (n_k,), Simplex())
entropy_at_most_log_n = Theorem(
    name="entropy_at_most_log_n", source=Source("my notes", "§1"),
    claim=GreaterOrEqual(sp.log(n_k.symbol), entropy(p[j], j),
                         by=(Gibbs(p[j], 1 / n_k.symbol, j),)),
    inputs=(p,))

keys = Dim("keys", Sizes(1, 8))
key = keys.index("key")
weights = Tensor("weights", (keys,), Simplex())
normalized_entropy_one_key = Theorem(
    name="normalized_entropy_one_key",
    source=Source("my notes", "§4.3"),
    claim=IEEEValue(entropy(weights[key], key) / sp.log(keys.symbol), "nan",
                    sizes={"keys": 1}, at={"weights": [1]}),
    inputs=(weights,),
)

q, k = Tensor("q", (d,)), Tensor("k", (d,))
scaled_score_variance = Theorem(
    name="scaled_score_variance",
    source=Source("my_notes.md", "§1", "Var(q·k/√d_k) = 1"),
    claim=Variance(sp.Sum(q[a] * k[a], (a, 0, d.symbol - 1)) / sp.sqrt(d.symbol), 1,
                   law=Moments(mean=0, variance=1)),
    inputs=(q, k),
)

H, D, rows, e_dim = Dim("H"), Dim("D"), Dim("rows"), Dim("e")
h, c, r, e = H.index("h"), D.index("c"), rows.index("r"), e_dim.index("e")
f = flat(H, D).index("f")
O, W_O = Tensor("O", (H, rows, D)), Tensor("W_O", (H, D, e_dim))
Concat = View("Concat", O, (rows, flat(H, D)), method="concatenate")
W = View("W", W_O, (flat(H, D), e_dim))
concat_heads = Theorem(
    name="concat_heads", source=Source("my_notes.md", "multi-head", "(54)"),
    claim=Reshape(sp.Sum(O[h, r, c] * W_O[h, c, e], (h, 0, H.symbol - 1), (c, 0, D.symbol - 1)),
                  sp.Sum(Concat[r, f] * W[f, e], (f, 0, H.symbol * D.symbol - 1)),
                  views=(Concat, W)),
    inputs=(O, W_O),
)

V, pi = Tensor("V", (n_k, d)), Permutation("pi", n_k)
scores = Tensor("scores", (n_k, n_k))
reordered_keys = Theorem(
    name="reordered_keys", source=Source("my_notes.md", "invariance"),
    claim=Permuted(sp.Sum(softmax(scores[n, pi[j]], j) * V[pi[j], a], (j, 0, n_k.symbol - 1)),
                   sp.Sum(softmax(scores[n, j], j) * V[j, a], (j, 0, n_k.symbol - 1))),
    inputs=(scores, V, pi),
)

b, g = d.indices("b g")
M = Tensor("M", (d, d))
G = Defined("G", (a, b), sp.Sum(M[g, a] * M[g, b], (g, 0, g.upper)))
gram_is_positive_definite = Theorem(
    name="gram_is_positive_definite", source=Source("my notes", "§1"),
    claim=PositiveDefinite(G[a, b], a, b), inputs=(M,), definitions=(G,),
    expect="refuted", note="only semi-definite: W = 0 gives xᵀWᵀWx = 0",
)

Qs, Ks = Tensor("Q", (n_k, d)), Tensor("K", (n_k, d))
naive_attention_memory_linear = Theorem(
    name="naive_attention_memory_linear",
    source=Source("my notes", "§1", "standard attention in O(n) memory"),
    claim=Cost(n_k.symbol, (Step("S", (n_k, n_k)),), counted="entries", order="O",
               growing=(n_k,), implementation=lambda xp, Q, K: Q @ K.T),
    inputs=(Qs, Ks),
    expect="refuted",
)

size = Dim("size", Sizes(1, 256))
s1, s2 = size.indices("s1 s2")
row = Tensor("row", (size,))
softmax_as_written_within_gamma = Theorem(
    name="softmax_as_written_within_gamma",
    source=Source("my_notes.md", "softmax without the max shift"),
    claim=ErrorBound(sp.exp(row[s1]) / rowsum(sp.exp(row[s2]), s2), count=size.symbol + 2 * c_exp),
    inputs=(row,),
)


def kv_cache_mib(xp):
    layers, heads, length, head_dim, bytes_per = 24, 16, 2048, 64, 2
    kv_bytes = xp.constant(layers * 2 * heads * length * head_dim * bytes_per)
    return (kv_bytes / xp.constant(2**20),)


kv_cache_size = Theorem(
    name="kv_cache_size",
    source=Source("notebook.ipynb", "Demo 7", "KV cache MiB: 192.0"),
    claim=FromCode(kv_cache_mib, ("192.0",), ("KV cache MiB",)),
    inputs=(),
)

# a run from Python: the catalog, and one theorem proved
catalog = attnproof.discover()
proof = attnproof.prove(softmax_jacobian_temperature)


# README: checking a kernel
def my_attention(q, k, v, mask=None, scale=None):
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * (q.shape[-1] ** -0.5 if scale is None else scale)
    s = s if mask is None else np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", p / p.sum(axis=-1, keepdims=True), v)


def check_my_kernel() -> bool:
    queries, keys_, values = np.random.default_rng(0).standard_normal((3, 2, 4, 128, 64),
                                                                       dtype=np.float32)
    proved_tolerance(queries, keys_, values).assert_close(my_attention(queries, keys_, values))
    kernel = Kernel("my_attention", my_attention, "numpy", mask="bool", masked_inputs="finite")
    result = check_kernel(kernel, examples=10)
    print(result.to_markdown())
    return result.ok
