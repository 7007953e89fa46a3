"""Planted permutation claims: reordering the keys but not the values (false), and the keys
and values together (true: re-indexing)."""

import sympy as sp

from attnproof.symbolic import Dim, Permutation, Permuted, Sizes, Source, Tensor, Theorem, softmax

PLANTED = "tests/planted/kinds_permutation.py"

n_q, n_k, d = Dim("n_q", Sizes(1, 4)), Dim("n_k", Sizes(1, 5)), Dim("d", Sizes(1, 4))
i, j, a = n_q.index("i"), n_k.index("j"), d.index("a")
S = Tensor("S", (n_q, n_k))
V = Tensor("V", (n_k, d))
pi = Permutation("pi", n_k)


def keys(order):
    return sp.Sum(softmax(S[i, order(j)], j) * V[j, a], (j, 0, n_k.symbol - 1))


planted_reordering_keys_alone_leaves_output = Theorem(
    name="planted_reordering_keys_alone_leaves_output",
    source=Source(PLANTED, "planted", "keys reordered, values not"),
    claim=Permuted(keys(lambda x: pi[x]), keys(lambda x: x)),
    inputs=(S, V, pi),
    expect="refuted",
)

planted_reordering_keys_and_values_leaves_output = Theorem(
    name="planted_reordering_keys_and_values_leaves_output",
    source=Source(PLANTED, "planted", "keys and values reordered together"),
    claim=Permuted(sp.Sum(softmax(S[i, pi[j]], j) * V[pi[j], a], (j, 0, n_k.symbol - 1)),
                   keys(lambda x: x)),
    inputs=(S, V, pi),
)
