"""The Markdown summary: escaping of user text, table shape, refutations, errors."""

import re

from attnproof.report.figures import Figures
from attnproof.report.markdown import code, escape, math, render

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
    section = markdown.split("## Theorems", 1)[1].split("\n### ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def _theorem_section(markdown: str, name: str) -> str:
    return markdown.split(f"### {escape(name)}\n", 1)[1].split("\n### ", 1)[0]


def test_every_overview_row_has_four_cells_despite_pipes_in_user_text():
    report = sample_report()
    report.theorems[0].name = "rows | with pipe"
    rows = _table_rows(render(report))
    assert len(rows) == 2 + len(report.theorems)
    assert all(len(UNESCAPED_PIPE.findall(row)) == 5 for row in rows)
    assert r"rows \| with pipe" in rows[2]


def test_overview_rows_report_status_proof_and_numeric_evidence():
    rows = _table_rows(render(sample_report()))
    proved = next(r for r in rows if r.startswith(r"| [softmax\_rows](#softmax_rows)"))
    assert "proved for all sizes" in proved
    assert "sum normal form (all sizes), 0.25 s" in proved
    assert "2/2 passed, 2,560 instances, worst 2.3 bits" in proved


def test_summary_counts_totals_and_environment():
    markdown = render(sample_report())
    assert "| ✅ proved | shown by a symbolic route" in markdown and "| 2 |" in markdown
    assert "**3 theorems**, 3 as expected; 1 error. 4,032 numeric instances" in markdown
    assert "| 3.11.7 | 1.14.0 | 2.4.6 | not installed | not installed | numpy:cpu |" in markdown


def test_each_theorem_section_has_statement_assumptions_evidence_and_replay():
    section = _theorem_section(render(sample_report()), "softmax_rows")
    assert "**Source:** tutorial §6.3, eq. (39)" in section
    assert "```math\n\\sum_{j} A_{i j} = 1\n```" in section
    assert r"where $`A_{i j} = \operatorname{softmax}_{j}(S_{i j})`$" in section
    assert "$`T`$: positive in \\[0.001, 1000\\] (log-uniform)" in section
    assert r"A note with \| pipes and \*stars\*." in section
    assert "| jax | bfloat16 | cpu | jit | passed | 1,280 | 0 | 2.0 | 1.6 | 0.50 s |" in section
    assert "float64 was at most 0.5 ULPs off (worst of 1: numpy float64 cpu eager)" \
        in section
    # a file outside the folder the run was made in is named by its folder and name, never by
    # the generating machine's absolute path
    assert ("Reproduce:\n\n```sh\nattnproof prove --theorem softmax_rows --theorems "
            "t/softmax.py\n```") in section
    assert "/tmp/" not in section


def test_refuted_claim_shows_counterexamples_replay_and_its_correction():
    section = _theorem_section(render(sample_report()), "wrong_claim")
    assert 'values: {"x[0]": "1"}' in section  # the exact counterexample
    assert "(jax float64 cpu jit)" in section
    assert "| numpy | bfloat16 | cpu | eager | **not-decisive** |" in section
    assert "- numpy bfloat16 cpu eager (not-decisive): false in float64 but within" in section
    assert "```sh\nattnproof replay wrong_claim --seed 1\n```" in section
    assert r"**Corrected by** [right\_claim](#right_claim): proved for all sizes." in section


def test_errata_lists_the_false_claim_with_its_values_and_correction():
    errata = render(sample_report()).split("## Errata", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in errata.splitlines() if line.startswith("| [")]
    assert row.startswith(r"| [wrong\_claim](#wrong_claim) | tutorial §9.2 | n = 1; x\[0\] = 1")
    assert r"[right\_claim](#right_claim) (proved for all sizes) |" in row


def test_code_spans_outlast_backticks_inside():
    assert code("a ` b") == "``a ` b``"
    assert code("`x`") == "`` `x` ``"


def test_error_messages_are_fenced_beyond_any_backticks_they_contain():
    section = render(sample_report()).split("## Errors", 1)[1]
    assert r"/tmp/t/broken.py" in section
    assert "  ````\n  SyntaxError: ``` invalid | syntax\n  ````" in section


def test_partial_runs_say_so_and_why():
    report = sample_report()
    assert "Partial report" not in render(report)
    report.partial, report.partial_reason = True, "only 1 selected theorem(s) were checked"
    assert "> **Partial report:** only 1 selected theorem(s) were checked." in render(report)


def test_figures_are_linked_when_drawn_and_explained_when_not():
    drawn = render(sample_report(), Figures(error_bits=("figures/error_bits",)))
    assert "![worst error in bits per theorem and configuration](figures/error_bits.png)" in drawn
    missing = render(sample_report(), Figures(missing="Figures need matplotlib."))
    assert "_Figures need matplotlib._" in missing and "](figures/" not in missing
