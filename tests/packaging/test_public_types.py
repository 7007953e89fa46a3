"""The package type-checks, and the public API as a user's code uses it: mypy, configured in
pyproject.toml's ``[tool.mypy]``, reads the whole package (``check_untyped_defs``) and
``tests/typing/public_api.py`` (the README's and docs/writing-theorems.md's usage) with 0 errors,
finding every name the usage imports at its definition; and a name
the package does not export is an error, not a silent ``Any`` (the lazy ``__getattr__`` is hidden
from type checkers, ``test_type_exports.py``). Skipped where mypy is not installed (it comes
with the ``dev`` extra)."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")

# a whole-program analysis in a child interpreter: the slow tier
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _mypy(*arguments: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *arguments],
                          cwd=REPO, capture_output=True, text=True, timeout=600)


def test_the_public_api_type_checks(tmp_path):
    completed = _mypy(cache=tmp_path / "cache")  # the files of [tool.mypy]
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "public_api.py" not in completed.stdout
    # and a name nobody exports fails: mypy does see what the packages export, and nothing else
    program = tmp_path / "unknown_names.py"
    program.write_text("from attnproof import Theorem, Theorems\n"
                       "from attnproof.numeric import Device, Devices\n"
                       "from attnproof.report import Report, Reports\n")
    unknown = _mypy(str(program), cache=tmp_path / "cache")
    assert unknown.returncode == 1, unknown.stdout + unknown.stderr
    for module, name in (("attnproof", "Theorems"), ("attnproof.numeric", "Devices"),
                         ("attnproof.report", "Reports")):
        assert f'Module "{module}" has no attribute "{name}"' in unknown.stdout, unknown.stdout
    assert unknown.stdout.count("error:") == 3, unknown.stdout
