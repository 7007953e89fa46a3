"""The feature examples of docs/kernels.md (sinks, packed sequences by offsets and by segment
ids, paged caches) run as written and print what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "kernels.md"
# the section of each example, and what its last line must print
SECTIONS = {"## Sinks and sliding windows": "[('sinks', 'conforms'), ('sliding_window', 'n/a')]",
            "## Packed sequences": "[('forward', 'conforms'), ('packed_sequences', 'conforms')]",
            "## Packed sequences by segment ids":
                "[('forward', 'conforms'), ('packed_sequences', 'conforms')]",
            "## Paged KV caches": "[('forward', 'conforms'), ('paged_kv', 'conforms')]"}


def _example(heading: str) -> str:
    section = PAGE.read_text(encoding="utf-8").split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize("heading", sorted(SECTIONS))
def test_the_feature_example_runs_and_prints_what_it_says(heading, capsys):
    exec(compile(_example(heading), f"{PAGE} {heading}", "exec"), {})
    assert capsys.readouterr().out.strip() == SECTIONS[heading]
