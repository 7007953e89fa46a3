"""The LaTeX report (``report.tex``): one complete document for pdflatex, a part per topic
(``\\part``, the level above ``\\section`` in the article class) and a section per theorem.

Rendered from ``document`` (``text`` renders any document of the model: the kernel matrix too).
Text goes through ``escape`` (one line, every special character spelled, control characters
shown), listings through ``_listing`` (verbatim, ASCII only, since listings cannot read
multi-byte characters), and only formulas that ``safe_math`` accepted are typeset as math: no
report content can reach ``\\input``, ``\\write18`` or a catcode change. Packages are those of TeX
Live's latex-base, -recommended and -extra Debian packages.

Commands (``document.Command``) are set in ``verbatim``, ASCII only, broken by ``command_lines``
only between shell words with a trailing `` \\`` (a shell's line continuation): copied from the
PDF, a command runs as printed. The typewriter font of the default (OT1) encoding has every
ASCII glyph at its ASCII position, so an underscore set as a character (in ``verbatim``, or as
``\\char95`` in code) copies as ``_``; ``\\_`` in text draws a rule, which many viewers copy as a
space.
"""

from __future__ import annotations

import unicodedata

from . import document as doc
from .figures import Figures, shortened
from .results import Report

PREAMBLE = r"""\documentclass[10pt,a4paper]{article}
\usepackage[utf8]{inputenc}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{graphicx}
\usepackage{float}
\usepackage{adjustbox}
\usepackage{booktabs}
\usepackage{array}
\usepackage{longtable}
\usepackage[table]{xcolor}
\usepackage{listings}
\usepackage{upquote}
\usepackage[hidelinks]{hyperref}
\lstset{basicstyle=\ttfamily\small, breaklines=true, columns=fullflexible,
  breakatwhitespace=false, frame=single, rulecolor=\color{black!25}}
\definecolor{good}{rgb}{0.0,0.45,0.15}
\definecolor{false}{rgb}{0.75,0.35,0.0}
\definecolor{bad}{rgb}{0.8,0.0,0.0}
\definecolor{info}{rgb}{0.1,0.3,0.7}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5em}
\newcolumntype{L}[1]{>{\raggedright\arraybackslash}p{#1}}
"""

_STATUS_COLOURS = {"proved": "good", "proved-bounded": "good", "checked": "info",
                   "unchecked": "black", "unstable": "bad", "refuted": "false", "failed": "bad",
                   "inconsistent": "bad", "error": "bad"}

_TEXT_SPECIALS = {
    "\\": r"$\backslash$", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "%": r"\%", "_": r"\_", "^": r"\^{}", "~": r"\~{}", "<": r"$<$", ">": r"$>$", "|": r"$|$",
    # A bracket after \item or a row end \\ would be read as an optional argument.
    "[": "{[}", "]": "{]}",
}

# Unicode a reader meets in sources and notes, spelled in LaTeX (math mode where needed).
_UNICODE_MATH = {
    "×": r"\times", "−": "-", "·": r"\cdot", "‖": r"\|", "⟨": r"\langle", "⟩": r"\rangle",
    "≥": r"\geq", "≤": r"\leq", "≠": r"\neq", "≈": r"\approx", "→": r"\to", "←": r"\leftarrow",
    "∞": r"\infty", "∂": r"\partial", "∘": r"\circ", "∈": r"\in", "∇": r"\nabla", "∑": r"\sum",
    "√": r"\surd", "ℓ": r"\ell", "′": "'", "″": "''", "±": r"\pm", "⊙": r"\odot", "∝": r"\propto",
    "½": r"\tfrac{1}{2}", "¼": r"\tfrac{1}{4}", "¾": r"\tfrac{3}{4}",
}
_UNICODE_TEXT = {"§": r"\S{}", "–": "--", "—": "---", "…": r"\dots{}", "“": "``", "”": "''",
                 "‘": "`", "’": "'", "\u00a0": "~",
                 # the marks of the kernel matrix (``attnproof.kernels._matrix.MARKS``)
                 "✅": r"\textcolor{good}{$\checkmark$}", "❌": r"\textcolor{false}{$\times$}",
                 "💥": r"\textcolor{bad}{\textbf{!!}}", "🔀": r"$\leftrightarrows$",
                 "📝": r"\textcolor{bad}{$\neq$}", "💀": r"\textcolor{bad}{$\dagger$}",
                 "⌛": r"\textcolor{bad}{$\circlearrowright$}", "❔": r"\textbf{?}", "⏭": r"$\gg$",
                 "⚠": r"\textcolor{bad}{\textbf{!}}"}


# With ``breakable``, a run of this many characters with no space or underscore gets a break
# point, so that any valid name, thousands of characters long, wraps within the page.
RUN_BEFORE_BREAK = 16


def escape(text: object, breakable: bool = False) -> str:
    """``text`` as literal LaTeX text; ``breakable`` lets long identifiers wrap at ``_`` and
    within long runs of other characters."""
    out, run = [], 0
    for char in doc.one_line(text):
        if char == "_" and breakable:
            out.append(r"\_\allowbreak{}")
            run = 0
            continue
        out.append(_TEXT_SPECIALS[char] if char in _TEXT_SPECIALS else _unicode_text(char))
        run = 0 if char.isspace() else run + 1
        if breakable and run >= RUN_BEFORE_BREAK:
            out.append(r"\allowbreak{}")
            run = 0
    return "".join(out)


def identifier(name: str) -> str:
    """A theorem name (or any code) in typewriter, whose underscore is a glyph (so it copies
    and searches as ``_``), breakable after each underscore and within long runs."""
    text = escape(name, breakable=True).replace(r"\_\allowbreak{}", r"\char95\allowbreak{}")
    return r"\texttt{" + text + "}"


# Characters of typewriter ``\small`` on the report's line (A4, 2 cm margins): a command line
# longer than this breaks between words where it can.
COMMAND_WIDTH = 88
COMMAND_INDENT = "  "


def command_lines(command: str, width: int = COMMAND_WIDTH) -> list[str]:
    """``command`` in lines of at most ``width`` characters where its words allow, broken only
    between shell words (never inside quotes, an option kept with its value), each line but
    the last ending in `` \\`` and the next indented: pasted into a shell, the lines run as the
    one-line command. A command whose quotes do not close stays one line."""
    words = _shell_words(command)
    if words is None:
        return [command]
    groups: list[str] = []
    for word in words:
        # an option and its value, where the two fit a line of their own (indent and " \\")
        if groups and groups[-1].startswith("-") and " " not in groups[-1] \
                and not word.startswith("-") and len(groups[-1]) + 1 + len(word) + 4 <= width:
            groups[-1] += " " + word
        else:
            groups.append(word)
    lines: list[str] = []
    for group in groups:
        if lines and len(lines[-1]) + 1 + len(group) + 2 <= width:
            lines[-1] += " " + group
        else:
            lines.append((COMMAND_INDENT if lines else "") + group)
    return [line + " \\" for line in lines[:-1]] + lines[-1:]


def _shell_words(command: str) -> list[str] | None:
    """The shell words of ``command`` as written (quotes and escapes kept), or None when a
    quote does not close."""
    words, position, size = [], 0, len(command)
    while position < size:
        if command[position] in " \t":
            position += 1
            continue
        start, quote = position, None
        while position < size and (quote or command[position] not in " \t"):
            char = command[position]
            if quote == "'":
                quote = None if char == "'" else quote
            elif char == "\\":
                position += 1  # the next character is escaped (within double quotes too)
            elif quote == '"':
                quote = None if char == '"' else quote
            elif char in "'\"":
                quote = char
            position += 1
        if quote or position > size:
            return None
        words.append(command[start:position])
    return words


# Any valid name may be thousands of characters long; in headings and table rows, which cannot
# break across pages, a name longer than this is shortened around an ellipsis.
DISPLAY_LENGTH = 160

# hyperref spends time quadratic in a bookmark's length: a longer name is cut there.
BOOKMARK_LENGTH = 80


def _heading_text(name: str) -> str:
    """A name for a section title: typewriter on the page, plain in the PDF bookmarks."""
    short = name if len(name) <= BOOKMARK_LENGTH else name[: BOOKMARK_LENGTH - 3] + "..."
    bookmark = escape(short).replace(r"\_", r"\textunderscore{}")
    return rf"\texorpdfstring{{{identifier(name)}}}{{{bookmark}}}"


# Latin-1 letters that the default (OT1) fonts lack: pdflatex stops at them.
_NOT_IN_OT1 = frozenset("ÐÞðþ")


def _unicode_text(char: str) -> str:
    if ord(char) < 128 or ("\u00c0" <= char <= "\u00ff" and char not in _NOT_IN_OT1):
        return char  # ASCII, and the accented letters inputenc sets in the default fonts
    if char in _UNICODE_TEXT:
        return _UNICODE_TEXT[char]
    spelled = _unicode_math(char)
    if spelled is not None:
        return f"${spelled}$"
    # The ASCII spelling may itself be special: NFKD turns a fullwidth ＼ into \, ％ into %.
    return "".join(_TEXT_SPECIALS.get(c, c) for c in _ascii(char))


def _unicode_math(char: str) -> str | None:
    if char in _UNICODE_MATH:
        return _UNICODE_MATH[char]
    script = _script(char)
    if script is not None:
        return script
    name = unicodedata.name(char, "")
    if name.startswith("GREEK SMALL LETTER ") and len(name.split()) == 4:
        letter = name.split()[-1].lower().replace("lamda", "lambda")
        # archaic letters (koppa, sampi, ...) have no LaTeX command: pdflatex stops at them
        if letter == "omicron":
            return "o"
        return "\\" + letter if letter in _SMALL_GREEK else None
    if name.startswith("GREEK CAPITAL LETTER ") and len(name.split()) == 4:
        letter = name.split()[-1].capitalize().replace("Lamda", "Lambda")
        return "\\" + letter if letter in _CAPITAL_GREEK else None
    return None


def _script(char: str) -> str | None:
    """Superscript and subscript characters (², ⁻, ᵀ, ₖ) as ``^{…}`` and ``_{…}``."""
    decomposition = unicodedata.decomposition(char).split()
    marks = {"<super>": "^", "<sub>": "_"}
    if len(decomposition) != 2 or decomposition[0] not in marks:
        return None
    base = chr(int(decomposition[1], 16))
    spelled = {"−": "-", "+": "+"}.get(base, base)
    return f"{marks[decomposition[0]]}{{{spelled}}}" if ord(spelled[0]) < 128 else None


_SMALL_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
                "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi",
                "chi", "psi", "omega"}
_CAPITAL_GREEK = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi",
                  "Psi", "Omega"}


def _ascii(text: str) -> str:
    """The closest ASCII spelling (ᵀ → T, é → e), or a visible code point."""
    out = []
    for char in text:
        if ord(char) < 128:
            out.append(char)
            continue
        plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
        out.append(plain or f"[U+{ord(char):04X}]")
    return "".join(out)


def _listing(text: str) -> str:
    shown = doc.visible(text, keep_newlines=True)
    ascii_text = "".join(_ASCII_FOR_LISTINGS.get(c, c) for c in shown)
    body = _ascii(ascii_text).replace(r"\end{lstlisting}", r"\end {lstlisting}")
    return "\\begin{lstlisting}\n" + body + "\n\\end{lstlisting}"


def _command(text: str) -> str:
    """A command in ``verbatim`` (so every character copies as itself), ASCII only (verbatim
    cannot set others), broken by ``command_lines``."""
    shown = _ascii("".join(_ASCII_FOR_LISTINGS.get(c, c) for c in doc.one_line(text)))
    body = "\n".join(command_lines(shown)).replace(r"\end{verbatim}", r"\end {verbatim}")
    return "\\begin{small}\n\\begin{verbatim}\n" + body + "\n\\end{verbatim}\n\\end{small}"


_ASCII_FOR_LISTINGS = {"−": "-", "×": "x", "·": "*", "…": "...", "–": "-", "—": "-", "≤": "<=",
                       "≥": ">=", "∞": "inf"}


def render(report: Report, figures: Figures | None = None) -> str:
    return text(doc.build(report, figures))


def text(document: doc.Document) -> str:
    """The LaTeX document of a document model."""
    labels = _labels(document)
    body, after_topic = [_title(document)], False
    for section in document.sections:
        if section.topic:
            body.append(r"\clearpage")
        # a section after the topics' parts is a part of its own, not a section of the last
        body.append(_section(section, labels, 0, after_topic and not section.topic))
        after_topic = after_topic or section.topic
    return PREAMBLE + "\\begin{document}\n" + "\n\n".join(body) + "\n\\end{document}\n"


def _labels(document: doc.Document) -> dict:
    """A label per theorem section, by theorem name (names may hold any character), and one
    per section that has a page of its own, by ``("page", its page)``."""
    theorems: list[str] = []
    pages: list[str] = []

    def visit(section: doc.Section) -> None:
        if section.theorem:
            theorems.append(section.title)
        if section.page:
            pages.append(section.page)
        for child in section.children:
            visit(child)

    for section in document.sections:
        visit(section)
    labels: dict = {("page", page): f"page:{number}" for number, page in enumerate(pages)}
    return labels | {name: f"thm:{number}" for number, name in enumerate(theorems)}


# A byline longer than this (a legend) is a paragraph under the title, not its date.
BYLINE_AS_DATE = 160


def _title(document: doc.Document) -> str:
    short = len(document.byline) <= BYLINE_AS_DATE
    lines = [rf"\title{{{escape(document.title)}}}",
             rf"\date{{{escape(document.byline) if short else ''}}}", r"\maketitle"]
    if not short:
        lines.append(escape(document.byline))
    if document.warning:
        lines.append(r"\begin{center}\fcolorbox{bad}{white}{\parbox{0.9\linewidth}{"
                     rf"{_line(document.warning, {})}}}}}\end{{center}}")
    return "\n".join(lines)


_UNNUMBERED = ("section", "subsection", "subsubsection", "paragraph")


def _section(section: doc.Section, labels: dict, depth: int, part: bool) -> str:
    """A theorem's section is numbered (``\\section``); a topic is a ``\\part``; any other
    section is unnumbered, at its depth (``part``: a part of its own)."""
    if section.theorem:
        name = section.title
        head = (rf"\section{{{_heading_text(shortened(name, DISPLAY_LENGTH))}}}"
                rf"\label{{{labels[name]}}}")
        if len(name) > DISPLAY_LENGTH:  # a heading cannot break across pages; the text can
            head += "\n\n" + rf"Full name: {identifier(name)}"
    elif section.topic:
        head = rf"\part{{{escape(section.title)}}}"
    else:
        level = "part" if part else _UNNUMBERED[min(depth, len(_UNNUMBERED) - 1)]
        title = escape(section.title)
        head = rf"\{level}*{{{title}}}\addcontentsline{{toc}}{{{level}}}{{{title}}}"
    if section.page:
        head += rf"\label{{{labels[('page', section.page)]}}}"
    parts = [head, *(_block(b, labels) for b in section.blocks)]
    parts += [_section(c, labels, depth + 1, False) for c in section.children]
    return "\n\n".join(parts)


# -- blocks --------------------------------------------------------------------------------------


def _block(block: doc.Block, labels: dict) -> str:
    match block:
        case doc.Paragraph(line):
            return _line(line, labels)
        case doc.Lines(lines):
            return "\n\n".join(_line(line, labels) for line in lines)
        case doc.Fields(items):
            rows = [rf"\item[{escape(label)}] {_line(value, labels)}" for label, value in items]
            return "\\begin{description}\n" + "\n".join(rows) + "\n\\end{description}"
        case doc.Quote(line):
            return rf"\begin{{quote}}\emph{{{_line(line, labels)}}}\end{{quote}}"
        case doc.Statement(claim, definitions):
            shown = [_display(claim), "where" * bool(definitions)]
            return "\n".join(p for p in shown + [_display(d) for d in definitions] if p)
        case doc.Table():
            return _table(block, labels)
        case doc.Bullets(items):
            rows = [r"\item{} " + "\n".join([_line(i.line, labels),
                                             *(_block(b, labels) for b in i.body)])
                    for i in items]
            return "\\begin{itemize}\n" + "\n".join(rows) + "\n\\end{itemize}"
        case doc.Listing(text):
            return _listing(text)
        case doc.Command(text):
            return _command(text)
        case doc.Figure():
            return _figure(block)
    raise TypeError(f"no LaTeX for {block!r}")


def _display(formula: doc.Inline) -> str:
    """Display math, shrunk to the line width only when it is wider; a formula that is not
    math is shown as its text."""
    if not isinstance(formula, doc.Math):
        return rf"\begin{{center}}{_inline(formula, {})}\end{{center}}"
    return (r"\begin{center}\begin{adjustbox}{max width=\linewidth}"
            rf"$\displaystyle {' '.join(formula.latex.split())}$\end{{adjustbox}}\end{{center}}")


def _table(table: doc.Table, labels: dict) -> str:
    spec = "".join(_column_spec(c) for c in table.columns) + "r" * table.pages
    titles = [escape(c.title) for c in table.columns] + ["page"] * table.pages
    rows = [" & ".join([_cell(cell, labels) for cell in row] + _page(row, labels, table.pages))
            + r" \\" for row in table.rows]
    return "\n".join([rf"\begin{{longtable}}{{{spec}}}",
                      r"\toprule " + " & ".join(titles) + r" \\ \midrule\endhead", *rows,
                      r"\bottomrule\end{longtable}"])


def _column_spec(column: doc.Column) -> str:
    if column.width is not None:
        return rf"L{{{column.width}\linewidth}}"
    return "r" if column.numeric else "l"


def _cell(cell: doc.Line, labels: dict) -> str:
    return "".join(_inline(piece, labels, breakable=True) for piece in cell)


def _page(row: tuple[doc.Line, ...], labels: dict, pages: bool) -> list[str]:
    if not pages:
        return []
    link = next((p for p in row[0] if isinstance(p, doc.Link) and p.name in labels), None)
    return [rf"\pageref{{{labels[link.name]}}}" if link else ""]


def _figure(figure: doc.Figure) -> str:
    return "\n".join([
        r"\begin{figure}[H]\centering",
        rf"\includegraphics[width=\linewidth,height=0.75\textheight,keepaspectratio]"
        rf"{{{figure.stem}}}",
        rf"\caption{{{escape(figure.caption)}}}\label{{fig:{figure.key}}}",
        r"\end{figure}",
    ])


# -- inline pieces -------------------------------------------------------------------------------


def _line(line: doc.Line, labels: dict) -> str:
    return "".join(_inline(piece, labels) for piece in line)


def _inline(piece: doc.Inline, labels: dict, breakable: bool = False) -> str:
    match piece:
        case doc.Text(text):
            return doc.spaced(text, lambda t: escape(t, breakable))
        case doc.Strong(text):
            return rf"\textbf{{{escape(text)}}}"
        case doc.Alert(text):
            return rf"\textcolor{{bad}}{{\textbf{{{escape(text)}}}}}"
        case doc.Emph(text):
            return rf"\emph{{{escape(text)}}}"
        case doc.Code(text):
            return identifier(text)
        case doc.Math(latex):
            return f"${' '.join(latex.split())}$"
        case doc.Link(name):
            return _ref(name, labels)
        case doc.Status(status, text, strong):
            coloured = rf"\textcolor{{{_STATUS_COLOURS.get(status, 'black')}}}{{{escape(text)}}}"
            return rf"\textbf{{{coloured}}}" if strong else coloured
        case doc.FigureRef(key):
            return rf"Figure~\ref{{fig:{key}}}"
        case doc.PageLink(page, text):
            label = labels.get(("page", page))
            return rf"\hyperref[{label}]{{{escape(text)}}}" if label else escape(text)
    raise TypeError(f"no LaTeX for {piece!r}")


def _ref(name: str, labels: dict) -> str:
    """A theorem's name where it is mentioned (a table row cannot break across pages, so a
    long name is shortened; its section gives it in full)."""
    shown = identifier(shortened(name, DISPLAY_LENGTH))
    if name in labels:
        return rf"\hyperref[{labels[name]}]{{{shown}}}"
    return shown
