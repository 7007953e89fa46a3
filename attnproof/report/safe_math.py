"""Which formulas a report may typeset as math: a small grammar of the LaTeX SymPy prints.

A formula reaches a report from a theorem file (a symbol's ``latex=``) or from a results JSON,
so it is untrusted text. Escaping cannot help here (the formula *is* LaTeX), so it is parsed
instead: only known math macros with their arguments, balanced groups, ``\\left``/``\\right``
pairs, one superscript and one subscript per atom, and matrix environments pass. Anything else
(``\\input``, ``\\write18``, ``\\catcode``, ``^^5c``, ``%``, ``$``, an unbalanced brace,
non-ASCII) is shown as literal text by every renderer. Passing means it cannot read a file or
run a command, and it compiles under pdflatex with amsmath and amssymb.
"""

from __future__ import annotations

import re

# Longer formulas are shown as text: a TeX box that large is unreadable anyway.
MAX_LENGTH = 20_000
MAX_DEPTH = 40
# amsmath's matrices take at most this many columns unless MaxMatrixCols is raised.
MAX_MATRIX_COLUMNS = 10


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SYMBOLS = _words("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi
varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi
Pi Sigma Upsilon Phi Psi Omega partial nabla sum prod int oint lim sup inf max min det log ln exp
sin cos tan tanh sinh cosh arg cdot times div pm mp leq geq neq le ge ne approx equiv sim simeq
propto ell infty to mapsto rightarrow leftarrow Rightarrow Leftarrow circ odot otimes oplus in
notin subset subseteq cup cap forall exists nexists langle rangle lfloor rfloor lceil rceil mid
prime Longrightarrow Longleftarrow implies
ldots cdots dots vdots ddots quad qquad top bot emptyset lbrace rbrace vert Vert
""")
_ONE_ARGUMENT = _words("""
operatorname mathrm mathbf mathit mathcal mathbb mathsf mathtt hat bar tilde vec dot ddot
overline underline widehat widetilde sqrt substack
""")
_TWO_ARGUMENTS = _words("frac dfrac tfrac binom")
_TEXT_ARGUMENT = frozenset({"text", "texttt"})
# \big( … \Bigg|: a size, then a delimiter
_SIZES = _words("big Big bigg Bigg bigl bigr Bigl Bigr")
# control symbols allowed inside a text argument (an underscore in a function's name)
_TEXT_SYMBOLS = frozenset({r"\_"})
_ENVIRONMENTS = _words("matrix pmatrix bmatrix vmatrix Bmatrix smallmatrix cases")
_CONTROL_SYMBOLS = frozenset(",;:! {}|#")
_DELIMITERS = frozenset("()[]|./") | {r"\{", r"\}", r"\|", r"\langle", r"\rangle",
                                      r"\lfloor", r"\rfloor", r"\lceil", r"\rceil", r"\vert",
                                      r"\Vert"}
_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        " +-=()[],.;:!?/*|<>")
_TEXT_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             " +-=(),.;:!?/")
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|.", re.DOTALL)


class _Unsafe(Exception):
    """The formula leaves the grammar."""


def is_safe(latex: str) -> bool:
    """True when ``latex`` is inside the grammar above, so it can be typeset as math."""
    if len(latex) > MAX_LENGTH or not latex.isascii():
        return False
    try:
        parser = _Parser(_TOKEN.findall(latex))
        parser.items(closers=())
        return parser.at_end()
    except _Unsafe:
        return False


class _Parser:
    """Recursive descent over the tokens; each method consumes one construct or raises."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.position, self.depth = tokens, 0, 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise _Unsafe("unexpected end")
        self.position += 1
        return token

    def at_end(self) -> bool:
        return self.position == len(self.tokens)

    def items(self, closers: tuple[str, ...], columns: int = 0) -> None:
        """Atoms with their scripts until a token in ``closers`` (left unconsumed); ``columns``
        > 0 allows rows (``\\\\``) of at most that many cells (``&``), as in a matrix."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Unsafe("nested too deeply")
        column = 1
        while self.peek() is not None and self.peek() not in closers:
            if self.peek() in ("&", r"\\"):
                column = self.alignment(column, columns)
                continue
            self.atom()
            self.scripts()
        self.depth -= 1

    def alignment(self, column: int, columns: int) -> int:
        """The column after an ``&`` or a row end; a row end must not be read as ``\\\\[…]``."""
        token = self.take()
        if token == "&":
            column += 1
            if column > columns:
                raise _Unsafe("more cells than the matrix allows")
            return column
        if columns == 0 or self.next_visible() in ("[", "*"):
            raise _Unsafe("row end")
        return 1

    def next_visible(self) -> str | None:
        ahead = self.position
        while ahead < len(self.tokens) and self.tokens[ahead] == " ":
            ahead += 1
        return self.tokens[ahead] if ahead < len(self.tokens) else None

    def scripts(self) -> None:
        """At most one superscript (primes join it) and one subscript."""
        superscript = subscript = False
        prime_run = False
        while self.peek() in ("^", "_", "'"):
            token = self.take()
            if token == "_":
                if subscript:
                    raise _Unsafe("double subscript")
                subscript, prime_run = True, False
                self.argument()
                continue
            if superscript and not prime_run:
                raise _Unsafe("double superscript")
            superscript, prime_run = True, token == "'"
            if token == "^":
                self.argument()

    def argument(self) -> None:
        """What a script or a macro takes: one character, one symbol, or a group."""
        token = self.take()
        if token == "{":
            self.group_rest()
        elif not (token in _CHARACTERS - {" "} or token[1:] in _SYMBOLS):
            raise _Unsafe(f"bad argument {token!r}")

    def group_rest(self, columns: int = 0) -> None:
        self.items(closers=("}",), columns=columns)
        if self.take() != "}":
            raise _Unsafe("unclosed group")

    def atom(self) -> None:
        token = self.take()
        if token == "{":
            self.group_rest()
        elif token in _CHARACTERS:
            return
        elif token.startswith("\\"):
            self.macro(token[1:])
        else:
            raise _Unsafe(f"character {token!r}")

    def macro(self, name: str) -> None:
        if name in _SYMBOLS or name in _CONTROL_SYMBOLS:
            return
        if name in _ONE_ARGUMENT:
            self.one_argument(name)
        elif name in _TWO_ARGUMENTS:
            self.argument()
            self.argument()
        elif name in _TEXT_ARGUMENT:
            self.text_argument()
        elif name == "left":
            self.delimited()
        elif name in _SIZES:
            self.delimiter()
        elif name == "begin":
            self.environment()
        else:
            raise _Unsafe(f"macro {name!r}")

    def one_argument(self, name: str) -> None:
        if name == "sqrt" and self.peek() == "[":
            self.take()
            self.items(closers=("]",))
            self.take()
        if name == "substack":
            if self.take() != "{":
                raise _Unsafe("substack needs a group")
            self.group_rest(columns=1)
            return
        self.argument()

    def text_argument(self) -> None:
        if self.take() != "{":
            raise _Unsafe("text needs a group")
        while self.peek() in _TEXT_CHARACTERS or self.peek() in _TEXT_SYMBOLS:
            self.take()
        if self.take() != "}":
            raise _Unsafe("text holds only letters, digits and punctuation")

    def delimited(self) -> None:
        """``\\left D … \\middle D … \\right D``."""
        self.delimiter()
        while True:
            self.items(closers=(r"\right", r"\middle"))
            if self.take() == r"\right":
                self.delimiter()
                return
            self.delimiter()

    def delimiter(self) -> None:
        if self.take() not in _DELIMITERS:
            raise _Unsafe("bad delimiter")

    def environment(self) -> None:
        name = self.environment_name()
        self.items(closers=(r"\end",), columns=2 if name == "cases" else MAX_MATRIX_COLUMNS)
        self.take()
        if self.environment_name() != name:
            raise _Unsafe("mismatched environment")

    def environment_name(self) -> str:
        if self.take() != "{":
            raise _Unsafe("environment name")
        spelled: list[str] = []
        while (token := self.take()) != "}" and len(spelled) < 16:
            spelled.append(token)
        name = "".join(spelled)
        if name not in _ENVIRONMENTS:
            raise _Unsafe(f"environment {name!r}")
        return name
