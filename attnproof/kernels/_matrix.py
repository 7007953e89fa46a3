"""The conformance matrix as Markdown, LaTeX and JSON: kernels x properties x dtypes, then the
conventions each kernel follows, then every failure with its counterexample and replay.

The Markdown and the LaTeX are the report's: the matrix is built in the document model
(``attnproof.report.document``) and written by its Markdown and LaTeX renderers, which do the
escaping (``conformance.tex`` compiles with pdflatex as ``report.tex`` does). Each result is a
:class:`attnproof.kernels.Conformance` (not imported: it renders itself through this module)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from attnproof.numeric import CellStatus
from attnproof.report import document as doc
from attnproof.report import markdown, tex
from attnproof.report.view import format_number

from ._mechanism import words as mechanism_words
from ._precision import FLAG_BITS
from ._precision import words as precision_words
from ._properties import by_name
from ._regimes import REGIMES, TILE_SIZES
from ._regimes import summary as regime_summary
from ._run import CONVENTION_WORDS, LIMIT
from ._schema import ConformanceError
from ._schema import problem as schema_problem
from ._warnings import total as warnings_total


class MatrixCell(Protocol):
    """What the matrix reads of a cell (``_check.Cell``, which imports this module, so it is
    named by what it has)."""

    @property
    def dtype(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def status(self) -> CellStatus: ...
    @property
    def ratio(self) -> float | None: ...
    @property
    def bound_ratio(self) -> float | None: ...
    @property
    def precision(self) -> dict[str, Any] | None: ...
    @property
    def cases(self) -> int: ...
    @property
    def decided(self) -> int: ...
    @property
    def refused(self) -> int: ...
    @property
    def refusal(self) -> str: ...
    @property
    def unchecked(self) -> dict[str, Any]: ...
    @property
    def other_failures(self) -> Sequence[dict[str, Any]]: ...
    @property
    def kernel_warnings(self) -> Sequence[dict[str, Any]]: ...
    @property
    def regimes(self) -> dict[str, Any]: ...
    @property
    def conventions(self) -> dict[str, Any]: ...
    @property
    def counterexample(self) -> dict[str, Any] | None: ...
    @property
    def replay(self) -> str | None: ...
    @property
    def reason(self) -> str: ...
    # last: a member named property shadows the decorator in the lines after it
    @property
    def property(self) -> str: ...


class MatrixResult(Protocol):
    """What the matrix reads of one kernel's result (``_check.Conformance``, named by what it
    has for the same reason)."""

    @property
    def kernel(self) -> str: ...
    @property
    def framework(self) -> str: ...
    @property
    def declared(self) -> dict[str, Any]: ...
    @property
    def cells(self) -> Sequence[MatrixCell]: ...
    @property
    def seconds(self) -> float: ...
    def failures(self) -> Sequence[MatrixCell]: ...
    def to_json(self) -> dict[str, Any]: ...


MARKS = {CellStatus.CONFORMS: "✅", CellStatus.FAILS: "❌", CellStatus.RAISED: "💥",
         CellStatus.LAYOUT: "🔀", CellStatus.DECLARATION: "📝", CellStatus.CRASHED: "💀",
         CellStatus.TIMED_OUT: "⌛", CellStatus.TOO_FEW: "❔",
         CellStatus.NOT_APPLICABLE: "—", CellStatus.SKIPPED: "⏭"}
# cells whose worker stopped on a case: shown with the case it was running, not a shrunk one
STOPPED = {CellStatus.CRASHED, CellStatus.TIMED_OUT}
LEGEND = (f"✅ conforms: the kernel's worst error is at most {LIMIT:g}× the error of a plain "
          "reference at its declared precision (plus a few ulps), shown as that ratio for the "
          "worst case · ❌ fails, shown as the ratio of the counterexample below · 💥 the kernel "
          "raised · 🔀 wrong shape or axis order · 📝 the kernel contradicts its declaration "
          "(e.g. its head sharing) · 💀 the kernel's process died on a case (a segfault, an exit, "
          "the out-of-memory killer) · ⌛ a case ran past the time limit per case, and its "
          "process was killed · ❔ too few decided cases for a verdict "
          "· — does not apply, or the kernel refused every case · ⏭ framework not installed, "
          "device not present, or time budget spent; \"N refused\": cases the kernel refused "
          "(drawn again, never decided). Under each matrix, the cells set aside and why. "
          "B: the output's largest error over the proved error bound of the block-wise "
          "algorithm at the declared precision, any block size (theorems/rounding.py), where "
          "the framework has a rounding model and the scores have no bias or modification; ⚠ "
          "above it. Kernels are checked, never proved.")


PRECISION_NOTE = ("Precision it behaves like (bits of mantissa of a plain evaluation whose "
                  "errors in O match the kernel's, measured against the proved bound of the "
                  f"declared precision; ⚠ more than {FLAG_BITS:g} bits below it):")


REGIMES_NOTE = ("Regimes reached (cases, over every dtype and device, whose rows reached each; "
                "for the key length, how many of its residues modulo each tile size were "
                "drawn):")


def to_json(results: Sequence[MatrixResult]) -> str:
    return json.dumps({"kernels": [r.to_json() for r in results]}, indent=1, default=str)


def write(results: Sequence[MatrixResult], out: Path) -> list[Path]:
    """conformance.md, .tex and .json in ``out``, each atomically. A JSON not of the shape of
    ``conformance.schema.json`` is a bug of the checker: it is written all the same (the run
    is not lost), then raised as a ``ConformanceError`` naming the field."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "conformance.md", out / "conformance.tex", out / "conformance.json"]
    texts = (to_markdown(results), to_latex(results), to_json(results))
    wrong = schema_problem(json.loads(texts[-1]))
    for path, text in zip(paths, texts, strict=True):
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    if wrong is not None:
        raise ConformanceError(f"{paths[-1]} is not of the shape of conformance.schema.json (a "
                               f"bug of the checker; written all the same): {wrong}")
    return paths


def to_markdown(results: Sequence[MatrixResult]) -> str:
    return markdown.text(document(results))


def to_latex(results: Sequence[MatrixResult]) -> str:
    return tex.text(document(results))


def document(results: Sequence[MatrixResult]) -> doc.Document:
    """The matrix in the report's document model: the legend, then a section per kernel."""
    return doc.Document("Kernel conformance", LEGEND, None,
                        tuple(_kernel_section(result) for result in results))


def _kernel_section(result: MatrixResult) -> doc.Section:
    dtypes = list(dict.fromkeys(c.dtype for c in result.cells))
    devices = list(dict.fromkeys(c.device for c in result.cells))
    # a column group per device when several ran: every dtype on the first, then the next
    groups = [(device, dtype) for device in devices for dtype in dtypes]
    verdict = _verdict(result)
    summary = doc.text_line(f"{verdict}; {sum(c.cases for c in result.cells):,} cases in "
                            f"{result.seconds:.0f} s on {', '.join(devices)}"
                            f"{_programs(result)}. Declared: {_declared(result.declared)}.")
    # widths for LaTeX, where a column of each dtype must fit beside the property's
    share = round(max(0.04, (0.68 - 0.025 * len(groups)) / max(len(groups), 1)), 3)
    columns = (doc.Column("property", width=0.24),
               *(doc.Column(dtype if len(devices) == 1 else f"{device} {dtype}", width=share)
                 for device, dtype in groups))
    rows = []
    for prop in dict.fromkeys(c.property for c in result.cells):
        found = {(c.device, c.dtype): c for c in result.cells if c.property == prop}
        cells = [_cell(found[group]) if group in found else "" for group in groups]
        rows.append(tuple(doc.text_line(text) for text in [by_name()[prop].title, *cells]))
    blocks = (doc.Paragraph(summary), doc.Table(columns, tuple(rows)), *_conventions(result),
              *_precision(result), *_set_aside(result), *_warnings_raised(result),
              *_regimes(result))
    return doc.Section(f"{result.kernel} ({result.framework})", blocks,
                       children=tuple(_failure(cell) for cell in result.failures()))


def _programs(result: MatrixResult) -> str:
    """", at 83 shapes, 346 programs compiled (64 s), 0 read from the cache", where counted."""
    programs = result.programs() if hasattr(result, "programs") else {}
    if not programs.get("shapes"):
        return ""
    return (f", at {programs['shapes']} shapes, {programs['compiled']:,} programs compiled "
            f"({programs['compile_seconds']:.0f} s), {programs['loaded']:,} read from the "
            "persistent compilation cache")


def _verdict(result: MatrixResult) -> str:
    """"conforms in every checked cell", "2 failing cells", and a convention found apart."""
    failing = len(result.failures())
    verdict = f"{failing} failing cell{'s' * (failing != 1)}" if failing else \
        "conforms in every checked cell"
    apart = len(_convention_findings(result))
    if apart:
        verdict += f", but {apart} convention{'s' * (apart > 1)} read differently in two " \
                   "dtypes or devices (not ok)"
    return verdict


def _convention_findings(result: MatrixResult) -> list[dict]:
    return result.convention_findings() if hasattr(result, "convention_findings") else []


def _cell(cell: MatrixCell) -> str:
    mark = MARKS[cell.status]
    refused = f" · {cell.refused} refused" if getattr(cell, "refused", 0) else ""
    others = len(getattr(cell, "other_failures", None) or ())
    refused += f" · {others + 1} failures" if others else ""  # each in the sections below
    if cell.status in (CellStatus.CONFORMS, CellStatus.FAILS) and cell.ratio is not None:
        ratio = format_number(cell.ratio, ".2f") + ("×" if math.isfinite(cell.ratio) else "")
        return f"{mark} {ratio}{_bound(cell)}{refused}"
    return mark + refused


def _set_aside(result: MatrixResult) -> tuple[doc.Block, ...]:
    """Every cell not decided as conforming or failing, grouped by why: cases the kernel
    refused, too few decided cases, devices or time it did not have (a reader of the matrix
    sees them counted, not only the JSON)."""
    why: dict[str, list[str]] = {}
    for cell in result.cells:
        refused = getattr(cell, "refused", 0)
        if cell.status in (CellStatus.SKIPPED, CellStatus.TOO_FEW) or refused or (
                cell.status == CellStatus.NOT_APPLICABLE and cell.reason):
            reason = f"cases refused by the kernel: {cell.refusal}" if refused else \
                cell.reason or cell.status
            why.setdefault(reason, []).append(f"{cell.property} {cell.dtype} {cell.device}")
        for name, entry in getattr(cell, "unchecked", {}).items():  # decided, a part not
            why.setdefault(f"{name} not judged: {entry['why']}", []).append(
                f"{cell.property} {cell.dtype} {cell.device} ({entry['cases']} of "
                f"{cell.decided} cases)")
    if not why:
        return ()
    items = [doc.Item(doc.text_line(f"{len(cells)} cell{'s' * (len(cells) > 1)} ("
                                    f"{', '.join(cells[:4])}{', …' if len(cells) > 4 else ''})"
                                    f": {reason}"))
             for reason, cells in why.items()]
    return (doc.Paragraph(doc.text_line("Set aside (not a verdict):")),
            doc.Bullets(tuple(items)))


def _warnings_raised(result: MatrixResult) -> tuple[doc.Block, ...]:
    """The kernel's own warnings, per cell, counted (``_warnings``): kept here, not printed
    while it ran."""
    items = [doc.Item(doc.text_line(
        f"{cell.property} {cell.dtype} {cell.device}: " + "; ".join(
            f"{entry['count']:,} × {entry['category']}: {entry['message']}"
            + (f" ({entry['where']})" if entry["where"] else "")
            for entry in cell.kernel_warnings)))
        for cell in result.cells if getattr(cell, "kernel_warnings", None)]
    if not items:
        return ()
    return (doc.Paragraph(doc.text_line(
        f"Warnings the kernel raised while checked ({warnings_total(result.cells):,}):")),
        doc.Bullets(tuple(items)))


def _bound(cell: MatrixCell) -> str:
    """The proved bound's share, where one applies: "· B 0.03", "· B 4.1 ⚠" above it."""
    ratio = cell.bound_ratio
    if ratio is None:
        return ""
    shown = format_number(ratio, ".2g")
    return f" · B {shown}{' ⚠' if ratio > 1 else ''}"


def _declared(declared: dict) -> str:
    compute = ", ".join(f"{k}→{v}" for k, v in declared["compute"].items())
    for kind, per_dtype in (declared.get("compute_on") or {}).items():
        compute += "".join(f"; on {kind} {k}→{v}" for k, v in per_dtype.items())
    mode = f", run {declared['mode']}" if declared.get("mode") else ""
    return (f"layout {declared['layout']}, mask {declared['mask']}{_input_form(declared)}, "
            f"gradients {declared['gradients']}, compute {compute}{mode}")


def _input_form(declared: dict) -> str:
    """How a packed or paged kernel takes its sequences, where it does."""
    if declared.get("packed"):
        return f", packed by {declared['packed']}"
    if declared.get("paged"):
        sizes = ", ".join(str(n) for n in declared["page_sizes"])
        return (f", paged by {declared['paged']} (pages of {sizes}, cache "
                f"{declared['cache_layout']})")
    return ""


def _conventions(result: MatrixResult) -> tuple[doc.Block, ...]:
    seen: dict[tuple, list[str]] = {}
    for cell in result.cells:
        for name, value in cell.conventions.items():
            seen.setdefault((name, value), []).append(
                cell.dtype if len({c.device for c in result.cells}) == 1
                else f"{cell.device} {cell.dtype}")
    if not seen:
        return ()
    items = []
    for (name, value), dtypes in seen.items():
        claimed = result.declared.get(name)
        status = doc.Text("declared") if claimed == value \
            else doc.Strong("not declared") if claimed is None \
            else doc.Strong(f"declared {claimed}")
        where = ", ".join(dict.fromkeys(dtypes))
        items.append(doc.Item(doc.text_line(
            f"{name.replace('_', ' ')}: {CONVENTION_WORDS[value]} (", status, f"; {where})")))
    return (doc.Paragraph(doc.text_line("Conventions (reported, not errors):")),
            doc.Bullets(tuple(items)), *_conventions_apart(result))


CONVENTIONS_APART_NOTE = ("Conventions read differently in two dtypes or devices (a finding: "
                          "the kernel is not ok, as a declaration states one convention for "
                          "every dtype):")


def _conventions_apart(result: MatrixResult) -> tuple[doc.Block, ...]:
    """Each convention one property read differently in two dtypes or devices."""
    findings = _convention_findings(result)
    if not findings:
        return ()
    items = tuple(doc.Item(doc.text_line(doc.Strong(finding["finding"]),
                                         f" ({', '.join(finding['properties'])})"))
                  for finding in findings)
    return (doc.Paragraph(doc.text_line(CONVENTIONS_APART_NOTE)), doc.Bullets(items))


def _failure(cell: MatrixCell) -> doc.Section:
    precision = () if not getattr(cell, "precision", None) else (doc.Paragraph(
        doc.text_line(f"Precision in this cell: {precision_words(cell.precision)}.")),)
    blocks = _failure_blocks(cell, cell.counterexample or {}, cell.replay, precision)
    others = tuple(doc.Section(f"Another failure: {mechanism_words(other['mechanism'])}",
                               tuple(_failure_blocks(cell, other["counterexample"],
                                                     other["replay"], mechanism=False)))
                   for other in getattr(cell, "other_failures", None) or ())
    return doc.Section(f"{cell.property}, {cell.dtype}, {cell.device}: {cell.status}",
                       (*_truth_from(cell.property), *blocks), children=others)


def _truth_from(prop: str) -> tuple[doc.Block, ...]:
    """Which catalog theorems the property's truth comes from, where it names any beyond the
    masked attention every property's truth is."""
    named = by_name()[prop].theorems if prop in by_name() else ()
    if not named:
        return ()
    return (doc.Paragraph(doc.text_line(
        f"The truth: masked attention (theorems/masking.py) and the catalog's "
        f"{', '.join(named)}.")),)


def _failure_blocks(cell: MatrixCell, example: dict, replay: str | None,
                    before_replay: tuple[doc.Block, ...] = (),
                    mechanism: bool = True) -> list[doc.Block]:
    """One counterexample: its case, its ``mechanism`` (unless its title says it), message,
    the entries that failed, the inputs, ``before_replay`` and the replay command."""
    blocks: list[doc.Block] = [doc.Paragraph(doc.text_line(_case_shown(cell, example)))]
    if mechanism and example.get("mechanism"):
        blocks.append(doc.Paragraph(doc.text_line(
            f"Mechanism: {mechanism_words(example['mechanism'])}.")))
    blocks.append(doc.Listing(example.get("message", cell.reason)))
    entries = {k: example[k] for k in ("at", "kernel", "truth") if k in example}
    if entries:
        blocks.append(doc.Listing(json.dumps(entries), "json"))
    if example.get("inputs"):  # the q, k, v and keep-mask the case gave the kernel
        blocks += [doc.Paragraph(doc.text_line("Inputs (rounded to the dtype):")),
                   doc.Listing(json.dumps(example["inputs"]), "json")]
    blocks += before_replay
    if replay:  # a worker that stopped before any case has none to replay
        blocks += [doc.Paragraph(doc.text_line("Replay:")), doc.Command(replay)]
    return blocks


def _case_shown(cell: MatrixCell, example: dict) -> str:
    """A failure's case: the shrunk one, or the one its worker was running when it stopped (a
    crash or a kill is never shrunk: each try would cost a worker)."""
    if cell.status not in STOPPED:
        return f"Smallest case found: {example.get('sizes')}."
    if not example:
        return "Stopped before any case ran."
    return f"The case it was running: {example['sizes']}."


def _precision(result: MatrixResult) -> tuple[doc.Block, ...]:
    """Per device and dtype, the precision the kernel behaves like over all its cells, and
    the cells flagged as behaving like less than declared (``_precision.FLAG_BITS``)."""
    pooled = result.precision() if hasattr(result, "precision") else {}
    left_out = _left_out(result)
    if not pooled:
        return left_out
    items = []
    for (device, dtype), estimate in pooled.items():
        low = [f"{c.property} {c.precision['bits']:.0f}" for c in result.cells
               if (c.device, c.dtype) == (device, dtype) and c.precision
               and c.precision["less_precise"]]
        where = dtype if len({d for d, _ in pooled}) == 1 else f"{device} {dtype}"
        cells = f"; less precise in {', '.join(low)}" if low and not estimate[
            "less_precise"] else ""
        mark = " ⚠" if estimate["less_precise"] else ""
        items.append(doc.Item(doc.text_line(
            f"{where}: {precision_words(estimate)}{mark} ({estimate['rows']:,} rows){cells}")))
    return (doc.Paragraph(doc.text_line(PRECISION_NOTE)), doc.Bullets(tuple(items)), *left_out)


LEFT_OUT_NOTE = ("Left out of the precision estimates (failures that are not numerical say "
                 "nothing of the precision a kernel computes in):")


def _left_out(result: MatrixResult) -> tuple[doc.Block, ...]:
    """The cells whose failures are not numerical, each with why (``precision_left_out``)."""
    cells = result.precision_left_out() if hasattr(result, "precision_left_out") else []
    if not cells:
        return ()
    one_device = len({c.device for c in result.cells}) == 1
    items = tuple(doc.Item(doc.text_line(
        f"{c['property']} {c['dtype']}{'' if one_device else ' ' + c['device']}: {c['why']}"))
        for c in cells)
    return (doc.Paragraph(doc.text_line(LEFT_OUT_NOTE)), doc.Bullets(items))


def _regimes(result: MatrixResult) -> tuple[doc.Block, ...]:
    """Per property, over its dtypes and devices: how many cases reached each regime, and how
    many of the residues of n_k modulo each tile size were drawn."""
    rows = []
    for prop in dict.fromkeys(c.property for c in result.cells):
        cells = [c for c in result.cells if c.property == prop and getattr(c, "regimes", None)]
        if not cells:
            continue
        reached = regime_summary(cells)
        counts = [str(reached["cases"][name]) for name in REGIMES]
        residues = [f"{reached['residues'][str(t)]}/{t}" for t in TILE_SIZES]
        rows.append(tuple(doc.text_line(text) for text in (prop, *counts, *residues)))
    if not rows:
        return ()
    share = round(0.7 / (len(REGIMES) + len(TILE_SIZES)), 3)
    columns = (doc.Column("property", width=0.2),
               *(doc.Column(name, numeric=True, width=share) for name in REGIMES),
               *(doc.Column(f"n_k mod {t}", numeric=True, width=share) for t in TILE_SIZES))
    return (doc.Paragraph(doc.text_line(REGIMES_NOTE)), doc.Table(columns, tuple(rows)))
