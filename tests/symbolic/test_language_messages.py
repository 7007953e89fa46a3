"""Every example of "When a declaration is refused" in docs/LANGUAGE.md is refused, at its
declaration, with the message its first line quotes: the messages that teach stay true."""

import re
from pathlib import Path

import pytest
import sympy as sp

import attnproof
from attnproof.symbolic import TheoremError

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "LANGUAGE.md"
REFUSED = re.compile(r'^# refused: "(?P<message>[^"]+)"\n', re.MULTILINE)


def _examples() -> list[tuple[str, str]]:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## When a declaration is refused", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    return [(REFUSED.match(block)["message"], block) for block in blocks]


def test_the_section_has_examples():
    assert len(_examples()) >= 7


@pytest.mark.parametrize(("message", "code"), _examples(), ids=lambda v: v[:40])
def test_each_documented_refusal_happens_with_its_message(message, code):
    namespace = {"sp": sp, **{name: getattr(attnproof, name) for name in attnproof.__all__}}
    with pytest.raises((TheoremError, TypeError)) as refused:
        exec(compile(code, str(GUIDE), "exec"), namespace)
    assert message in str(refused.value)
