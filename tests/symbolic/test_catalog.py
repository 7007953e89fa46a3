"""The catalog as a registry: every theorem is well formed, sourced and renders."""

import subprocess
import sys

import pytest

from attnproof.report.coverage import equations
from attnproof.symbolic import definitions_latex, discover, statement_latex
from tests.conftest import SEEDS_DIR

CATALOG = discover()
NAMES = [t.name for t in CATALOG.theorems]


def test_catalog_loads_without_errors():
    assert CATALOG.errors == ()
    assert len(NAMES) == len(set(NAMES))


@pytest.mark.parametrize("prefix", [
    "softmax_jacobian", "free_energy", "hopfield_fixed_point", "online_softmax",
    "attention_backward",
])
def test_headline_topics_are_present(prefix):
    assert any(name.startswith(prefix) for name in NAMES)


@pytest.mark.parametrize("theorem", CATALOG.theorems, ids=NAMES)
def test_theorem_is_sourced_and_renders(theorem):
    assert theorem.source.section
    if SEEDS_DIR.exists() and theorem.source.file != "outside":  # outside the documents
        assert (SEEDS_DIR / theorem.source.file).exists(), theorem.source.file
    relations = ("=", r"\geq", r"\approx", getattr(theorem.claim, "relation", "="))
    assert any(r in statement_latex(theorem) for r in relations)
    assert len(definitions_latex(theorem)) == len(theorem.definitions)


@pytest.mark.parametrize("theorem", [t for t in CATALOG.theorems if t.corrects],
                         ids=lambda t: t.name)
def test_corrections_name_a_refuted_claim(theorem):
    corrected = CATALOG.by_name()[theorem.corrects]
    assert corrected.expect == "refuted"
    assert theorem.expect == "holds"


def test_planted_variants_stay_out_of_the_catalog():
    assert not any(name.startswith("planted_") for name in NAMES)


def test_import_symbolic_imports_no_array_backend():
    code = (
        "import sys, attnproof.symbolic as symbolic; symbolic.discover(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'mlx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("theorem", CATALOG.theorems, ids=NAMES)
def test_sources_are_cited_by_document_title(theorem):
    from attnproof.symbolic._theorem import DOCUMENT_TITLES

    assert theorem.source.file in DOCUMENT_TITLES
    assert str(theorem.source).startswith(DOCUMENT_TITLES[theorem.source.file])


def test_every_numbered_equation_of_the_tutorial_is_cataloged_or_marked():
    """A pending claim does not count: each of (1)–(80) maps to a theorem or is marked as
    notation or definition with its reason."""
    from attnproof.theorems._dims import TUTORIAL
    from attnproof.theorems._pending import NOT_CLAIMS

    cited = set()
    for theorem in CATALOG.theorems:
        if theorem.source.file == TUTORIAL:
            cited |= equations(f"{theorem.source.section} {theorem.source.equations}")
    missing = set(range(1, 81)) - cited - set(NOT_CLAIMS)
    assert not missing, f"equations neither cataloged nor marked: {sorted(missing)}"
    assert not cited & set(NOT_CLAIMS) - {14, 32}, "a marked equation is also cited as a claim"


def test_pending_claims_name_their_place_and_kind():
    from attnproof.theorems._pending import KINDS, PENDING

    for entry in PENDING:
        assert entry["kind"] in KINDS, entry
        assert entry["verdict"] in ("true", "false", "open"), entry
        assert entry["section"] and entry["place"] and entry["claim"], entry
        if SEEDS_DIR.exists():
            assert (SEEDS_DIR / entry["file"]).exists(), entry["file"]
        if entry["verdict"] == "false":
            assert entry.get("note"), f"a false claim needs the reason: {entry['claim']}"
