"""The Markdown report (``summary.md``), written for GitHub.

Math is ``$`…`$`` inline and a ```` ```math ```` block for display: both are GitHub's forms
that keep ``_`` and ``*`` inside a formula away from the Markdown parser. Every piece of user
text (names, sources, notes, messages) goes through ``escape``; LaTeX goes through ``math`` or
``display_math`` and nowhere else; commands and values go into code spans or fenced blocks.
"""

from __future__ import annotations

import json
import re

from . import _view as view
from ._figures import Figures
from ._results import NumericOutcome, Report, TheoremResult

# Characters that GitHub Markdown could read as syntax inside a line: emphasis, code, links,
# HTML, table cells, strikethrough, math and entities. Line-start syntax (#, -, +) cannot arise
# because user text never begins a line here.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$&])")

_MARKS = {"proved": "✅", "proved-bounded": "✅", "checked": "🔢", "unchecked": "⬜",
          "refuted": "❌", "failed": "🚨", "error": "⚠️"}


def escape(text) -> str:
    """``text`` as literal Markdown on one line (safe in a table cell)."""
    flat = " ".join(str(text).split())
    return _SPECIAL.sub(r"\\\1", flat)


def math(latex: str) -> str:
    """Inline math for GitHub; ``$`$…$`$`` keeps ``_`` and ``*`` in the formula from Markdown."""
    flat = " ".join(latex.split())
    return f"$`{flat}`$" if flat else ""


def display_math(latex: str) -> str:
    return _fenced(" ".join(latex.split()), info="math")


def code(text: str) -> str:
    """An inline code span that no backtick run inside ``text`` can close."""
    flat = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def render(report: Report, figures: Figures | None = None) -> str:
    figures = figures or Figures()
    sections = [
        _header(report),
        _summary(report),
        _errata(report),
        _figures(report, figures),
        _overview(report.theorems),
        _theorem_sections(report, figures),
        _errors(report),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


# -- top of the report ---------------------------------------------------------------------------


def _header(report: Report) -> str:
    by = report.run.get("by", "attnproof")
    profile = report.run.get("profile")
    made = f"by {escape(by)}" + (f", profile {escape(profile)}" if profile else "")
    lines = ["# attnproof report", "", f"Generated {escape(report.generated)} {made}."]
    if report.partial:
        reason = escape(report.partial_reason or "not every theorem was checked")
        lines += ["", "> [!WARNING]", f"> **Partial report:** {reason}."]
    return "\n".join(lines)


def _summary(report: Report) -> str:
    totals = view.totals(report)
    rows = [f"| {_MARKS.get(s, '')} {s} | {escape(view.STATUS_MEANINGS.get(s, ''))} | {n} |"
            for s, n in view.status_counts(report)]
    env = view.environment_rows(report)
    lines = [
        "## Summary", "",
        "| status | meaning | theorems |", "|---|---|---:|", *rows, "",
        f"**{totals.theorems} theorems**, {totals.as_expected} as expected; "
        f"{len(report.errors)} errors. {totals.instances:,} numeric instances; "
        f"proofs {view.format_seconds(totals.proof_seconds)}, "
        f"numeric checks {view.format_seconds(totals.numeric_seconds)}.",
        "",
        "| " + " | ".join(escape(name) for name, _ in env) + " |",
        "|" + "---|" * len(env),
        "| " + " | ".join(escape(value) for _, value in env) + " |",
    ]
    return "\n".join(lines)


def _errata(report: Report) -> str:
    entries = view.errata(report)
    if not entries:
        return ""
    lines = ["## Errata", "",
             "Claims of the documents found false, with their smallest counterexample and "
             "the corrected claim.", "",
             "| claim | source | counterexample | correction |", "|---|---|---|---|"]
    for claim, fixes in entries:
        found = view.smallest_counterexample(claim)
        values = escape(view.counterexample_summary(found[1], 160)) if found else "—"
        fixed = "; ".join(f"{_link(f.name)} ({escape(view.status_phrase(f))})" for f in fixes)
        lines.append(f"| {_link(claim.name)} | {escape(claim.source)} | {values} | "
                     f"{fixed or 'none stated'} |")
    return "\n".join(lines)


def _figures(report: Report, figures: Figures) -> str:
    if not report.theorems:
        return ""
    lines = ["## Figures"]
    if figures.error_bits:
        lines += ["", "Worst error in bits of each theorem for each backend and dtype "
                  "(lighter is more accurate; blank: not run; outlined in blue: a check failed; "
                  "dashed: not decisive).", "",
                  f"![worst error in bits per theorem and configuration]"
                  f"({figures.error_bits}.png)"]
    if figures.temperature:
        lines += ["", "Softmax weights and entropy of the scores S = [2, 1, 0] against the "
                  "temperature T, with the values printed in the tutorial's §11.2 table.", "",
                  f"![weights and entropy against temperature]({figures.temperature}.png)"]
    if figures.missing:
        lines += ["", f"_{escape(figures.missing)}_"]
    return "\n".join(lines) if len(lines) > 1 else ""


def _overview(theorems: list[TheoremResult]) -> str:
    if not theorems:
        return ""
    lines = ["## Theorems", "",
             "| theorem | status | proof | numeric evidence |", "|---|---|---|---|"]
    for t in theorems:
        lines.append(f"| {_link(t.name)} | {_status(t)} | {_proof_cell(t)} | "
                     f"{_numeric_cell(t.numeric)} |")
    return "\n".join(lines)


def _status(t: TheoremResult) -> str:
    text = escape(view.status_phrase(t))
    return f"{_MARKS.get(t.status, '')} {text if t.ok else f'**{text}**'}"


def _proof_cell(t: TheoremResult) -> str:
    if t.symbolic is None:
        return "—"
    return f"{escape(t.symbolic.method)}, {view.format_seconds(t.symbolic.seconds)}"


def _numeric_cell(records: list[NumericOutcome]) -> str:
    ran = [r for r in records if r.status != "skipped"]
    if not ran:
        return "—"
    text = f"{view.numeric_tally(ran)}, {sum(r.instances or 0 for r in ran):,} instances"
    bits = [view.number(r.max_error_bits) for r in ran]
    bits = [b for b in bits if b is not None]
    if bits:
        text += f", worst {max(bits):.1f} bits"
    return text


def _link(name: str) -> str:
    return f"[{escape(name)}](#{view.anchor(name)})"


# -- one section per theorem -------------------------------------------------------------------


def _theorem_sections(report: Report, figures: Figures) -> str:
    fixes = view.corrections(report)
    return "\n\n".join(_theorem_section(t, fixes.get(t.name, []), figures)
                       for t in report.theorems)


def _theorem_section(t: TheoremResult, fixes: list[TheoremResult], figures: Figures) -> str:
    parts = [
        f"### {escape(t.name)}",
        _facts(t),
        _statement(t),
        _assumptions(t),
        f"> {escape(t.note)}" if t.note else "",
        _evidence_table(t),
        _counterexamples(t),
        _links(t, fixes),
        _temperature_pointer(t, figures),
        f"Reproduce: {code(view.reproduce_command(t))}",
    ]
    return "\n\n".join(p for p in parts if p)


def _facts(t: TheoremResult) -> str:
    expected = "expected to hold" if t.expect == "holds" else "expected to be refuted"
    lines = [f"**Status:** {_status(t)} ({escape(expected)})  ",
             f"**Source:** {escape(t.source or '—')}  "]
    if t.symbolic is not None:
        lines.append(f"**Proof:** {escape(t.symbolic.method)} "
                     f"({view.format_seconds(t.symbolic.seconds)})")
    return "\n".join(lines).rstrip()


def _statement(t: TheoremResult) -> str:
    if not t.statement_latex:
        return ""
    lines = [display_math(t.statement_latex)]
    if t.definitions_latex:
        lines += ["", "where " + ", ".join(math(d) for d in t.definitions_latex)]
    return "\n".join(lines)


def _assumptions(t: TheoremResult) -> str:
    if not t.assumptions:
        return ""
    items = [f"{math(a.get('latex') or a.get('name', ''))}: {escape(a.get('domain', ''))}"
             for a in t.assumptions]
    return "**Assumptions:** " + "; ".join(items) + "."


def _evidence_table(t: TheoremResult) -> str:
    records = view.evidence(t)
    if not records:
        return ""
    lines = ["**Numeric evidence**", "",
             "| backend | dtype | device | mode | result | instances | worst ULPs | worst bits "
             "| time |", "|---|---|---|---|---|---:|---:|---:|---:|"]
    for r in records:
        result = escape(r.status) if r.status == "passed" else f"**{escape(r.status)}**"
        cells = [escape(r.backend), escape(r.dtype), escape(r.device), escape(r.mode), result,
                 f"{r.instances or 0:,}", view.format_ulps(r.max_error_ulps),
                 view.format_bits(r.max_error_bits), view.format_seconds(r.seconds)]
        lines.append("| " + " | ".join(cells) + " |")
    ground_truth = view.ground_truth_sentence(t)
    if ground_truth:
        lines += ["", escape(ground_truth)]
    reasons = view.explained(records)
    if reasons:
        lines.append("")
        lines += [f"- {escape(view.configuration(r))} ({escape(r.status)}): {escape(r.reason)}"
                  for r in reasons]
    return "\n".join(lines)


def _counterexamples(t: TheoremResult) -> str:
    blocks = []
    for where, values, replay in view.shown_counterexamples(t):
        blocks += [f"**Counterexample** ({escape(where)}):", _fenced(_as_text(values))]
        if replay:
            blocks += ["Replay:", _fenced(replay, info="sh")]
    return "\n\n".join(blocks)


def _links(t: TheoremResult, fixes: list[TheoremResult]) -> str:
    lines = [f"**Corrected by** {_link(f.name)}: {escape(view.status_phrase(f))}." for f in fixes]
    if t.corrects:
        lines.append(f"**Corrects** {_link(t.corrects)}.")
    return "  \n".join(lines)


def _temperature_pointer(t: TheoremResult, figures: Figures) -> str:
    if not (figures.temperature and view.is_temperature_theorem(t)):
        return ""
    return "How the weights move with temperature: see [Figures](#figures)."


def _errors(report: Report) -> str:
    if not report.errors:
        return ""
    lines = ["## Errors"]
    for e in report.errors:
        title = escape(e.path) + (f" ({escape(e.theorem)})" if e.theorem else "")
        lines += ["", f"- {title}", "", _fenced(e.message, indent="  ")]
    return "\n".join(lines)


def _as_text(value) -> str:
    """One line per top-level key, each value compact, so arrays stay readable."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return json.dumps(value, default=str)
    return "\n".join(f"{key}: {json.dumps(item, default=str)}" for key, item in value.items())


def _fenced(text: str, info: str = "", indent: str = "") -> str:
    """A fenced block long enough that no backtick run inside the text can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(indent + line for line in text.splitlines())
    return f"{indent}{fence}{info}\n{body}\n{indent}{fence}"
