"""Every node of the statement language renders in LaTeX, alone and as the base of a power.

SymPy's printer hands a function-like base its exponent (``_latex(printer, exp=...)``): a node
that did not take it made Σ_j p_j², p^β and [j ≤ i]² unprintable, and a theorem stating one
ended in an error before any check. The nodes are found in the vocabulary module and the claim
kinds' modules, every one that prints itself (``_latex``), so a node added later without an
example here fails ``test_every_vocabulary_node_has_an_example``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
import sympy as sp

from attnproof.symbolic import _vocabulary as vocabulary
from attnproof.symbolic import (
    fully_masked,
    indicator,
    kinds,
    latex,
    log_error,
    lse,
    masked_softmax,
    online_softmax,
    rotation,
    rowmax,
    rowmin,
    softmax,
    where,
)
from attnproof.symbolic.kinds.error_bound import LogError
from attnproof.symbolic.kinds.spectral import SpectralTerm, cond
from attnproof.symbolic.route import Where

i, j = sp.Idx("i", 4), sp.Idx("j", 4)
S, M, V = sp.IndexedBase("S"), sp.IndexedBase("M"), sp.IndexedBase("V")
T = sp.Symbol("T", positive=True)
theta = sp.Symbol("theta", real=True)

EXAMPLES = {
    vocabulary.Softmax: lambda: softmax(S[i, j], j),
    vocabulary.AllMasked: lambda: fully_masked(M[i, j], j),
    vocabulary.LogSumExp: lambda: lse(S[i, j], j),
    vocabulary.ReduceMax: lambda: rowmax(S[i, j], j),
    vocabulary.ReduceMin: lambda: rowmin(S[i, j], j),
    vocabulary.OnlineSoftmax: lambda: online_softmax(S[i, j], V[j, i], j, 2),
    vocabulary.Rotation: lambda: rotation(theta, i, j),
    vocabulary.Indicator: lambda: indicator(j <= i),
    LogError: lambda: log_error(sp.Symbol("k", integer=True, positive=True)),
    Where: lambda: where(M[i, j], S[i, j], -sp.oo),
    SpectralTerm: lambda: cond(S[i, j], i, j),  # each subclass prints as its base does
}
MASKED = masked_softmax(S[i, j], M[i, j], j)


def _modules():
    yield vocabulary
    for found in pkgutil.iter_modules(kinds.__path__):
        yield importlib.import_module(f"{kinds.__name__}.{found.name}")


def _nodes() -> list[type]:
    """The vocabulary's nodes, and every node of a claim kind's module that prints itself."""
    found = {c for module in _modules() for _, c in inspect.getmembers(module, inspect.isclass)
             if c.__module__ == module.__name__ and issubclass(c, sp.Basic)
             and (module is vocabulary or "_latex" in vars(c))}
    return sorted(found, key=lambda c: c.__name__)


def test_every_vocabulary_node_has_an_example():
    assert set(_nodes()) == set(EXAMPLES)


@pytest.mark.parametrize("node", _nodes(), ids=lambda c: c.__name__)
@pytest.mark.parametrize(("exponent", "printed"), [(2, "2"), (1 / T, r"\frac{1}{T}")])
def test_a_power_of_every_node_renders_with_its_exponent(node, exponent, printed):
    base = EXAMPLES[node]()
    alone = latex(base)
    raised = latex(base ** exponent)
    assert raised.endswith(f"^{{{printed}}}")
    assert alone in raised  # the node itself, unchanged, under the exponent


def test_a_masked_softmax_squared_keeps_its_mask_and_parentheses():
    assert latex(MASKED ** 2) == rf"\left({latex(MASKED)}\right)^{{2}}"


def test_a_softmax_at_a_temperature_is_the_power_of_the_softmax_statement_renders():
    from attnproof.symbolic import Equals

    claim = Equals(softmax(S[i, j], j, 1 / T), softmax(S[i, j], j) ** (1 / T))
    assert claim.to_latex(latex).count(r"\operatorname{softmax}") == 2
