"""The README's kernel example runs as written and is at most 15 lines."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    section = README.read_text(encoding="utf-8").split("## Checking a kernel", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_kernel_example_runs(capsys):
    example = _example()
    assert len(example.strip().splitlines()) <= 15
    exec(compile(example, str(README), "exec"), {})
    assert "fully masked: returns NaN (**not declared**" in capsys.readouterr().out
