"""What a report says, decided once: its sections in order, their captions, tables and text.

``build`` turns a ``Report`` into a ``Document``, a small tree of blocks (paragraphs, tables,
listings, commands, figures) holding inline pieces (text, math, links, statuses). The Markdown,
LaTeX and terminal renderers only map these node types to their target, each with its own
escaping, so the three cannot disagree about what is in a report or in which order.

The theorems' sections are grouped by topic (``view.topics``: a section per theorem module of
the catalog, one for a user's own files), each topic a section with a ``page`` of its own: the
Markdown report set writes it as a page of its own (``topics/<module>.md``) beside the index,
LaTeX keeps one document with a part per topic. A theorem's section keeps its anchor, its name,
wherever its page is.

Every string in the tree is raw: escaping belongs to the renderers. ``Math`` nodes hold only
formulas that ``safe_math`` accepts; any other formula becomes ``Code`` here, once for all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnproof.numeric import NumericRecord

from . import coverage, view
from .figures import Figures
from .results import Report, TheoremResult
from .safe_math import is_safe

# -- inline pieces -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Alert:
    """Text a reader must not miss (a check that did not pass)."""

    text: str


@dataclass(frozen=True)
class Emph:
    text: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Math:
    """A formula that ``safe_math.is_safe`` accepted."""

    latex: str


@dataclass(frozen=True)
class Link:
    """A theorem's name, linked to its section."""

    name: str


@dataclass(frozen=True)
class Status:
    """A status word or phrase, marked by its status (an emoji, a colour); strong when the
    outcome is not the one the theorem declares."""

    status: str
    text: str
    strong: bool = False


@dataclass(frozen=True)
class FigureRef:
    key: str


@dataclass(frozen=True)
class PageLink:
    """A link to a section that has a page of its own (``Section.page``), such as a topic."""

    page: str
    text: str


Inline = Text | Strong | Alert | Emph | Code | Math | Link | Status | FigureRef | PageLink
Line = tuple[Inline, ...]

# -- blocks --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paragraph:
    line: Line


@dataclass(frozen=True)
class Lines:
    """Short lines kept apart, in one paragraph."""

    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Fields:
    """Labelled facts: (label, value) pairs."""

    items: tuple[tuple[str, Line], ...]


@dataclass(frozen=True)
class Quote:
    line: Line


@dataclass(frozen=True)
class Statement:
    """A claim in display math, with the definitions it uses."""

    claim: Inline
    definitions: tuple[Inline, ...] = ()


@dataclass(frozen=True)
class Column:
    title: str
    numeric: bool = False  # right-aligned
    width: float | None = None  # share of the line, for columns that wrap


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[tuple[Line, ...], ...]
    pages: bool = False  # a list of theorems: the first cell's link gets a page number


@dataclass(frozen=True)
class Item:
    line: Line
    body: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Bullets:
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Listing:
    text: str
    language: str = ""


@dataclass(frozen=True)
class Command:
    """A shell command a reader copies and runs: every target shows it so that a copy gives
    the exact text (LaTeX breaks it only between words, with a shell line continuation)."""

    text: str


@dataclass(frozen=True)
class Figure:
    key: str
    stem: str
    caption: str
    alt: str


Block = (Paragraph | Lines | Fields | Quote | Statement | Table | Bullets | Listing | Command
         | Figure)

# The page that holds every section without a page of its own (Markdown: ``summary.md``).
INDEX = "summary"


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    theorem: bool = False  # a theorem's own section: numbered, its title a name
    children: tuple[Section, ...] = ()
    # a page of its own in a report of several pages, as a path without extension relative to
    # the report directory ("topics/masking"); None: on its parent's page, or the index
    page: str | None = None
    topic: bool = False  # a topic: the sections of the theorems of one module or of a user


@dataclass(frozen=True)
class Document:
    title: str
    byline: str
    warning: Line | None
    sections: tuple[Section, ...] = field(default_factory=tuple)


def math_or_code(latex: str) -> Inline:
    """A formula as math when the grammar accepts it, else as its literal text."""
    return Math(latex) if is_safe(latex) else Code(latex)


def text_line(*parts: Inline | str) -> Line:
    return tuple(Text(p) if isinstance(p, str) else p for p in parts)


def joined(pieces: list[Line], separator: str) -> Line:
    out: list[Inline] = []
    for n, piece in enumerate(pieces):
        out += [Text(separator)] * (n > 0) + list(piece)
    return tuple(out)


# -- the report ----------------------------------------------------------------------------------


TOPICS = "topics"  # the folder of the topic pages
COVERAGE = "coverage"  # the page of the documents' coverage


def build(report: Report, figures: Figures | None = None) -> Document:
    figures = figures or Figures()
    topics = view.topics(report)
    sections = [_summary(report), _backend_findings(report), _errata(report),
                _figures(report, figures),
                _theorems(report, topics), *_topics(report, topics, figures),
                _coverage(report), _errors(report)]
    return Document("attnproof report", _byline(report), _warning(report),
                    tuple(s for s in sections if s is not None))


def topic_page(topic: view.Topic) -> str:
    return f"{TOPICS}/{topic.key}"


def _byline(report: Report) -> str:
    by = report.run.get("by", "attnproof")
    profile = report.run.get("profile")
    made = f"by {by}" + (f", profile {profile}" if profile else "")
    return f"Generated {report.generated} {made}."


def _warning(report: Report) -> Line | None:
    """What a reader must see first: theorems whose routes disagree, and a partial report."""
    parts: list[Line] = []
    found = view.inconsistent(report)
    if found:  # two routes disagree: always a bug somewhere, said before anything else
        names = ", ".join(t.name for t in found)
        parts.append(text_line(Strong(f"{len(found)} inconsistent theorem(s):"),
                               f" {names}: two routes disagree, which always means a bug in "
                               "the checker, the compiler or the implementation."))
    if report.partial:
        reason = report.partial_reason or "not every theorem was checked"
        parts.append(text_line(Strong("Partial report:"), f" {reason}."))
    return joined(parts, " ") if parts else None


def _summary(report: Report) -> Section:
    totals = view.totals(report)
    counts = Table((Column("status"), Column("meaning"), Column("theorems", numeric=True)),
                   tuple((text_line(Status(s, s)),
                          text_line(view.STATUS_MEANINGS.get(s, "")), text_line(str(n)))
                         for s, n in view.status_counts(report)))
    sentence = text_line(
        Strong(f"{totals.theorems} theorems"),
        f", {totals.as_expected} as expected; {view.plural(view.error_count(report), 'error')}. "
        f"{totals.instances:,} numeric instances ({totals.undecided:,} more drawn where the "
        "statement's value is undefined: undecided); proofs "
        f"{view.format_seconds(totals.proof_seconds)}, numeric checks "
        f"{view.format_seconds(totals.numeric_seconds)}.")
    env = view.environment_rows(report)
    environment = Table(tuple(Column(name) for name, _ in env),
                        (tuple(text_line(value) for _, value in env),))
    return Section("Summary", (counts, Paragraph(sentence), environment))


def _backend_findings(report: Report) -> Section | None:
    """Backends that broke the rounding model declared for them: the backend's fault, named
    apart from the theorems, whose verdicts stand."""
    found = view.backend_findings(report)
    if not found:
        return None
    columns = (Column("backend", width=0.14), Column("what it did", width=0.5),
               Column("theorems whose records saw it", width=0.3))
    rows = tuple((text_line(f"{f.backend} {f.dtype}"), text_line(f.what),
                  text_line(_some_names(f.theorems))) for f in found)
    intro = text_line("Where a backend broke the rounding model declared for it, the instances "
                      "it touched are outside the model, as an overflow is: set aside, counted "
                      "in each record, and no theorem's verdict rests on them.")
    return Section("Backend findings", (Paragraph(intro), Table(columns, rows)))


def _some_names(names: tuple[str, ...], most: int = 6) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _errata(report: Report) -> Section | None:
    entries = view.errata(report)
    if not entries:
        return None
    columns = (Column("claim", width=0.2), Column("source", width=0.22),
               Column("counterexample", width=0.3), Column("correction", width=0.2))
    rows = tuple(_erratum(claim, fixes) for claim, fixes in entries)
    intro = text_line("Claims of the documents found false, with their smallest counterexample "
                      "and the corrected claim.")
    return Section("Errata", (Paragraph(intro), Table(columns, rows)))


def _erratum(claim: TheoremResult, fixes: list[TheoremResult]) -> tuple[Line, ...]:
    found = view.smallest_counterexample(claim)
    values = view.counterexample_summary(found[1], 160) if found else "—"
    fixed = [text_line(Link(f.name), f" ({view.status_phrase(f)})") for f in fixes]
    return (text_line(Link(claim.name)), text_line(claim.source), text_line(values),
            joined(fixed, "; ") or text_line("none stated"))


ERROR_BITS_CAPTION = ("Worst error in bits of each theorem for each backend and dtype "
                      "(lighter is more accurate; blank: not run; outlined in blue: a check "
                      "failed; dashed: not decisive).")
TEMPERATURE_CAPTION = ("Softmax weights and entropy of the scores S = [2, 1, 0] against the "
                       "temperature T, with the values printed in the tutorial's §11.2 table.")


def _figures(report: Report, figures: Figures) -> Section | None:
    if not report.theorems:
        return None
    blocks: list[Block] = []
    pages = len(figures.error_bits)
    for number, stem in enumerate(figures.error_bits, 1):
        part = f"page {number} of {pages}" if pages > 1 else ""
        blocks.append(Figure("error-bits" if number == 1 else f"error-bits-{number}", stem,
                             ERROR_BITS_CAPTION + (f" {part.capitalize()}." if part else ""),
                             "worst error in bits per theorem and configuration"
                             + (f", {part}" if part else "")))
    if figures.temperature:
        blocks.append(Figure("temperature", figures.temperature, TEMPERATURE_CAPTION,
                             "weights and entropy against temperature"))
    if figures.missing:
        blocks.append(Paragraph((Emph(figures.missing),)))
    return Section("Figures", tuple(blocks)) if blocks else None


def _theorems(report: Report, topics: list[view.Topic]) -> Section | None:
    """The overview: the topics, then a row per theorem linked to its section."""
    if not report.theorems:
        return None
    columns = (Column("theorem", width=0.22), Column("status", width=0.15),
               Column("proof", width=0.24), Column("numeric evidence", width=0.2))
    rows = tuple((text_line(Link(t.name)), (_status(t),), _proof_cell(t),
                  _numeric_cell(t.numeric)) for t in report.theorems)
    listed: list[Line] = [(PageLink(topic_page(topic), topic.name),
               Text(f" ({len(topic.theorems)})")) for topic in topics]
    by_topic = Paragraph(text_line(Strong("By topic:"), " ") + joined(listed, ", "))
    return Section("Theorems", (by_topic, Table(columns, rows, pages=True)))


def _topics(report: Report, topics: list[view.Topic], figures: Figures) -> list[Section]:
    fixes = view.corrections(report)
    return [Section(topic.title, _topic_intro(topic),
                    children=tuple(theorem_section(t, fixes.get(t.name, []), figures,
                                                   catalog=topic.catalog)
                                   for t in topic.theorems),
                    page=topic_page(topic), topic=True)
            for topic in topics]


def _topic_intro(topic: view.Topic) -> tuple[Block, ...]:
    count = view.plural(len(topic.theorems), "theorem")
    if topic.catalog:
        return (Paragraph(text_line(f"The {count} of the catalog's module ",
                                    Code(f"theorems/{topic.name}.py"), ".")),)
    intro = Paragraph(text_line(f"The {count} of your own files (", Code("--theorems"),
                                "), by file:"))
    return (intro, Bullets(tuple(
        Item((Code(path), Text(": ")) + joined([text_line(Link(t.name)) for t in members], ", "))
        for path, members in topic.files)))


def _status(t: TheoremResult) -> Status:
    return Status(t.status, view.status_phrase(t), strong=not t.ok)


def _proof_cell(t: TheoremResult) -> Line:
    if t.symbolic is None:
        return text_line("—")
    return text_line(f"{t.symbolic.method}, {view.format_seconds(t.symbolic.seconds)}")


def _numeric_cell(records: list[NumericRecord]) -> Line:
    ran = [r for r in records if r.status != "skipped"]
    if not ran:
        return text_line("—")
    text = f"{view.numeric_tally(ran)}, {sum(r.instances or 0 for r in ran):,} instances"
    undecided = view.undecided_total(ran)
    text += f" ({undecided:,} undecided)" if undecided else ""
    bits = [b for b in (view.number(r.max_error_bits) for r in ran) if b is not None]
    if bits:
        text += f", worst {max(bits):.1f} bits"
    return text_line(text)


COVERAGE_INTRO = ("Where each claim of the four documents went: the theorems that state it, "
                  "with their status; the claims still waiting for a claim kind; and every "
                  "numbered equation of the tutorial, mapped to its theorems or marked as "
                  "notation or a definition.")


def _coverage(report: Report) -> Section | None:
    """The documents' coverage, for a report that holds theorems of the catalog."""
    stated = view.document_theorems(report)
    if not stated:
        return None
    by_name = {t.name: t for t in stated}
    places = {t.name: t.source for t in stated if t.source.startswith(view.TUTORIAL_TITLE)}
    return Section("Coverage of the documents", (
        Paragraph(text_line(COVERAGE_INTRO)),
        _places_table(stated),
        _equations_table(coverage.equation_rows(places), by_name),
        *_pending_blocks(coverage.pending_claims()),
    ), page=COVERAGE)


def _stated_as(names: Iterable[str], by_name: dict[str, TheoremResult]) -> Line:
    return joined([text_line(Link(n), " ", _status(by_name[n])) for n in names], "; ")


def _places_table(stated: list[TheoremResult]) -> Table:
    places: dict[str, list[str]] = {}
    for t in sorted(stated, key=lambda t: coverage.natural_order(t.source)):
        places.setdefault(t.source, []).append(t.name)
    by_name = {t.name: t for t in stated}
    rows = tuple((text_line(place), _stated_as(names, by_name)) for place, names in places.items())
    return Table((Column("document, section, equations or lines", width=0.45),
                  Column("theorems and status", width=0.45)), rows)


def _equations_table(rows: Iterable[coverage.EquationRow],
                     by_name: dict[str, TheoremResult]) -> Table:
    def otherwise(row: coverage.EquationRow) -> str:
        return "; ".join(f"pending: {k}" for k in row.pending) or row.marked

    cells = tuple((text_line(f"({row.number})"), _stated_as(row.theorems, by_name),
                   text_line(otherwise(row))) for row in rows)
    return Table((Column("tutorial equation"), Column("theorems and status", width=0.45),
                  Column("otherwise", width=0.35)), cells)


def _pending_blocks(pending: Sequence[dict[str, Any]]) -> tuple[Block, ...]:
    if not pending:
        return ()
    rows = tuple((text_line(coverage.pending_place(entry)), text_line(entry["claim"]),
                  text_line(entry["kind"]), text_line(entry["verdict"])) for entry in pending)
    intro = text_line(f"{len(pending)} claims of the documents wait for a claim kind "
                      "(as written: known true, known false, or open).")
    return (Paragraph(intro), Table((Column("place", width=0.25), Column("claim", width=0.45),
                                     Column("kind", width=0.12), Column("as written")), rows))


def _errors(report: Report) -> Section | None:
    if not report.errors:
        return None
    items = tuple(Item(text_line(e.path + (f" ({e.theorem})" if e.theorem else "")),
                       (Listing(e.message),)) for e in report.errors)
    return Section("Errors", (Bullets(items),))


# -- one theorem -----------------------------------------------------------------------------


def theorem_section(t: TheoremResult, fixes: list[TheoremResult],
                    figures: Figures | None = None, catalog: bool | None = None) -> Section:
    """Everything a report says about one theorem (``attnproof show`` prints this too);
    ``catalog``: whether it is a theorem of the built-in catalog (None: decided from its file,
    ``view.in_catalog``)."""
    if catalog is None:
        catalog = view.in_catalog(t)
    parts = [
        _facts(t),
        _statement(t),
        _assumptions(t),
        Quote(text_line(t.note)) if t.note else None,
        *_evidence(t),
        *_counterexamples(t, catalog),
        _links(t, fixes),
        _temperature_pointer(t, figures or Figures(), catalog),
        Paragraph(text_line("Reproduce:")),
        Command(view.reproduce_command(t, catalog)),
    ]
    return Section(t.name, tuple(p for p in parts if p is not None), theorem=True)


def _facts(t: TheoremResult) -> Fields:
    expected = "expected to hold" if t.expect == "holds" else "expected to be refuted"
    # a failed status already says what was expected of the claim
    said = "" if t.status == "failed" else f" ({expected})"
    items = [("Status", text_line(_status(t), said)), ("Source", text_line(t.source or "—"))]
    if t.status == "failed" and t.expect == "holds":
        items.append(("Declared", text_line(
            'to hold; a claim known to be false is declared with expect="refuted", and the '
            f'corrected claim beside it with corrects="{t.name}"')))
    if t.symbolic is not None:
        items.append(("Proof", text_line(
            f"{t.symbolic.method} ({view.format_seconds(t.symbolic.seconds)})")))
    return Fields(tuple(items))


def _statement(t: TheoremResult) -> Statement | None:
    if not t.statement_latex:
        return None
    return Statement(math_or_code(t.statement_latex),
                     tuple(math_or_code(d) for d in t.definitions_latex))


def _assumptions(t: TheoremResult) -> Paragraph | None:
    if not t.assumptions:
        return None
    items = [_assumption(a) for a in t.assumptions]
    return Paragraph(text_line(Strong("Assumptions:"), " ") + joined(items, "; ") +
                     text_line("."))


def _assumption(entry: dict) -> Line:
    symbol = entry.get("latex") or entry.get("name", "")
    return (math_or_code(symbol),) * bool(symbol) + text_line(f": {entry.get('domain', '')}")


EVIDENCE_COLUMNS = (Column("backend"), Column("dtype"), Column("device"), Column("mode"),
                    Column("result"), Column("instances", numeric=True),
                    Column("undecided", numeric=True),
                    Column("worst ULPs", numeric=True), Column("worst bits", numeric=True),
                    Column("time", numeric=True))


def _evidence(t: TheoremResult) -> list[Block]:
    records = view.evidence(t)
    if not records:
        return []
    blocks: list[Block] = [Paragraph((Strong("Numeric evidence"),)),
                           Table(EVIDENCE_COLUMNS, tuple(_evidence_row(r) for r in records))]
    ground_truth = view.ground_truth_sentence(t)
    if ground_truth:
        blocks.append(Paragraph(text_line(ground_truth)))
    differences = view.device_differences(records)
    if differences:
        blocks += [Paragraph(text_line("Results that differ by where they ran:")),
                   Bullets(tuple(Item(text_line(line)) for line in differences))]
    reasons = view.explained(records)
    if reasons:
        blocks.append(Bullets(tuple(
            Item(text_line(f"{view.configuration(r)} ({r.status}): {r.reason}"))
            for r in reasons)))
    return blocks


def _evidence_row(r: NumericRecord) -> tuple[Line, ...]:
    result = Text(r.status) if r.status == "passed" else Alert(r.status)
    cells = [r.backend, r.dtype, r.device, r.mode, result, f"{r.instances or 0:,}",
             f"{r.undecided or 0:,}",
             view.format_ulps(r.max_error_ulps), view.format_bits(r.max_error_bits),
             view.format_seconds(r.seconds)]
    return tuple(text_line(c) for c in cells)


def _counterexamples(t: TheoremResult, catalog: bool) -> list[Block]:
    blocks: list[Block] = []
    for where, values, replay in view.shown_counterexamples(t):
        blocks += [Paragraph(text_line(Strong("Counterexample"), f" ({where}):")),
                   Listing(view.as_lines(values))]
        if replay:  # the counterexample above is shrunk; the replay runs the row as drawn
            blocks += [Paragraph(text_line("Replay (rebuilds the batch from its seed and "
                                           "evaluates the failing row as drawn, before it was "
                                           "shrunk toward the round values above):")),
                       Command(view.portable_command(replay, catalog))]
    return blocks


def _links(t: TheoremResult, fixes: list[TheoremResult]) -> Lines | None:
    lines = [text_line(Strong("Corrected by"), " ", Link(f.name), f": {view.status_phrase(f)}.")
             for f in fixes]
    if t.corrects:
        lines.append(text_line(Strong("Corrects"), " ", Link(t.corrects), "."))
    return Lines(tuple(lines)) if lines else None


def _temperature_pointer(t: TheoremResult, figures: Figures, catalog: bool) -> Paragraph | None:
    if not (figures.temperature and view.shows_temperature_figure(t, catalog)):
        return None
    return Paragraph(text_line("How the weights move with temperature: see ",
                               FigureRef("temperature"), "."))


# -- text that every target can show -------------------------------------------------------------

# Unicode format characters that reorder or hide text (bidirectional overrides and isolates).
_REORDERING = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def visible(text: object, keep_newlines: bool = False) -> str:
    """``text`` with control characters (C0, DEL, C1), lone surrogates and reordering marks
    shown as ``\\xNN`` or ``\\uNNNN``, so no terminal, TeX or Markdown reader acts on them.
    Tabs stay; newlines stay when ``keep_newlines``, else they become spaces."""
    text = str(text).replace("\r\n", "\n")
    return "".join(_visible_char(c, keep_newlines) for c in text)


def _visible_char(char: str, keep_newlines: bool) -> str:
    if char == "\t" or (char == "\n" and keep_newlines):
        return char
    if char == "\n":
        return " "
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        return f"\\x{code:02x}"
    if 0xD800 <= code < 0xE000 or char in _REORDERING:
        return f"\\u{code:04x}"
    return char


def one_line(text: object) -> str:
    """``text`` visible and on one line, its whitespace runs (line breaks too) one space."""
    return " ".join(visible(text).split())


def spaced(text: str, escape: Callable[[str], str]) -> str:
    """``escape(text)`` keeping one space at either edge, where the neighbouring pieces of a
    line need it (every target's escape trims)."""
    before = " " if text[:1].isspace() else ""
    after = " " if text[-1:].isspace() else ""
    core = escape(text)
    return before + core + after if core else before or after
