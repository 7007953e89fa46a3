"""The Markdown summary (``reports/summary.md``), written for GitHub: math in ``$…$``.

Every piece of user text (names, sources, notes, messages) goes through ``escape``; LaTeX goes
through ``math`` and nowhere else.
"""

from __future__ import annotations

import json
import re

from ._results import STATUSES, NumericOutcome, Report, TheoremResult, is_stability_failure

# Characters that GitHub Markdown could read as syntax inside a line: emphasis, code, links,
# HTML, table cells, strikethrough, math and entities. Line-start syntax (#, -, +) cannot arise
# because user text never begins a line here.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$&])")

_STATUS_WORDS = {
    "proved": "proved (all sizes)",
    "proved-bounded": "proved for small sizes",
    "checked": "checked numerically",
    "unchecked": "not checked",
    "refuted": "refuted",
    "failed": "FAILED",
    "error": "ERROR",
}


def escape(text) -> str:
    """``text`` as literal Markdown on one line (safe in a table cell)."""
    flat = " ".join(str(text).split())
    return _SPECIAL.sub(r"\\\1", flat)


def math(latex: str) -> str:
    """Inline math for GitHub; ``$`$…$`$`` keeps ``_`` and ``*`` in the formula from Markdown."""
    flat = " ".join(latex.split())
    return f"$`{flat}`$" if flat else ""


def render(report: Report) -> str:
    sections = [
        _header(report),
        _counts(report),
        _table(report.theorems),
        _statements(report.theorems),
        _refuted(report.theorems),
        _errors(report),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def _header(report: Report) -> str:
    env = report.environment
    versions = ", ".join(f"{name} {env.get(name) or '—'}" for name in
                         ("python", "sympy", "numpy", "jax", "mlx"))
    devices = ", ".join(env.get("devices") or []) or "none"
    lines = [
        "# attnproof results",
        "",
        f"Generated {escape(report.generated)}; {escape(versions)}; devices: {escape(devices)}.",
    ]
    if report.partial:
        lines += ["", "**Partial run:** not every theorem was checked."]
    return "\n".join(lines)


def _counts(report: Report) -> str:
    counts = {s: sum(t.status == s for t in report.theorems) for s in STATUSES}
    rows = [f"| {_STATUS_WORDS[s]} | {n} |" for s, n in counts.items() if n]
    as_expected = sum(t.ok for t in report.theorems)
    lines = ["## Summary", "", "| status | theorems |", "|---|---:|", *rows, "",
             f"{as_expected} of {len(report.theorems)} theorems came out as expected; "
             f"{len(report.errors)} errors."]
    return "\n".join(lines)


def _table(theorems: list[TheoremResult]) -> str:
    if not theorems:
        return ""
    head = ["## Theorems", "",
            "| theorem | source | expected | status | symbolic | numeric |",
            "|---|---|---|---|---|---|"]
    return "\n".join(head + [_row(t) for t in theorems])


def _row(t: TheoremResult) -> str:
    mark = "" if t.ok else " ✗"
    cells = [escape(t.name), escape(t.source), escape(t.expect or "—"),
             _STATUS_WORDS.get(t.status, escape(t.status)) + mark, _symbolic_cell(t),
             _numeric_cell(t.numeric)]
    return "| " + " | ".join(cells) + " |"


def _symbolic_cell(t: TheoremResult) -> str:
    if t.symbolic is None:
        return "—"
    return f"{escape(t.symbolic.method)}, {t.symbolic.seconds:.2f} s"


def _numeric_cell(records: list[NumericOutcome]) -> str:
    ran = [r for r in records if r.status != "skipped"]
    if not ran:
        return "—"
    passed = sum(r.status == "passed" for r in ran)
    instances = sum(r.instances or 0 for r in ran)
    text = f"{passed}/{len(ran)} passed, {instances:,} instances"
    worst = _worst_bits(ran)
    if worst is not None:
        text += f", worst {worst} bits"
    unstable = sum(is_stability_failure(r) for r in ran)
    if unstable:
        text += f", {unstable} low-precision failures"
    return text


def _worst_bits(records: list[NumericOutcome]) -> str | None:
    bits = [r.max_error_bits for r in records if r.max_error_bits is not None]
    if not bits:
        return None
    worst = max(float(b) for b in bits)
    return f"{worst:.1f}"


def _statements(theorems: list[TheoremResult]) -> str:
    described = [t for t in theorems if t.statement_latex]
    if not described:
        return ""
    lines = ["## Statements", ""]
    for t in described:
        lines.append(f"- **{escape(t.name)}**: {math(t.statement_latex)}")
        lines += [f"  - where {math(d)}" for d in t.definitions_latex]
        if t.note:
            lines.append(f"  - {escape(t.note)}")
    return "\n".join(lines)


def _refuted(theorems: list[TheoremResult]) -> str:
    shown = [t for t in theorems if t.status in ("refuted", "failed")]
    if not shown:
        return ""
    corrected_by = {}
    for t in theorems:
        if t.corrects:
            corrected_by.setdefault(t.corrects, []).append(t)
    lines = ["## Refuted claims and counterexamples"]
    for t in shown:
        lines += ["", f"### {escape(t.name)}", "", f"Source: {escape(t.source)}; "
                  f"expected to {'hold' if t.expect == 'holds' else 'be refuted'}."]
        lines += _counterexamples(t)
        for fix in corrected_by.get(t.name, []):
            lines += ["", f"Corrected claim: **{escape(fix.name)}** "
                      f"({_STATUS_WORDS.get(fix.status, escape(fix.status))})."]
    return "\n".join(lines)


def _counterexamples(t: TheoremResult) -> list[str]:
    lines = []
    if t.symbolic is not None and t.symbolic.counterexample:
        lines += ["", "Exact counterexample:", "", _code(_as_text(t.symbolic.counterexample))]
    for r in t.numeric:
        if r.status == "failed" and r.decides_truth:
            lines += ["", f"Numeric counterexample ({escape(_configuration(r))}):", "",
                      _code(_as_text(r.counterexample))]
            if r.replay:
                lines += ["", "Replay:", "", _code(r.replay)]
    return lines


def _configuration(r: NumericOutcome) -> str:
    return f"{r.backend} {r.dtype} {r.device} {r.mode}"


def _errors(report: Report) -> str:
    if not report.errors:
        return ""
    lines = ["## Errors"]
    for e in report.errors:
        title = escape(e.path) + (f" ({escape(e.theorem)})" if e.theorem else "")
        lines += ["", f"- {title}", "", _code(e.message, indent="  ")]
    return "\n".join(lines)


def _as_text(value) -> str:
    """One line per top-level key, each value compact, so arrays stay readable."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return json.dumps(value, default=str)
    return "\n".join(f"{key}: {json.dumps(item, default=str)}" for key, item in value.items())


def _code(text: str, indent: str = "") -> str:
    """A fenced block long enough that no backtick run inside the text can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(indent + line for line in text.splitlines())
    return f"{indent}{fence}\n{body}\n{indent}{fence}"
