"""The kernel example of the README and of docs/kernels.md runs as written and is at most 15
lines, and prints the matrix without a warning."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = {"README.md": "## Checking a kernel", "docs/kernels.md": "# Checking a kernel"}


def _example(page: str) -> str:
    section = (REPO / page).read_text(encoding="utf-8").split(PAGES[page] + "\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_shows_the_example_of_the_kernels_page():
    assert _example("README.md") == _example("docs/kernels.md")


def test_the_kernel_example_runs(capsys):
    example = _example("docs/kernels.md")
    assert len(example.strip().splitlines()) <= 15
    with warnings.catch_warnings(record=True) as shown:  # what the reader's terminal would get
        warnings.simplefilter("always")
        exec(compile(example, str(REPO / "docs" / "kernels.md"), "exec"), {})
    assert [f"{w.category.__name__}: {w.message}" for w in shown] == []
    assert "fully masked: returns NaN (**not declared**" in capsys.readouterr().out
