"""The terminal view (``attnproof show`` and ``list``), rendered from ``document``.

Plain text: every piece goes through ``escape``, which shows control characters as ``\\xNN``
(an ESC from a theorem file or a results JSON cannot move the cursor, recolour or retitle the
terminal) and keeps one-line fields on one line; listings keep their lines, shown the same way.
"""

from __future__ import annotations

from . import document as doc

_LABEL_WIDTH = 12


def escape(text: object) -> str:
    return doc.one_line(text)


def section(part: doc.Section) -> str:
    """A theorem's section (or any other) as plain text, blocks separated by blank lines but
    for a caption and the block it introduces."""
    text = escape(part.title)
    previous = None
    for block in part.blocks:
        text += ("\n" if _introduces(previous) else "\n\n") + _block(block)
        previous = block
    return "\n\n".join([text, *(section(c) for c in part.children)])


def _introduces(block: doc.Block | None) -> bool:
    """A caption line: "Numeric evidence", "Replay:"."""
    if not isinstance(block, doc.Paragraph):
        return False
    last = block.line[-1]
    return len(block.line) == 1 and isinstance(last, doc.Strong) or (
        isinstance(last, doc.Text) and last.text.endswith(":"))


def table(columns: tuple[doc.Column, ...], rows: list[tuple[str, ...]]) -> str:
    """Plain cells under their column titles, padded to line up."""
    return _table(doc.Table(columns, tuple(tuple(doc.text_line(c) for c in row)
                                           for row in rows)))


def _block(block: doc.Block) -> str:
    match block:
        case doc.Paragraph(line) | doc.Quote(line):
            return ("> " if isinstance(block, doc.Quote) else "") + _line(line)
        case doc.Lines(lines):
            return "\n".join(_line(line) for line in lines)
        case doc.Fields(items):
            return "\n".join(_field(label, _line(value)) for label, value in items)
        case doc.Statement(claim, definitions):
            shown = [_field("Statement", _inline(claim))]
            return "\n".join(shown + [_field("Where", _inline(d)) for d in definitions])
        case doc.Table():
            return _table(block)
        case doc.Bullets(items):
            return "\n".join(_item(item) for item in items)
        case doc.Listing(text):
            return _indent(doc.visible(text, keep_newlines=True))
        case doc.Command(text):
            return _indent(escape(text))  # one line, to copy whole
        case doc.Figure(_, stem, caption):
            return f"{escape(caption)} ({escape(stem)}.png)"
    raise TypeError(f"no terminal text for {block!r}")


def _field(label: str, value: str) -> str:
    return f"{label.lower() + ':':<{_LABEL_WIDTH}}{value}"


def _table(table: doc.Table) -> str:
    grid = [[escape(c.title) for c in table.columns]]
    grid += [[_line(cell) for cell in row] for row in table.rows]
    widths = [max(len(row[n]) for row in grid) for n in range(len(table.columns))]
    return "\n".join(_table_row(row, widths, table.columns) for row in grid)


def _table_row(cells: list[str], widths: list[int], columns: tuple[doc.Column, ...]) -> str:
    padded = [cell.rjust(w) if column.numeric else cell.ljust(w)
              for cell, w, column in zip(cells, widths, columns, strict=True)]
    return "  ".join(padded).rstrip()


def _item(item: doc.Item) -> str:
    return "\n".join([f"- {_line(item.line)}", *(_indent(_block(b)) for b in item.body)])


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _line(line: doc.Line) -> str:
    return "".join(_inline(piece) for piece in line)


def _inline(piece: doc.Inline) -> str:
    match piece:
        case doc.Text(text):
            return doc.spaced(text, escape)
        case doc.Strong(text) | doc.Alert(text) | doc.Emph(text) | doc.Code(text):
            return escape(text)
        case doc.Math(latex):
            return escape(latex)
        case doc.Link(name):
            return escape(name)
        case doc.Status(_, text):
            return escape(text)
        case doc.FigureRef():
            return "the report's figures"
        case doc.PageLink(_, text):
            return escape(text)
    raise TypeError(f"no terminal text for {piece!r}")
