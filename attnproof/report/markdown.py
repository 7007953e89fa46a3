"""The Markdown report (``summary.md``), written for GitHub, rendered from ``document``.

Math is ``$`…`$`` inline and a ```` ```math ```` block for display: both are GitHub's forms
that keep ``_`` and ``*`` inside a formula away from the Markdown parser. Every piece of text
goes through ``escape`` (one line, every inline and line-start syntax character escaped, so no
HTML, link or table cell can be opened by it); formulas reach ``math`` only after
``safe_math`` accepted them; commands and values go into code spans or fenced blocks.
"""

from __future__ import annotations

import re

from . import document as doc
from . import view
from .figures import Figures
from .results import Report

# Characters that GitHub Markdown could read as syntax inside a line: emphasis, code, links,
# HTML, table cells, strikethrough, math and entities.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$&])")
# What would start a block (a heading, a list item, a rule) where text begins a line.
_LINE_START = re.compile(r"^(?:[#+-](?=[\s#+-]|$)|\d+[.)](?=\s|$))")

_MARKS = {"proved": "✅", "proved-bounded": "✅", "checked": "🔢", "unchecked": "⬜",
          "unstable": "🌡️", "refuted": "❌", "failed": "🚨", "inconsistent": "‼️",
          "error": "⚠️"}


def escape(text) -> str:
    """``text`` as literal Markdown on one line (safe in a table cell and at a line's start)."""
    escaped = _SPECIAL.sub(r"\\\1", doc.one_line(text))
    return _LINE_START.sub(lambda m: m[0][:-1] + "\\" + m[0][-1], escaped)


def math(latex: str) -> str:
    """Inline math for GitHub; ``$`$…$`$`` keeps ``_`` and ``*`` in the formula from Markdown."""
    flat = " ".join(latex.split())
    return f"$`{flat}`$" if flat else ""


def code(text: str) -> str:
    """An inline code span that no backtick run inside ``text`` can close."""
    flat = doc.one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def render(report: Report, figures: Figures | None = None) -> str:
    return text(doc.build(report, figures))


def text(document: doc.Document) -> str:
    """The Markdown of a document model."""
    parts = [_head(document), *(_section(s, level=2) for s in document.sections)]
    return "\n\n".join(parts) + "\n"


def _head(document: doc.Document) -> str:
    lines = [f"# {escape(document.title)}", "", escape(document.byline)]
    if document.warning:
        lines += ["", "> [!WARNING]", f"> {_line(document.warning)}"]
    return "\n".join(lines)


def _section(section: doc.Section, level: int) -> str:
    parts = [f"{'#' * level} {escape(section.title)}"]
    parts += [_block(b) for b in section.blocks]
    parts += [_section(child, level + 1) for child in section.children]
    return "\n\n".join(parts)


# -- blocks --------------------------------------------------------------------------------------


def _block(block: doc.Block) -> str:
    match block:
        case doc.Paragraph(line):
            return _line(line)
        case doc.Lines(lines):
            return "  \n".join(_line(line) for line in lines)
        case doc.Fields(items):
            return "  \n".join(f"**{escape(label)}:** {_line(value)}" for label, value in items)
        case doc.Quote(line):
            return f"> {_line(line)}"
        case doc.Statement():
            return _statement(block)
        case doc.Table():
            return _table(block)
        case doc.Bullets(items):
            return _bullets(items)
        case doc.Listing(text, language):
            return _fenced(doc.visible(text, keep_newlines=True), info=language)
        case doc.Figure(_, stem, caption, alt):
            return f"{escape(caption)}\n\n![{escape(alt)}]({stem}.png)"
    raise TypeError(f"no Markdown for {block!r}")


def _statement(block: doc.Statement) -> str:
    claim = block.claim
    shown = _fenced(" ".join(claim.latex.split()), "math") if isinstance(claim, doc.Math) \
        else _inline(claim)
    if not block.definitions:
        return shown
    return shown + "\n\nwhere " + ", ".join(_inline(d) for d in block.definitions)


def _table(table: doc.Table) -> str:
    head = "| " + " | ".join(escape(c.title) for c in table.columns) + " |"
    rule = "|" + "".join("---:|" if c.numeric else "---|" for c in table.columns)
    rows = ["| " + " | ".join(_line(cell) for cell in row) + " |" for row in table.rows]
    return "\n".join([head, rule, *rows])


def _bullets(items: tuple[doc.Item, ...]) -> str:
    if not any(item.body for item in items):
        return "\n".join(f"- {_line(item.line)}" for item in items)
    return "\n\n".join(_loose_item(item) for item in items)


def _loose_item(item: doc.Item) -> str:
    body = ["\n".join("  " + line for line in _block(b).splitlines()) for b in item.body]
    return "\n\n".join([f"- {_line(item.line)}", *body])


def _fenced(text: str, info: str = "") -> str:
    """A fenced block long enough that no backtick run inside the text can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(text.splitlines())
    return f"{fence}{info}\n{body}\n{fence}"


# -- inline pieces -------------------------------------------------------------------------------


def _line(line: doc.Line) -> str:
    return "".join(_inline(piece) for piece in line)


def _inline(piece: doc.Inline) -> str:
    match piece:
        case doc.Text(text):
            return doc.spaced(text, escape)
        case doc.Strong(text) | doc.Alert(text):
            return f"**{escape(text)}**"
        case doc.Emph(text):
            return f"_{escape(text)}_"
        case doc.Code(text):
            return code(text)
        case doc.Math(latex):
            return math(latex)
        case doc.Link(name):
            return f"[{escape(name)}](#{view.anchor(name)})"
        case doc.Status(status, text, strong):
            return f"{_MARKS.get(status, '')} " + (f"**{escape(text)}**" if strong
                                                   else escape(text))
        case doc.FigureRef():
            return "[Figures](#figures)"
    raise TypeError(f"no Markdown for {piece!r}")
