"""One import root: the wheel installs ``attnproof`` only, and nothing a user keeps in their
working directory or on ``sys.path`` (``theorems/``, ``symbolic.py``, ``numeric/``) changes
what is discovered."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import attnproof

# builds a wheel and starts interpreters: the slow tier
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_has_one_top_level_import_name(tmp_path):
    pytest.importorskip("hatchling", reason="building the wheel offline needs hatchling")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(REPO)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("attnproof-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top_level == {"attnproof"}
    for module in ("symbolic/__init__.py", "numeric/__init__.py", "theorems/softmax_jacobian.py",
                   "theorems/_dims.py", "_harness.py", "pytest_plugin.py",
                   "report/__init__.py", "report/results.schema.json",
                   "kernels/conformance.schema.json", "py.typed"):
        assert f"attnproof/{module}" in names


def test_a_users_own_packages_named_like_ours_change_nothing(tmp_path):
    (tmp_path / "theorems").mkdir()
    (tmp_path / "theorems" / "__init__.py").write_text("raise ImportError('user theorems')\n")
    (tmp_path / "theorems" / "_dims.py").write_text("raise ImportError('user _dims')\n")
    (tmp_path / "symbolic.py").write_text("raise ImportError('user symbolic')\n")
    (tmp_path / "numeric").mkdir()
    (tmp_path / "numeric" / "__init__.py").write_text("raise ImportError('user numeric')\n")
    code = ("import attnproof.symbolic as s, attnproof.numeric; c = s.discover(); "
            "print(len(c.theorems), len(c.errors))")
    env = {"PYTHONPATH": str(tmp_path), "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True)
    expected = attnproof.discover()
    assert out.stdout.split() == [str(len(expected.theorems)), "0"]
    assert len(expected.theorems) >= 45


def test_the_language_is_re_exported_from_the_root():
    import attnproof.symbolic as language

    assert set(language.__all__) <= set(attnproof.__all__)
    assert all(getattr(attnproof, name) is getattr(language, name) for name in language.__all__)
