"""The conformance matrix as Markdown and JSON: kernels x properties x dtypes, then the
conventions each kernel follows, then every failure with its counterexample and replay.

Each result is a :class:`attnproof.kernels.Conformance` (not imported: it renders itself
through this module)."""

from __future__ import annotations

import json
from pathlib import Path

from ._properties import by_name
from ._run import CONVENTION_WORDS, LIMIT

MARKS = {"conforms": "✅", "fails": "❌", "raised": "💥", "layout": "🔀", "declaration": "📝",
         "not decisive": "❔", "n/a": "—", "skipped": "⏭"}
LEGEND = (f"✅ conforms: the kernel's worst error is at most {LIMIT:g}× the error of a plain "
          "reference at its declared precision (plus a few ulps), shown as that ratio for the "
          "worst case · ❌ fails, shown as the ratio of the counterexample below · 💥 the kernel "
          "raised · 🔀 wrong shape or axis order · 📝 the kernel contradicts its declaration "
          "(e.g. its head sharing) · ❔ not decisive "
          "· — does not apply · ⏭ framework not installed. Kernels are *checked*, never proved.")


def to_json(results: list) -> str:
    return json.dumps({"kernels": [r.to_json() for r in results]}, indent=1, default=str)


def write(results: list, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "conformance.md", out / "conformance.json"]
    for path, text in zip(paths, (to_markdown(results), to_json(results)), strict=True):
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    return paths


def to_markdown(results: list) -> str:
    lines = ["# Kernel conformance", "", LEGEND, ""]
    for result in results:
        lines += _kernel_section(result)
    return "\n".join(lines) + "\n"


def _kernel_section(result) -> list[str]:
    dtypes = list(dict.fromkeys(c.dtype for c in result.cells))
    verdict = "conforms in every checked cell" if result.ok else \
        f"{len(result.failures())} failing cells"
    lines = [f"## `{_escape(result.kernel)}` ({result.framework})", "",
             f"{verdict}; {sum(c.cases for c in result.cells):,} cases in "
             f"{result.seconds:.0f} s. Declared: {_declared(result.declared)}.", "",
             "| property | " + " | ".join(dtypes) + " |",
             "|---|" + "---|" * len(dtypes)]
    for prop in dict.fromkeys(c.property for c in result.cells):
        cells = [_cell(c) for d in dtypes for c in result.cells
                 if c.property == prop and c.dtype == d]
        lines.append(f"| {_escape(by_name()[prop].title)} | " + " | ".join(cells) + " |")
    lines += [""] + _conventions(result) + _failures(result)
    return lines


def _cell(cell) -> str:
    mark = MARKS[cell.status]
    if cell.status in ("conforms", "fails") and cell.ratio is not None:
        ratio = "∞" if cell.ratio == float("inf") else f"{cell.ratio:.2f}×"
        return f"{mark} {ratio}"
    return mark


def _declared(declared: dict) -> str:
    compute = ", ".join(f"{k}→{v}" for k, v in declared["compute"].items())
    return (f"layout {declared['layout']}, mask {declared['mask']}, gradients "
            f"{declared['gradients']}, compute {compute}")


def _conventions(result) -> list[str]:
    seen: dict[tuple, list[str]] = {}
    for cell in result.cells:
        for name, value in cell.conventions.items():
            seen.setdefault((name, value), []).append(cell.dtype)
    if not seen:
        return []
    lines = ["Conventions (reported, not errors):", ""]
    for (name, value), dtypes in seen.items():
        claimed = result.declared.get(name)
        status = "declared" if claimed == value else "**not declared**" if claimed is None \
            else f"**declared {claimed}**"
        where = ", ".join(dict.fromkeys(dtypes))
        lines.append(f"- {name.replace('_', ' ')}: {CONVENTION_WORDS[value]} ({status}; {where})")
    return lines + [""]


def _failures(result) -> list[str]:
    lines = []
    for cell in result.failures():
        example = cell.counterexample or {}
        lines += [f"### {cell.property}, {cell.dtype}: {cell.status}", "",
                  f"Smallest case found: {example.get('sizes')}.", "", "```",
                  example.get("message", ""), "```", ""]
        entries = {k: example[k] for k in ("at", "kernel", "truth") if k in example}
        if entries:
            lines += ["```json", json.dumps(entries), "```", ""]
        lines += ["Replay:", "", "```bash", cell.replay or "", "```", ""]
    return lines


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")
