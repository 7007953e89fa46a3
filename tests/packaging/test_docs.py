"""The README and docs/: the README stays short, every relative link resolves (to a file, and to
a heading or an explicit anchor of a Markdown target), and the errata page lists the catalog's
errata with their corrections."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README_LIMIT = 10_240  # bytes
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text (no Markdown), lowercased, without
    punctuation other than hyphens, spaces and underscores, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = INLINE_CODE.sub(lambda m: m[2].strip(), text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\\(.)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a page has: its headings' slugs (a repeated one numbered -1, -2, ... as
    GitHub does) and its explicit ``<a id=...>`` or ``<a name=...>``."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        found.update(ANCHOR.findall(line))
        if m := HEADING.match(line):
            base = slug(m[2])
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    links = []
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        line = INLINE_CODE.sub("code", line)  # a link written in code is no link
        links += [t for t in LINK.findall(line) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]
    return links


def test_the_slug_rule_follows_github():
    assert slug('What "proved" means') == "what-proved-means"
    assert slug("Your own theorems under `pytest -n auto`") == (
        "your-own-theorems-under-pytest--n-auto")
    assert slug("Faults: what happens when something goes wrong") == (
        "faults-what-happens-when-something-goes-wrong")
    assert slug(r"softmax\_jacobian") == "softmax_jacobian"


def test_the_readme_is_at_most_10_kib():
    size = (REPO / "README.md").stat().st_size
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    broken = []
    for link in relative_links(page):
        target, _, anchor = link.partition("#")
        resolved = (page.parent / target).resolve() if target else page
        if not resolved.exists():
            broken.append(f"{link}: no file {resolved.relative_to(REPO)}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{link}: no heading or anchor #{anchor} in {resolved.name}")
    assert not broken, "\n".join(broken)


def test_the_readme_links_every_docs_page():
    linked = {(REPO / link.partition("#")[0]).resolve()
              for link in relative_links(REPO / "README.md")}
    assert set(PAGES[1:]) <= linked


# -- the errata page and the catalog ------------------------------------------------------

ERRATUM = re.compile(r"^\| `(\w+)` .*\| ([^|]*) \|$")


def test_the_errata_page_lists_each_claim_found_false_with_its_corrections(catalog):
    rows = {m[1]: set(re.findall(r"`(\w+)`", m[2]))
            for line in (REPO / "docs" / "errata.md").read_text(encoding="utf-8").splitlines()
            if (m := ERRATUM.match(line))}
    corrections: dict[str, set[str]] = {}
    for theorem in catalog.theorems:
        if theorem.corrects:
            corrections.setdefault(theorem.corrects, set()).add(theorem.name)
    errata = {t.name: corrections.get(t.name, set()) for t in catalog.theorems
              if t.expect == "refuted" and not t.denied}  # a denied statement is no erratum
    assert rows == errata


def test_the_overview_quoted_in_command_line_md_is_the_reference_reports():
    """The quote says it is from reports/reference/summary.md: each of its lines is there, so
    the quote cannot drift from the report it cites (it did: a 195-theorem overview stayed
    quoted after the reference had 214)."""
    lines = (REPO / "docs" / "command-line.md").read_text().splitlines()
    start = lines.index("> | status | meaning | theorems |")
    quoted = []
    for line in lines[start:]:
        if not line.startswith(">"):
            break
        quoted.append(line[2:].replace("](../reports/reference/", "]("))
    reference = set((REPO / "reports" / "reference" / "summary.md").read_text().splitlines())
    assert [line for line in quoted if line and line not in reference] == []
    assert any("theorems**" in line for line in quoted)
