"""The README's example of each claim kind runs, and its theorem gets the verdict it expects."""

import re
from pathlib import Path

import pytest

from attnproof.symbolic import Theorem, prove

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text()
    return text.split("### Claim kinds", 1)[1].split("\n### ", 1)[0]


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", _section(), flags=re.S)


def test_every_kind_has_an_example():
    assert "<!-- kind:" not in _section(), "a claim kind still lacks its README example"


@pytest.mark.parametrize("source", _examples(), ids=lambda s: s.split("\n", 1)[0][:40])
def test_each_example_declares_a_theorem_that_gets_its_expected_verdict(source):
    namespace: dict = {}
    exec(compile(source, "README.md (claim kinds)", "exec"), namespace)
    theorems = [v for v in namespace.values() if isinstance(v, Theorem)]
    assert theorems, "the example declares no theorem"
    for theorem in theorems:
        status = prove(theorem).status
        if theorem.expect == "refuted":
            assert status == "refuted", (theorem.name, status)
        else:
            assert status not in ("refuted", "error", "timeout"), (theorem.name, status)
