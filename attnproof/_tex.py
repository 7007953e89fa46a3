"""The LaTeX report (``report.tex``): a complete document for pdflatex, one section per theorem.

User text goes through ``escape`` (text), code and values through ``_listing`` (verbatim,
ASCII only, since listings cannot read multi-byte characters), and LaTeX from the renderer
through ``_math`` (which only maps stray Unicode). Packages are those of TeX Live's
latex-base, -recommended and -extra Debian packages.
"""

from __future__ import annotations

import json
import unicodedata

from . import _view as view
from ._figures import Figures
from ._results import Report, TheoremResult

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
                   "unchecked": "black", "refuted": "false", "failed": "bad", "error": "bad"}

_TEXT_SPECIALS = {
    "\\": r"$\backslash$", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "%": r"\%", "_": r"\_", "^": r"\^{}", "~": r"\~{}", "<": r"$<$", ">": r"$>$", "|": r"$|$",
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
                 "‘": "`", "’": "'", "\u00a0": "~"}


def escape(text, breakable: bool = False) -> str:
    """``text`` as literal LaTeX text; ``breakable`` lets long identifiers wrap at ``_``."""
    out = []
    for char in str(text):
        if char == "_" and breakable:
            out.append(r"\_\allowbreak{}")
        elif char in _TEXT_SPECIALS:
            out.append(_TEXT_SPECIALS[char])
        else:
            out.append(_unicode_text(char))
    return "".join(out)


def identifier(name: str) -> str:
    """A theorem name in typewriter, whose underscore is a glyph (so it copies and searches
    as ``_``), breakable after each underscore."""
    return r"\texttt{" + escape(name).replace(r"\_", r"\char95\allowbreak{}") + "}"


def _heading_text(name: str) -> str:
    """A name for a section title: typewriter on the page, plain in the PDF bookmarks."""
    bookmark = escape(name).replace(r"\_", r"\textunderscore{}")
    return rf"\texorpdfstring{{{identifier(name)}}}{{{bookmark}}}"


def _unicode_text(char: str) -> str:
    if ord(char) < 128 or "\u00c0" <= char <= "\u00ff":  # ASCII, and accents inputenc knows
        return char
    if char in _UNICODE_TEXT:
        return _UNICODE_TEXT[char]
    spelled = _unicode_math(char)
    return f"${spelled}$" if spelled is not None else _ascii(char)


def _unicode_math(char: str) -> str | None:
    if char in _UNICODE_MATH:
        return _UNICODE_MATH[char]
    script = _script(char)
    if script is not None:
        return script
    name = unicodedata.name(char, "")
    if name.startswith("GREEK SMALL LETTER ") and len(name.split()) == 4:
        return "\\" + name.split()[-1].lower().replace("lamda", "lambda")
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


def _math(latex: str) -> str:
    """Renderer LaTeX with any stray Unicode spelled as a macro."""
    return "".join(char if ord(char) < 128 else (_unicode_math(char) or r"\text{?}")
                   for char in latex)


def _listing(text: str) -> str:
    ascii_text = "".join(_ASCII_FOR_LISTINGS.get(c, c) for c in str(text))
    body = _ascii(ascii_text).replace(r"\end{lstlisting}", r"\end {lstlisting}")
    return "\\begin{lstlisting}\n" + body + "\n\\end{lstlisting}"


_ASCII_FOR_LISTINGS = {"−": "-", "×": "x", "·": "*", "…": "...", "–": "-", "—": "-", "≤": "<=",
                       "≥": ">=", "∞": "inf"}


def render(report: Report, figures: Figures | None = None) -> str:
    figures = figures or Figures()
    labels = {t.name: f"thm:{number}" for number, t in enumerate(report.theorems)}
    body = [
        _title(report),
        _summary(report),
        _errata(report, labels),
        _figures(figures),
        _overview(report.theorems, labels),
        r"\clearpage",
        *(_theorem_section(t, report, labels, figures) for t in report.theorems),
        _errors(report),
    ]
    return PREAMBLE + "\\begin{document}\n" + "\n\n".join(p for p in body if p) + \
        "\n\\end{document}\n"


# -- front matter -------------------------------------------------------------------------------


def _title(report: Report) -> str:
    by = report.run.get("by", "attnproof")
    profile = report.run.get("profile")
    made = f"by {escape(by)}" + (f", profile {escape(profile)}" if profile else "")
    lines = [r"\title{attnproof report}",
             rf"\date{{Generated {escape(report.generated)} {made}}}",
             r"\maketitle"]
    if report.partial:
        reason = escape(report.partial_reason or "not every theorem was checked")
        lines.append(r"\begin{center}\fcolorbox{bad}{white}{\parbox{0.9\linewidth}{"
                     rf"\textbf{{Partial report:}} {reason}.}}}}\end{{center}}")
    return "\n".join(lines)


def _unnumbered(title: str) -> str:
    return rf"\section*{{{title}}}\addcontentsline{{toc}}{{section}}{{{title}}}"


def _summary(report: Report) -> str:
    totals = view.totals(report)
    rows = [rf"{_status_word(s)} & {escape(view.STATUS_MEANINGS.get(s, ''))} & {n} \\"
            for s, n in view.status_counts(report)]
    env = view.environment_rows(report)
    env_rows = [rf"{escape(name)} & {escape(value)} \\" for name, value in env]
    return "\n".join([
        _unnumbered("Summary"),
        r"\begin{tabular}{llr}\toprule status & meaning & theorems \\ \midrule", *rows,
        r"\bottomrule\end{tabular}", "",
        rf"\textbf{{{totals.theorems} theorems}}, {totals.as_expected} as expected; "
        rf"{len(report.errors)} errors. {totals.instances:,} numeric instances; proofs "
        rf"{view.format_seconds(totals.proof_seconds)}, numeric checks "
        rf"{view.format_seconds(totals.numeric_seconds)}.", "",
        r"\begin{tabular}{ll}\toprule environment & \\ \midrule", *env_rows,
        r"\bottomrule\end{tabular}",
    ])


def _status_word(status: str) -> str:
    return rf"\textcolor{{{_STATUS_COLOURS.get(status, 'black')}}}{{{escape(status)}}}"


def _status(t: TheoremResult) -> str:
    colour = _STATUS_COLOURS.get(t.status, "black")
    text = rf"\textcolor{{{colour}}}{{{escape(view.status_phrase(t))}}}"
    return text if t.ok else rf"\textbf{{{text}}}"


def _ref(name: str, labels: dict[str, str]) -> str:
    if name in labels:
        return rf"\hyperref[{labels[name]}]{{{identifier(name)}}}"
    return identifier(name)


def _errata(report: Report, labels: dict[str, str]) -> str:
    entries = view.errata(report)
    if not entries:
        return ""
    head = [_unnumbered("Errata"),
            "Claims of the documents found false, with their smallest counterexample and the "
            "corrected claim.", "",
            r"\begin{longtable}{L{0.2\linewidth}L{0.22\linewidth}L{0.3\linewidth}"
            r"L{0.2\linewidth}}",
            r"\toprule claim & source & counterexample & correction \\ \midrule\endhead"]
    rows = []
    for claim, fixes in entries:
        found = view.smallest_counterexample(claim)
        values = escape(view.counterexample_summary(found[1], 160)) if found else "---"
        fixed = "; ".join(f"{_ref(f.name, labels)} ({escape(view.status_phrase(f))})"
                          for f in fixes) or "none stated"
        source = escape(claim.source, breakable=True)
        rows.append(rf"{_ref(claim.name, labels)} & {source} & {values} & "
                    rf"{fixed} \\")
    return "\n".join(head + rows + [r"\bottomrule\end{longtable}"])


def _figures(figures: Figures) -> str:
    parts = []
    if figures.error_bits:
        parts.append(_figure(figures.error_bits, "Worst error in bits of each theorem for each "
                             "backend and dtype (lighter is more accurate; blank: not run; "
                             "outlined in blue: a check failed; dashed: not decisive).",
                             "fig:error-bits"))
    if figures.temperature:
        parts.append(_figure(figures.temperature, "Softmax weights and entropy of the scores "
                             "S = [2, 1, 0] against the temperature T; circles: the values "
                             "printed in the tutorial's \\S11.2 table.", "fig:temperature"))
    if figures.missing:
        parts.append(rf"\emph{{{escape(figures.missing)}}}")
    return "\n\n".join([_unnumbered("Figures"), *parts]) if parts else ""


def _figure(stem: str, caption: str, label: str) -> str:
    return "\n".join([
        r"\begin{figure}[H]\centering",
        rf"\includegraphics[width=\linewidth,height=0.75\textheight,keepaspectratio]{{{stem}}}",
        rf"\caption{{{caption}}}\label{{{label}}}",
        r"\end{figure}",
    ])


def _overview(theorems: list[TheoremResult], labels: dict[str, str]) -> str:
    if not theorems:
        return ""
    rows = [rf"{_ref(t.name, labels)} & {_status(t)} & {_proof_time(t)} & {_numeric_cell(t)} & "
            rf"\pageref{{{labels[t.name]}}} \\" for t in theorems]
    return "\n".join([
        _unnumbered("Theorems"),
        r"\begin{longtable}{L{0.38\linewidth}L{0.2\linewidth}rlr}",
        r"\toprule theorem & status & proof & numeric: passed, worst error & page \\ \midrule"
        r"\endhead", *rows,
        r"\bottomrule\end{longtable}",
    ])


def _proof_time(t: TheoremResult) -> str:
    return view.format_seconds(t.symbolic.seconds) if t.symbolic else "---"


def _numeric_cell(t: TheoremResult) -> str:
    ran = [r for r in t.numeric if r.status != "skipped"]
    if not ran:
        return "---"
    worst = view.worst_bits(t)
    bits = "" if worst is None else f", {worst:.1f} bits"
    return escape(view.numeric_tally(ran).replace(" passed", "")) + bits


# -- one section per theorem ------------------------------------------------------------------


def _theorem_section(t: TheoremResult, report: Report, labels: dict[str, str],
                     figures: Figures) -> str:
    fixes = view.corrections(report).get(t.name, [])
    parts = [
        rf"\section{{{_heading_text(t.name)}}}\label{{{labels[t.name]}}}",
        _facts(t),
        _statement(t),
        _assumptions(t),
        rf"\begin{{quote}}\emph{{{escape(t.note)}}}\end{{quote}}" if t.note else "",
        _evidence_table(t),
        _counterexamples(t),
        _links(t, fixes, labels),
        _temperature_pointer(t, figures),
        r"\textbf{Reproduce:}" + "\n" + _listing(view.reproduce_command(t)),
    ]
    return "\n\n".join(p for p in parts if p)


def _facts(t: TheoremResult) -> str:
    expected = "expected to hold" if t.expect == "holds" else "expected to be refuted"
    items = [rf"\item[Status] {_status(t)} ({escape(expected)})",
             rf"\item[Source] {escape(t.source or '---')}"]
    if t.symbolic is not None:
        items.append(rf"\item[Proof] {escape(t.symbolic.method)} "
                     rf"({view.format_seconds(t.symbolic.seconds)})")
    return "\\begin{description}\n" + "\n".join(items) + "\n\\end{description}"


def _display(latex: str) -> str:
    """Display math, shrunk to the line width only when it is wider."""
    return (r"\begin{center}\begin{adjustbox}{max width=\linewidth}"
            rf"$\displaystyle {_math(' '.join(latex.split()))}$\end{{adjustbox}}\end{{center}}")


def _statement(t: TheoremResult) -> str:
    if not t.statement_latex:
        return ""
    parts = [_display(t.statement_latex)]
    if t.definitions_latex:
        parts.append("where")
        parts += [_display(d) for d in t.definitions_latex]
    return "\n".join(parts)


def _assumptions(t: TheoremResult) -> str:
    if not t.assumptions:
        return ""
    items = [rf"${_math(a.get('latex') or a.get('name', ''))}$: {escape(a.get('domain', ''))}"
             for a in t.assumptions]
    return r"\textbf{Assumptions:} " + "; ".join(items) + "."


def _evidence_table(t: TheoremResult) -> str:
    records = view.evidence(t)
    if not records:
        return ""
    rows = []
    for r in records:
        status = escape(r.status)
        result = status if r.status == "passed" else rf"\textcolor{{bad}}{{\textbf{{{status}}}}}"
        cells = [escape(r.backend), escape(r.dtype), escape(r.device), escape(r.mode), result,
                 f"{r.instances or 0:,}", escape(view.format_ulps(r.max_error_ulps)),
                 escape(view.format_bits(r.max_error_bits)), view.format_seconds(r.seconds)]
        rows.append(" & ".join(cells) + r" \\")
    reasons = [rf"\item {escape(view.configuration(r))} ({escape(r.status)}): {escape(r.reason)}"
               for r in view.explained(records)]
    table = [r"\textbf{Numeric evidence}", "",
             r"\begin{longtable}{lllllrrrr}",
             r"\toprule backend & dtype & device & mode & result & instances & worst ULPs & "
             r"worst bits & time \\ \midrule\endhead", *rows, r"\bottomrule\end{longtable}"]
    ground_truth = view.ground_truth_sentence(t)
    if ground_truth:
        table += ["", escape(ground_truth)]
    if reasons:
        table += [r"\begin{itemize}", *reasons, r"\end{itemize}"]
    return "\n".join(table)


def _counterexamples(t: TheoremResult) -> str:
    blocks = []
    for where, values, replay in view.shown_counterexamples(t):
        blocks += [rf"\textbf{{Counterexample}} ({escape(where)}):", _listing(_as_text(values))]
        if replay:
            blocks += [r"Replay:", _listing(replay)]
    return "\n".join(blocks)


def _as_text(value) -> str:
    if isinstance(value, dict):
        return "\n".join(f"{key}: {_one_line(item)}" for key, item in value.items())
    return _one_line(value)


def _one_line(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _links(t: TheoremResult, fixes: list[TheoremResult], labels: dict[str, str]) -> str:
    lines = [rf"\textbf{{Corrected by}} {_ref(f.name, labels)}: "
             rf"{escape(view.status_phrase(f))}." for f in fixes]
    if t.corrects:
        lines.append(rf"\textbf{{Corrects}} {_ref(t.corrects, labels)}.")
    return "\n\n".join(lines)


def _temperature_pointer(t: TheoremResult, figures: Figures) -> str:
    if not (figures.temperature and view.is_temperature_theorem(t)):
        return ""
    return r"How the weights move with temperature: Figure~\ref{fig:temperature}."


def _errors(report: Report) -> str:
    if not report.errors:
        return ""
    parts = [_unnumbered("Errors")]
    for e in report.errors:
        title = escape(e.path, breakable=True) + (f" ({identifier(e.theorem)})" if e.theorem
                                                  else "")
        parts += [rf"\textbf{{{title}}}", _listing(e.message)]
    return "\n\n".join(parts)

