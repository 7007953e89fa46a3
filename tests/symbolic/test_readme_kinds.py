"""The example of each claim kind in docs/writing-theorems.md runs, and its theorem gets the
verdict it expects; so does the README's theorem, the first example of that page."""

import re
from pathlib import Path

import pytest

from attnproof.symbolic import Theorem, prove

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "writing-theorems.md"


def _section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    return text.split("\n## Claim kinds\n", 1)[1].split("\n## ", 1)[0]


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", _section(), flags=re.S)


def _first_example(path: Path) -> str:
    return re.search(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S).group(1)


def _theorems(source: str, where: str) -> list[Theorem]:
    namespace: dict = {}
    exec(compile(source, where, "exec"), namespace)
    return [v for v in namespace.values() if isinstance(v, Theorem)]


def test_every_kind_has_an_example():
    assert "<!-- kind:" not in _section(), "a claim kind still lacks its example"


@pytest.mark.parametrize("source", _examples(), ids=lambda s: s.split("\n", 1)[0][:40])
def test_each_example_declares_a_theorem_that_gets_its_expected_verdict(source):
    theorems = _theorems(source, "docs/writing-theorems.md (claim kinds)")
    assert theorems, "the example declares no theorem"
    for theorem in theorems:
        status = prove(theorem).status
        if theorem.expect == "refuted":
            assert status == "refuted", (theorem.name, status)
        else:
            assert status not in ("refuted", "error", "timeout"), (theorem.name, status)


def test_the_readme_theorem_is_the_guides_first_example_and_is_proved_for_all_sizes():
    source = _first_example(REPO / "README.md")
    assert source == _first_example(GUIDE)
    (theorem,) = _theorems(source, "README.md")
    result = prove(theorem)
    assert (result.status, result.method) == ("proved", "sum normal form (all sizes)")
