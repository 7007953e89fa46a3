"""What every claim kind in the catalog owes the rest of the tool: a kind name, a statement in
LaTeX, numeric configurations among those available, and assumptions that say what its own
numeric route draws."""

import pytest

from attnproof.numeric import available_configurations
from attnproof.report.descriptions import assumptions
from attnproof.symbolic import ClaimKind, discover, statement_latex

KIND_THEOREMS = [t for t in discover().theorems if isinstance(t.claim, ClaimKind)]


def test_the_catalog_holds_every_kind():
    kinds = {type(t.claim).__module__.rsplit(".", 1)[-1] for t in KIND_THEOREMS}
    assert kinds >= {"limit", "series", "inequality", "ieee", "statistical", "code_numbers",
                     "reshape", "permutation", "linalg", "cost"}


@pytest.mark.parametrize("theorem", KIND_THEOREMS, ids=lambda t: t.name)
def test_a_kind_names_itself_renders_and_keeps_available_configurations(theorem):
    claim = theorem.claim
    assert claim.kind != ClaimKind.kind
    assert statement_latex(theorem).strip()
    found = available_configurations()
    assert set(map(tuple, claim.numeric_configurations(found))) <= set(map(tuple, found))


@pytest.mark.parametrize("theorem", [t for t in KIND_THEOREMS
                                     if t.claim.numeric_draws and t.inputs],
                         ids=lambda t: t.name)
def test_assumptions_say_what_a_kinds_own_route_draws(theorem):
    domains = [a["domain"] for a in assumptions(theorem) if a["name"] in
               {x.name for x in theorem.inputs}]
    assert domains and all(theorem.claim.numeric_draws in d for d in domains)
    assert not any("instances scaled so the largest entry" in d for d in domains)
