"""The report's coverage of the documents: every stated place with its theorems and status,
every numbered equation of the tutorial, the claims still pending; none for a user's own
theorems."""

import pytest

from attnproof.report import document as doc
from attnproof.report.coverage import equation_rows, equations, natural_order, pending_claims
from tests.cli.samples import sample_report

TUTORIAL = "Attention as Bilinear Form"


def _coverage_section(report):
    return next((s for s in doc.build(report).sections
                 if s.title == "Coverage of the documents"), None)


def _texts(table) -> list[str]:
    return ["".join(getattr(piece, "text", getattr(piece, "name", "")) for piece in row[0])
            for row in table.rows]


def test_cited_equations_include_every_number_of_a_range():
    assert equations("§6.5, eq. (42)–(44), (9)") == {9, 42, 43, 44}
    assert equations("steps 1–3") == set()


def test_natural_order_puts_section_2_before_section_10():
    places = [f"{TUTORIAL} §10.1", f"{TUTORIAL} §2.3", f"{TUTORIAL} §2.10"]
    assert sorted(places, key=natural_order) == [places[1], places[2], places[0]]


def test_every_tutorial_equation_has_a_row_with_its_theorems():
    rows = equation_rows({"softmax_rows": f"{TUTORIAL} §6.3, eq. (39)–(40)"})
    assert [r.number for r in rows] == list(range(1, 81))
    assert rows[38].theorems == ("softmax_rows",) and rows[39].theorems == ("softmax_rows",)
    assert rows[0].marked.startswith("notation")  # (1) is the pairing of covector and vector


def test_a_report_of_document_theorems_shows_places_equations_and_pending_claims():
    report = sample_report()
    report.theorems[0].source = f"{TUTORIAL} §6.3, eq. (39)"
    section = _coverage_section(report)
    places, numbered, *pending = [b for b in section.blocks if isinstance(b, doc.Table)]
    assert f"{TUTORIAL} §6.3, eq. (39)" in _texts(places)
    assert len(numbered.rows) == 80
    row_39 = numbered.rows[38]
    assert doc.Link("softmax_rows") in row_39[1]
    assert any(isinstance(piece, doc.Status) and piece.status == "proved" for piece in row_39[1])
    assert len(pending_claims()) == (len(pending[0].rows) if pending else 0)


def test_a_report_of_a_users_own_theorems_has_no_coverage_section():
    report = sample_report()
    report.run["user_theorems"] = [t.name for t in report.theorems]
    assert _coverage_section(report) is None


# -- the companion documents, line by line (theorems/_lines.py) ----------------------------

def _companion_texts():
    from attnproof.theorems._lines import LINES
    from tests.conftest import SEEDS_DIR

    if not SEEDS_DIR.exists():
        pytest.skip("the source documents are not here")
    return {file: (rows, (SEEDS_DIR / file).read_text(encoding="utf-8"))
            for file, rows in LINES.items()}


def test_a_line_without_a_row_is_found():
    from attnproof.theorems._lines import definition, lines_without_a_row, not_a_claim

    rows = (not_a_claim((1, 1), "heading"), definition((3, 3), "data"))
    assert lines_without_a_row(rows, "Title\n\nQ = 1\nA = softmax(Q)\n") == [4]


def test_every_nonblank_line_of_the_companion_documents_has_a_row():
    from attnproof.theorems._lines import lines_without_a_row

    for file, (rows, text) in _companion_texts().items():
        assert not lines_without_a_row(rows, text), f"{file}: lines without a row"


def test_each_row_quotes_the_lines_it_covers():
    from attnproof.theorems._lines import quoted_text

    for file, (rows, text) in _companion_texts().items():
        for row in rows:
            assert row["quote"] in quoted_text(row, text), f"{file} {row['lines']}: {row['quote']}"


def test_each_row_has_one_status_and_names_what_exists():
    from attnproof.symbolic import discover
    from attnproof.theorems._lines import LINES
    from attnproof.theorems._pending import PENDING

    names = {t.name for t in discover().theorems}
    pending = {p["claim"] for p in PENDING}  # a claim may be filed under another document
    for file, rows in LINES.items():
        for row in rows:
            reasons = [key for key in ("theorems", "definition", "not_a_claim", "pending")
                       if row.get(key)]
            assert len(reasons) == 1 and row["claim"], (file, row)
            assert set(row.get("theorems", ())) <= names, (file, row)
            if row.get("pending"):
                assert row["pending"] in pending, (file, row)


def test_every_theorem_and_pending_claim_of_a_companion_document_has_a_row():
    from attnproof.symbolic import discover
    from attnproof.theorems._lines import LINES
    from attnproof.theorems._pending import PENDING

    for file, rows in LINES.items():
        named = {name for row in rows for name in row.get("theorems", ())}
        cited = {t.name for t in discover().theorems if t.source.file == file}
        assert not cited - named, f"{file}: theorems with no row: {sorted(cited - named)}"
        listed = {row["pending"] for row in rows if row.get("pending")}
        waiting = {p["claim"] for p in PENDING if p["file"] == file}
        assert not waiting - listed, f"{file}: pending claims with no row: {waiting - listed}"
