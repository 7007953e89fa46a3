"""docs/LANGUAGE.md lists every public name of the statement language, each with an example,
and nothing that is not exported."""

import re
from pathlib import Path

import attnproof

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "LANGUAGE.md"
ROW = re.compile(r"^\| `(\w+)` \| (.+?) \| `(.+)` \|$")


def _rows() -> dict[str, tuple[str, str]]:
    return {m[1]: (m[2], m[3]) for line in REFERENCE.read_text().splitlines()
            if (m := ROW.match(line))}


def test_every_export_is_documented_and_nothing_else():
    exported = set(attnproof.__all__) - {"__version__"}
    assert set(_rows()) == exported


def test_every_entry_has_a_line_and_an_example_that_uses_it_and_runs():
    preamble = REFERENCE.read_text().split("```python\n")[1].split("```")[0]
    namespace: dict = {}
    exec(preamble, namespace)
    for name, (what, example) in _rows().items():
        assert what.strip(), name
        assert re.search(rf"\b{name}\b", example), (name, example)
        exec(example, dict(namespace))
