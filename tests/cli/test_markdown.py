"""The Markdown summary: escaping of user text, table shape, refutations, errors."""

import re

from attnproof._markdown import escape, math, render

from .samples import sample_report

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def test_escape_neutralises_markdown_syntax():
    assert escape("a_b *c* [l](u) x|y $t$ <b> ~s~ \\ & `c`") == (
        r"a\_b \*c\* \[l\](u) x\|y \$t\$ \<b\> \~s\~ \\ \& \`c\`"
    )


def test_escape_joins_lines_so_a_table_cell_stays_one_cell():
    assert escape("first\nsecond\t third") == "first second third"


def test_math_is_inline_for_github_and_empty_when_absent():
    assert math(r"A_{i j} =\n 1".replace(r"\n", "\n")) == "$`A_{i j} = 1`$"
    assert math("") == ""


def _table_rows(markdown: str) -> list[str]:
    section = markdown.split("## Theorems", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_every_table_row_has_six_cells_despite_pipes_in_user_text():
    report = sample_report()
    report.theorems[0].source = "eq. | (39) | (40)"
    rows = _table_rows(render(report))
    assert len(rows) == 2 + len(report.theorems)
    assert all(len(UNESCAPED_PIPE.findall(row)) == 7 for row in rows)
    assert r"eq. \| (39) \| (40)" in rows[2]


def test_rows_report_status_symbolic_and_numeric_evidence():
    rows = _table_rows(render(sample_report()))
    proved = next(r for r in rows if r.startswith(r"| softmax\_rows"))
    assert "proved (all sizes)" in proved
    assert "sum normal form (all sizes), 0.25 s" in proved
    assert "1/1 passed, 1,280 instances, worst 2.3 bits" in proved


def test_counts_and_statements_are_rendered():
    markdown = render(sample_report())
    assert "| proved (all sizes) | 2 |" in markdown
    assert "| refuted | 1 |" in markdown
    assert "3 of 3 theorems came out as expected; 1 errors." in markdown
    assert r"$`\sum_{j} A_{i j} = 1`$" in markdown
    assert r"A note with \| pipes and \*stars\*." in markdown


def test_refuted_claim_shows_counterexamples_replay_and_its_correction():
    section = render(sample_report()).split("## Refuted claims and counterexamples", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert r"### wrong\_claim" in section
    assert 'values: {"x[0]": "1"}' in section  # the exact counterexample
    assert "jax float64 cpu jit" in section
    assert "attnproof replay wrong_claim --seed 1" in section
    assert r"Corrected claim: **right\_claim** (proved (all sizes))." in section


def test_error_messages_are_fenced_beyond_any_backticks_they_contain():
    section = render(sample_report()).split("## Errors", 1)[1]
    assert r"/tmp/t/broken.py" in section
    assert "  ````\n  SyntaxError: ``` invalid | syntax\n  ````" in section


def test_partial_runs_say_so():
    report = sample_report()
    assert "Partial run" not in render(report)
    report.partial = True
    assert "Partial run" in render(report)
