"""The Markdown report is an index with a page per topic: small pages, stable anchors, and links
that resolve, between pages too; the set's pages are written and removed with the set."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path, PurePath, PurePosixPath

import pytest

from attnproof import symbolic
from attnproof.report import document as doc
from attnproof.report import load_results, markdown, view, write_reports
from tests.cli.samples import sample_report

markdown_it = pytest.importorskip("markdown_it")

REPORTS = Path(__file__).parents[2] / "reports" / "reference"  # the committed reference
INDEX_LIMIT = 100_000  # bytes
PAGE_LIMIT = 150_000


@pytest.fixture
def no_figures(monkeypatch):
    """Figures need matplotlib and seconds each; these tests are about the pages."""
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)


def committed_pages() -> dict[str, str]:
    """The committed catalog report's Markdown, by path relative to ``reports/``."""
    paths = [REPORTS / "summary.md", REPORTS / "coverage.md",
             *sorted((REPORTS / "topics").glob("*.md"))]
    return {str(p.relative_to(REPORTS)): p.read_text(encoding="utf-8") for p in paths
            if p.exists()}


def github_slug(text: str) -> str:
    """GitHub's anchor for a heading's text: lower case, punctuation and symbols dropped,
    spaces as hyphens (written here apart from ``view.anchor``, to check it)."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def headings(text: str) -> dict[str, str]:
    """Each heading's anchor on a page (repeats numbered as GitHub does) -> its text."""
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(text)
    seen: Counter = Counter()
    found = {}
    for opening, inline in zip(tokens, tokens[1:], strict=False):
        if opening.type != "heading_open":
            continue
        words = "".join(c.content for c in inline.children or []
                        if c.type in ("text", "code_inline"))
        slug = github_slug(words)
        found[slug if not seen[slug] else f"{slug}-{seen[slug]}"] = words
        seen[slug] += 1
    return found


def links(text: str) -> list[tuple[str, str]]:
    """(target, link text) of every link and image on a page."""
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(text)
    found = []
    for token in tokens:
        children = token.children or []
        for n, child in enumerate(children):
            if child.type == "link_open":
                words = []
                for inner in children[n + 1:]:
                    if inner.type == "link_close":
                        break
                    words.append(inner.content)
                found.append((child.attrGet("href"), "".join(words)))
            elif child.type == "image":
                found.append((child.attrGet("src"), child.content))
    return found


def unresolved(pages: dict[str, str], files_beside=()) -> list[str]:
    """Every relative link of ``pages`` whose file or anchor is missing, or whose anchor is
    not the heading its text names (a theorem's link lands on that theorem's heading)."""
    anchors = {path: headings(text) for path, text in pages.items()}
    broken = []
    for path, text in pages.items():
        for target, words in links(text):
            if re.match(r"^[a-z]+:", target):
                continue  # not relative: none is written, but a note may quote one
            file, _, fragment = target.partition("#")
            resolved = str(PurePosixPath(path).parent / file) if file else path
            resolved = _normalised(resolved)
            if resolved not in pages:
                if resolved not in files_beside:
                    broken.append(f"{path}: {target} (no file {resolved})")
                continue
            if fragment and fragment not in anchors[resolved]:
                broken.append(f"{path}: {target} (no anchor {fragment} in {resolved})")
            elif fragment and words in names_of(pages) and anchors[resolved][fragment] != words:
                broken.append(f"{path}: {target} lands on {anchors[resolved][fragment]!r}")
    return broken


def _normalised(path: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath(path).parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def names_of(pages: dict[str, str]) -> set[str]:
    """The theorem names among the headings of the pages."""
    return {words for path, text in pages.items() if path.startswith("topics/")
            for words in headings(text).values()}


# -- the committed catalog report ----------------------------------------------------------------


def test_the_committed_index_and_each_topic_page_are_small():
    pages = committed_pages()
    assert len(pages["summary.md"].encode()) <= INDEX_LIMIT
    topics = {path: text for path, text in pages.items() if path.startswith("topics/")}
    assert topics
    assert all(len(text.encode()) <= PAGE_LIMIT for text in topics.values()), \
        {path: len(text.encode()) for path, text in topics.items()}


def test_the_committed_report_has_a_page_per_catalog_module_holding_its_theorems():
    report = load_results(REPORTS / "results.json")
    pages = committed_pages()
    modules: dict[str, set[str]] = {}
    for t in report.theorems:
        modules.setdefault(PurePath(t.origin).stem, set()).add(t.name)
    assert {path for path in pages if path.startswith("topics/")} == {
        f"topics/{module}.md" for module in modules}
    for module, names in modules.items():
        shown = headings(pages[f"topics/{module}.md"])
        assert {view.anchor(name) for name in names} <= set(shown)
        assert {shown[view.anchor(name)] for name in names} == names
    index = pages["summary.md"]
    for t in report.theorems:  # the overview row links to the theorem's section
        assert f"](topics/{PurePath(t.origin).stem}.md#{view.anchor(t.name)})" in index


def test_every_relative_link_of_the_committed_markdown_resolves():
    figures = {str(p.relative_to(REPORTS)) for p in (REPORTS / "figures").glob("*")}
    assert unresolved(committed_pages(), figures) == []


def test_a_refuted_claim_and_its_correction_in_another_topic_link_to_each_other():
    pages = committed_pages()
    claim = pages["topics/ieee_values.md"]
    correction = pages["topics/entropy.md"]
    assert "[normalized\\_entropy\\_at\\_most\\_one](entropy.md#normalized_entropy_at_most_one)" \
        in claim
    assert ("[normalized\\_entropy\\_in\\_unit\\_interval]"
            "(ieee_values.md#normalized_entropy_in_unit_interval)") in correction


# -- the renderer --------------------------------------------------------------------------------


def catalog_report():
    """The sample report as if its theorems came from three modules of the catalog."""
    report = sample_report()
    for theorem, module in zip(report.theorems, ("alpha", "beta", "gamma"), strict=True):
        theorem.origin = f"/elsewhere/checkout/theorems/{module}.py"
    report.run["user_theorems"] = []
    return report


def test_a_page_per_topic_with_links_between_them_and_to_the_index():
    pages = markdown.render_pages(catalog_report())
    assert sorted(pages) == ["coverage.md", "summary.md", "topics/alpha.md", "topics/beta.md",
                             "topics/gamma.md"]
    assert unresolved(pages) == []
    assert "[right\\_claim](gamma.md#right_claim)" in pages["topics/beta.md"]
    assert "[wrong\\_claim](beta.md#wrong_claim)" in pages["topics/gamma.md"]
    assert "Part of the [attnproof report](../summary.md)." in pages["topics/alpha.md"]
    assert "| [softmax\\_rows](topics/alpha.md#softmax_rows) |" in pages["summary.md"]
    assert "[alpha](topics/alpha.md) (1)" in pages["summary.md"]
    assert "### " not in pages["summary.md"]  # no theorem's section on the index


def test_a_users_own_theorems_are_one_page_grouped_by_their_file():
    report = sample_report()  # its files are in no catalog
    report.run["user_theorems"] = [t.name for t in report.theorems]
    report.theorems[0].origin = "my_theorems/softmax.py"
    pages = markdown.render_pages(report)
    assert sorted(pages) == ["summary.md", f"topics/{view.USER_TOPIC}.md"]
    page = pages[f"topics/{view.USER_TOPIC}.md"]
    assert page.startswith("# Your theorems\n")
    assert "- `my_theorems/softmax.py`: [softmax\\_rows](#softmax_rows)" in page
    assert "- `t/wrong.py`: [wrong\\_claim](#wrong_claim), [right\\_claim](#right_claim)" in page
    assert unresolved(pages) == []


def test_anchors_are_the_theorem_names_and_no_heading_takes_one():
    report = catalog_report()
    report.theorems[0].name = "alpha"  # the name of its own topic
    report.theorems[2].corrects = None
    pages = markdown.render_pages(report)
    assert headings(pages["topics/alpha.md"])["alpha"] == "alpha"
    assert unresolved(pages) == []


def test_topic_page_names_are_safe_and_distinct_whatever_the_origin():
    report = catalog_report()
    report.theorems[0].origin = "/x/theorems/../a b.py"
    report.theorems[1].origin = "/y/theorems/A_B.py"
    report.theorems[2].origin = "/z/theorems/a-b.py"
    assert [t.key for t in view.topics(report)] == ["a-b", "A_B", "a-b-2"]
    assert unresolved(markdown.render_pages(report)) == []


def test_coverage_is_a_page_of_its_own_linked_from_the_index():
    report = load_results(REPORTS / "results.json")
    pages = markdown.pages(doc.build(report))
    assert "coverage.md" in pages
    assert "On a page of its own: [Coverage of the documents](coverage.md)." in pages["summary.md"]


def test_a_link_to_a_theorem_the_report_lacks_is_its_name_alone():
    report = catalog_report()
    report.theorems.pop(1)  # the refuted claim; its correction still names it
    pages = markdown.render_pages(report)
    assert "**Corrects** wrong\\_claim." in pages["topics/gamma.md"]
    assert unresolved(pages) == []


# -- the report set ------------------------------------------------------------------------------


def test_topic_pages_are_written_with_the_set_and_removed_once_not_produced(tmp_path,
                                                                           no_figures):
    write_reports(catalog_report(), tmp_path)
    assert sorted(p.name for p in (tmp_path / "topics").iterdir()) == [
        "alpha.md", "beta.md", "gamma.md"]
    smaller = catalog_report()
    del smaller.theorems[1:]
    written = write_reports(smaller, tmp_path)
    assert sorted(p.name for p in (tmp_path / "topics").iterdir()) == ["alpha.md"]
    assert tmp_path / "topics" in written.paths
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    empty = catalog_report()
    empty.theorems.clear()
    write_reports(empty, tmp_path)
    assert not (tmp_path / "topics").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.tex", "results.json",
                                                          "summary.md"]


def test_the_written_pages_link_to_each_other(tmp_path, no_figures):
    write_reports(catalog_report(), tmp_path)
    pages = {str(p.relative_to(tmp_path)): p.read_text() for p in tmp_path.rglob("*.md")}
    assert len(pages) == 5 and unresolved(pages) == []


def test_a_theorem_keeps_its_anchor_in_the_one_page_rendering():
    text = markdown.render(catalog_report())
    assert "| [softmax\\_rows](#softmax_rows) |" in text
    assert unresolved({"summary.md": text}) == []


def test_the_catalog_decision_follows_the_run_else_the_file(tmp_path):
    report = sample_report()
    theorem = report.theorems[0]
    assert not view.in_catalog(theorem, report)
    theorem.origin = str(symbolic._catalog.CATALOG_DIR / "softmax_jacobian.py")
    assert view.in_catalog(theorem, report)
    theorem.origin = "/another/machine/theorems/softmax_jacobian.py"
    assert view.in_catalog(theorem, report)  # a checkout elsewhere
    theorem.origin = "/another/machine/theorems/not_a_catalog_module.py"
    assert not view.in_catalog(theorem, report)
    report.run["user_theorems"] = [theorem.name]
    theorem.origin = str(symbolic._catalog.CATALOG_DIR / "softmax_jacobian.py")
    assert not view.in_catalog(theorem, report)  # the run said so


def test_a_signal_while_the_pages_render_names_them_among_what_was_not_rendered(tmp_path,
                                                                                no_figures,
                                                                                monkeypatch):
    import signal

    from attnproof._signals import Stops
    from attnproof.report import writer

    write_reports(catalog_report(), tmp_path)

    def stopped(document):
        stops.received.append(signal.SIGTERM)
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.markdown, "pages", stopped)
    with Stops() as stops:
        written = write_reports(catalog_report(), tmp_path, stops=stops)
        assert written.stopped_by == signal.SIGTERM
    assert written.not_rendered == ["figures", "topics", "coverage.md", "summary.md",
                                    "report.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
