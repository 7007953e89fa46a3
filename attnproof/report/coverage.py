"""Coverage of the four documents: which of their claims the catalog states and with what
verdict, which claims still wait for a claim kind, and where each numbered equation of the
tutorial went (a theorem, a pending claim, or notation and definitions, with the reason).

Built from the theorem declarations (``Source``) and ``theorems/_pending.py``; the report shows
it with each theorem's status, ``scripts/coverage.py`` writes it to ``docs/coverage.md``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

TUTORIAL_EQUATIONS = range(1, 81)


def equations(text: str) -> set[int]:
    """The equation numbers a place cites: "(12)", and every number of a range "(42)–(43)"."""
    cited = {int(n) for n in re.findall(r"\(([0-9]+)\)", text)}
    for first, last in re.findall(r"\(([0-9]+)\)\s*[–-]\s*\(([0-9]+)\)", text):
        cited |= set(range(int(first), int(last) + 1))
    return cited


def natural_order(text: str) -> tuple:
    """A sort key that puts §2 before §10 and (9) before (10)."""
    parts = re.split(r"([0-9]+)", text)
    return tuple((0, int(p), "") if p[:1] in _DIGITS else (1, 0, p) for p in parts)


_DIGITS = frozenset("0123456789")


@dataclass(frozen=True)
class EquationRow:
    number: int
    theorems: tuple[str, ...]  # names of the theorems that cite it
    pending: tuple[str, ...]  # kinds of the pending claims that cite it
    marked: str  # why it is notation or a definition ("" when it is a claim)


def pending_claims() -> tuple[dict, ...]:
    from attnproof.theorems._pending import PENDING

    return PENDING


def pending_place(entry: dict) -> str:
    """Where a pending claim is written: document title, section and place."""
    from attnproof.symbolic import DOCUMENT_TITLES

    title = DOCUMENT_TITLES.get(entry["file"], entry["file"])
    return f"{title} {entry['section']}, {entry['place']}"


def equation_rows(tutorial_places: dict[str, str]) -> list[EquationRow]:
    """One row per numbered equation of the tutorial; ``tutorial_places`` maps each theorem
    that cites the tutorial to the text of its place (section and equations)."""
    from attnproof.theorems._pending import NOT_CLAIMS

    by_number = defaultdict(list)
    for name, place in tutorial_places.items():
        for number in equations(place):
            by_number[number].append(name)
    pending = defaultdict(list)
    for entry in pending_claims():
        if entry["file"] == _tutorial():
            for number in equations(f"{entry['section']} {entry['place']}"):
                pending[number].append(entry["kind"])
    return [EquationRow(n, tuple(sorted(set(by_number[n]))), tuple(pending[n]),
                        NOT_CLAIMS.get(n, "")) for n in TUTORIAL_EQUATIONS]


def _tutorial() -> str:
    from attnproof.theorems._dims import TUTORIAL

    return TUTORIAL
