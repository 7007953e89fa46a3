"""The command line answers at once: ``--help`` and a misspelt ``--theorem`` load no heavy
module (SymPy, NumPy, JAX, MLX, Hypothesis), and the catalog's names come from an index kept
under the digest of the sources, rebuilt whenever they change or the file is damaged."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from attnproof import _index, _parser
from attnproof.numeric import _compile_cache
from attnproof.report import JSON_NAME, declaration
from attnproof.symbolic import PROOF_TIME_LIMIT, discover

from . import theorem_files as files

DOUBLING = textwrap.dedent(files.TRUE.format(name="doubling", expect="holds"))
HEAVY = ("sympy", "numpy", "jax", "mlx", "hypothesis")
REPO = Path(__file__).resolve().parents[2]


def run_and_list_heavy_modules(argv: list[str]) -> tuple[subprocess.CompletedProcess, list]:
    """``attnproof ARGV`` in a child process; the heavy modules loaded when it ended."""
    code = f"""
import json, sys
from attnproof.cli import main
try:
    code = main({argv!r})
except SystemExit as stop:
    code = stop.code
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
sys.exit(code)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    return done, json.loads(done.stdout.splitlines()[-1])


def test_help_loads_no_heavy_module():
    done, heavy = run_and_list_heavy_modules(["--help"])
    assert done.returncode == 0 and "prove" in done.stdout and "kernels" in done.stdout
    assert heavy == []


def test_a_misspelt_theorem_is_answered_from_the_index_loading_no_heavy_module(cache_dir):
    _index.catalog_index()  # as the first `list` or `prove` leaves it
    done, heavy = run_and_list_heavy_modules(["prove", "--theorem", "softmax_jacobiann"])
    assert done.returncode == 2
    assert "no theorem named 'softmax_jacobiann'; did you mean 'softmax_jacobian'?" in done.stderr
    assert heavy == []


def test_the_help_of_a_command_still_shows_its_options_and_defaults():
    prove = subprocess.run([sys.executable, "-m", "attnproof", "prove", "--help"],
                           capture_output=True, text=True, timeout=300, cwd=REPO)
    assert prove.returncode == 0
    assert f"(default: {PROOF_TIME_LIMIT})" in " ".join(prove.stdout.split())
    kernels = subprocess.run([sys.executable, "-m", "attnproof", "kernels", "--help"],
                             capture_output=True, text=True, timeout=300, cwd=REPO)
    assert kernels.returncode == 0 and "--case-timeout" in kernels.stdout


def test_the_default_results_path_is_the_reports_json():
    assert _parser.DEFAULT_JSON.name == JSON_NAME


# -- the index --------------------------------------------------------------------------------


@pytest.fixture
def small_catalog(tmp_path, monkeypatch, cache_dir):
    """A one-file catalog standing in for theorems/: its folder is the index's source."""
    folder = tmp_path / "theorems"
    folder.mkdir()
    (folder / "doubling.py").write_text(DOUBLING)
    loads = []

    def load():
        loads.append(1)
        return discover([folder])

    monkeypatch.setattr(_index, "SOURCES", (folder,))
    monkeypatch.setattr(_index, "load_catalog", load)
    return folder, loads


def test_the_index_is_built_once_and_then_read(small_catalog):
    _, loads = small_catalog
    first = _index.catalog_index()
    assert first.names() == ["doubling"] and first.theorems[0]["expect"] == "holds"
    assert _index.catalog_index() == first and len(loads) == 1


def test_a_changed_theorem_file_makes_the_index_stale_and_it_is_rebuilt(small_catalog):
    folder, loads = small_catalog
    _index.catalog_index()
    (folder / "doubling.py").write_text(DOUBLING.replace('"doubling"', '"tripling"'))
    assert _index.read_index() is None  # stale: never trusted
    assert _index.catalog_index().names() == ["tripling"] and len(loads) == 2
    assert _index.read_index().names() == ["tripling"]


def test_a_corrupt_index_is_ignored_removed_and_rebuilt(small_catalog, cache_dir):
    _, loads = small_catalog
    _index.catalog_index()
    path = cache_dir / _index.INDEX_NAME
    path.write_bytes(b"\x00{ not json")
    assert _index.read_index() is None and not path.exists()
    assert _index.catalog_index().names() == ["doubling"] and len(loads) == 2


def test_an_index_edited_by_hand_does_not_match_its_digest_and_is_rebuilt(small_catalog,
                                                                         cache_dir):
    _, loads = small_catalog
    _index.catalog_index()
    path = cache_dir / _index.INDEX_NAME
    stored = json.loads(path.read_text())
    stored["content"]["theorems"][0]["name"] = "forged"
    path.write_text(json.dumps(stored))
    assert _index.catalog_index().names() == ["doubling"] and len(loads) == 2


def test_with_the_caches_off_there_is_no_index(small_catalog, monkeypatch):
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "1")
    _, loads = small_catalog
    assert _index.read_index() is None
    assert _index.catalog_index().names() == ["doubling"]
    assert _index.read_index() is None and len(loads) == 1


# -- one catalog theorem, one file ------------------------------------------------------------


@pytest.fixture
def loaded_files(monkeypatch):
    """The paths each ``symbolic.discover`` call of the test is given, in order."""
    from attnproof import symbolic

    calls, real = [], symbolic.discover

    def recording(directories=(symbolic.CATALOG_DIR,), **keywords):
        calls.append([Path(d) for d in directories])
        return real(directories, **keywords)

    monkeypatch.setattr(symbolic, "discover", recording)
    return calls


def test_a_named_catalog_theorem_loads_only_the_file_that_declares_it(cache_dir, loaded_files):
    whole = _index.load_catalog()
    _index.remember(whole)
    loaded_files.clear()
    reduced = _index.catalog_declaring(["softmax_shift_invariance", "softmax_jacobian"])
    declaring = sorted({Path(t.origin) for t in whole.theorems
                        if t.name in ("softmax_shift_invariance", "softmax_jacobian")})
    assert loaded_files == [declaring] and len(declaring) < len(list(Path(
        whole.theorems[0].origin).parent.glob("*.py")))
    by_name = whole.by_name()
    for theorem in reduced.theorems:  # the same theorem, from the same file, as a whole load's
        assert declaration(theorem) == declaration(by_name[theorem.name])
    assert {"softmax_shift_invariance", "softmax_jacobian"} <= set(reduced.by_name())
    assert reduced.errors == whole.errors


def test_without_an_index_that_matches_the_sources_the_whole_catalog_is_loaded(cache_dir,
                                                                               monkeypatch):
    assert _index.catalog_declaring(["softmax_shift_invariance"]) is None  # no index yet
    _index.remember(_index.load_catalog())
    assert _index.catalog_declaring(["no_such_theorem"]) is None  # the caller's usage error
    monkeypatch.setattr(_index, "sources_digest", lambda: "sources changed since")
    assert _index.catalog_declaring(["softmax_shift_invariance"]) is None


def test_a_one_theorem_run_keeps_the_index_of_the_whole_catalog(cache_dir, tmp_path,
                                                                loaded_files):
    from attnproof.cli import main

    _index.remember(_index.load_catalog())
    names = _index.read_index().names()
    loaded_files.clear()
    code = main(["prove", "--theorem", "softmax_shift_invariance", "--symbolic-only",
                 "--out", str(tmp_path / "out")])
    assert code == 0 and len(loaded_files) == 1 and len(loaded_files[0]) == 1
    assert _index.read_index().names() == names  # not the one file's theorems
    result = json.loads((tmp_path / "out" / JSON_NAME).read_text())
    assert [t["name"] for t in result["theorems"]] == ["softmax_shift_invariance"]
