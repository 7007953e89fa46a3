"""The Markdown report, written for GitHub, rendered from ``document``: an index
(``summary.md``) and a page for each section that has one (a topic's theorems in
``topics/<module>.md``, the documents' coverage in ``coverage.md``), or the whole report on one
page (``text``).

A theorem's anchor is its heading's GitHub slug (``view.anchor``: its name, in lower case), on
whichever page it is; links between pages are relative, so the set reads the same on GitHub,
in a checkout and in any Markdown viewer.

Math is ``$`…`$`` inline and a ```` ```math ```` block for display: both are GitHub's forms
that keep ``_`` and ``*`` inside a formula away from the Markdown parser. Every piece of text
goes through ``escape`` (one line, every inline and line-start syntax character escaped, so no
HTML, link or table cell can be opened by it); formulas reach ``math`` only after
``safe_math`` accepted them; commands and values go into code spans or fenced blocks.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

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


def escape(text: object) -> str:
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


INDEX_NAME = f"{doc.INDEX}.md"


def render(report: Report, figures: Figures | None = None) -> str:
    """The whole report on one page."""
    return text(doc.build(report, figures))


def render_pages(report: Report, figures: Figures | None = None) -> dict[str, str]:
    """The report set's Markdown files: see ``pages``."""
    return pages(doc.build(report, figures))


def text(document: doc.Document) -> str:
    """The Markdown of a document model, on one page."""
    where = _Where(None, *_located(document))
    parts = [_head(document), *(_section(s, 2, where) for s in document.sections)]
    return "\n\n".join(parts) + "\n"


def pages(document: doc.Document) -> dict[str, str]:
    """The Markdown files of a document model, by path relative to the report directory: the
    index (``summary.md``: every section without a page of its own), then a file for each
    section with one (``Section.page`` + ``.md``)."""
    theorems, titles = _located(document)
    found = {INDEX_NAME: _index(document, _Where(doc.INDEX, theorems, titles))}
    for section in _paged(document.sections):
        where = _Where(section.page, theorems, titles)
        found[f"{section.page}.md"] = _page(document, section, where)
    return found


@dataclass(frozen=True)
class _Where:
    """The page being written (None: the whole report on one page), and where the pages of
    the theorems and of the sections with a page are, for links to resolve."""

    page: str | None
    theorems: dict[str, str] = field(default_factory=dict)  # theorem name -> its page
    titles: dict[str, str] = field(default_factory=dict)  # page -> its section's title

    def href(self, page: str, fragment: str = "") -> str:
        """A relative link from this page to ``page`` (and an anchor there)."""
        hash_part = f"#{fragment}" if fragment else ""
        if self.page is None or page == self.page:
            return hash_part or "#"
        here = posixpath.dirname(self.page)
        return posixpath.relpath(f"{page}.md", here or ".") + hash_part

    def file(self, path: str) -> str:
        """A file of the report directory (a figure), relative to this page."""
        if self.page is None:
            return path
        return posixpath.relpath(path, posixpath.dirname(self.page) or ".")


def _located(document: doc.Document) -> tuple[dict[str, str], dict[str, str]]:
    theorems: dict[str, str] = {}
    titles: dict[str, str] = {}

    def visit(section: doc.Section, page: str) -> None:
        page = section.page or page
        if section.page:
            titles[section.page] = section.title
        if section.theorem:
            theorems.setdefault(section.title, page)
        for child in section.children:
            visit(child, page)

    for section in document.sections:
        visit(section, doc.INDEX)
    return theorems, titles


def _paged(sections: Iterable[doc.Section]) -> list[doc.Section]:
    found: list[doc.Section] = []
    for section in sections:
        found += [section] * bool(section.page) + _paged(section.children)
    return found


def _head(document: doc.Document) -> str:
    lines = [f"# {escape(document.title)}", "", escape(document.byline)]
    if document.warning:
        lines += ["", "> [!WARNING]", f"> {_line(document.warning, _Where(None))}"]
    return "\n".join(lines)


def _index(document: doc.Document, where: _Where) -> str:
    """The index: every section without a page of its own; a section with one is a line that
    links to it, unless the index lists it already (the topics, in the overview)."""
    lines = [f"# {escape(document.title)}", "", escape(document.byline)]
    if document.warning:
        lines += ["", "> [!WARNING]", f"> {_line(document.warning, where)}"]
    parts = ["\n".join(lines)]
    for section in document.sections:
        if not section.page:
            parts.append(_section(section, 2, where))
        elif not section.topic:
            link = f"[{escape(section.title)}]({where.href(section.page)})"
            parts.append(f"## {escape(section.title)}\n\nOn a page of its own: {link}.")
    return "\n\n".join(parts) + "\n"


def _page(document: doc.Document, section: doc.Section, where: _Where) -> str:
    """A section's own page: its title, where it belongs, then its blocks and children."""
    back = f"[{escape(document.title)}]({where.href(doc.INDEX)})"
    lines = [f"# {escape(section.title)}", "", f"Part of the {back}. {escape(document.byline)}"]
    if document.warning:
        lines += ["", "> [!WARNING]", f"> {_line(document.warning, where)}"]
    parts = ["\n".join(lines), *(_block(b, where) for b in section.blocks)]
    parts += [_section(child, 2, where) for child in section.children if not child.page]
    return "\n\n".join(parts) + "\n"


def _section(section: doc.Section, level: int, where: _Where) -> str:
    parts = [f"{'#' * level} {escape(section.title)}"]
    parts += [_block(b, where) for b in section.blocks]
    parts += [_section(child, level + 1, where) for child in section.children
              if where.page is None or not child.page]
    return "\n\n".join(parts)


# -- blocks --------------------------------------------------------------------------------------


def _block(block: doc.Block, where: _Where) -> str:
    match block:
        case doc.Paragraph(line):
            return _line(line, where)
        case doc.Lines(lines):
            return "  \n".join(_line(line, where) for line in lines)
        case doc.Fields(items):
            return "  \n".join(f"**{escape(label)}:** {_line(value, where)}"
                               for label, value in items)
        case doc.Quote(line):
            return f"> {_line(line, where)}"
        case doc.Statement():
            return _statement(block, where)
        case doc.Table():
            return _table(block, where)
        case doc.Bullets(items):
            return _bullets(items, where)
        case doc.Listing(text, language):
            return _fenced(doc.visible(text, keep_newlines=True), info=language)
        case doc.Command(text):
            return _fenced(doc.one_line(text), info="sh")
        case doc.Figure(_, stem, caption, alt):
            return f"{escape(caption)}\n\n![{escape(alt)}]({where.file(stem + '.png')})"
    raise TypeError(f"no Markdown for {block!r}")


def _statement(block: doc.Statement, where: _Where) -> str:
    claim = block.claim
    shown = _fenced(" ".join(claim.latex.split()), "math") if isinstance(claim, doc.Math) \
        else _inline(claim, where)
    if not block.definitions:
        return shown
    return shown + "\n\nwhere " + ", ".join(_inline(d, where) for d in block.definitions)


def _table(table: doc.Table, where: _Where) -> str:
    head = "| " + " | ".join(escape(c.title) for c in table.columns) + " |"
    rule = "|" + "".join("---:|" if c.numeric else "---|" for c in table.columns)
    rows = ["| " + " | ".join(_line(cell, where) for cell in row) + " |" for row in table.rows]
    return "\n".join([head, rule, *rows])


def _bullets(items: tuple[doc.Item, ...], where: _Where) -> str:
    if not any(item.body for item in items):
        return "\n".join(f"- {_line(item.line, where)}" for item in items)
    return "\n\n".join(_loose_item(item, where) for item in items)


def _loose_item(item: doc.Item, where: _Where) -> str:
    body = ["\n".join("  " + line for line in _block(b, where).splitlines()) for b in item.body]
    return "\n\n".join([f"- {_line(item.line, where)}", *body])


def _fenced(text: str, info: str = "") -> str:
    """A fenced block long enough that no backtick run inside the text can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(text.splitlines())
    return f"{fence}{info}\n{body}\n{fence}"


# -- inline pieces -------------------------------------------------------------------------------


def _line(line: doc.Line, where: _Where) -> str:
    return "".join(_inline(piece, where) for piece in line)


def _inline(piece: doc.Inline, where: _Where) -> str:
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
            return _theorem_link(name, where)
        case doc.Status(status, text, strong):
            return f"{_MARKS.get(status, '')} " + (f"**{escape(text)}**" if strong
                                                   else escape(text))
        case doc.FigureRef():
            return f"[Figures]({where.href(doc.INDEX, 'figures')})"
        case doc.PageLink(page, text):
            if where.page is None:  # one page: the section's heading
                return f"[{escape(text)}](#{view.anchor(where.titles.get(page, text))})"
            return f"[{escape(text)}]({where.href(page)})"
    raise TypeError(f"no Markdown for {piece!r}")


def _theorem_link(name: str, where: _Where) -> str:
    """A theorem's name, linked to its section wherever that is; a theorem this report does
    not hold (a correction left out of a partial run) is named without a link."""
    page = where.theorems.get(name)
    if page is None:
        return escape(name)
    return f"[{escape(name)}]({where.href(page, view.anchor(name))})"
