"""Caches: a proof is reused only for the same statement and prover; a changed theorem
invalidates its own entries and nobody else's; a corrupt entry is recomputed; --no-cache and
$ATTNPROOF_NO_CACHE turn every cache off; JAX's compilation cache follows the same switch."""

import json
import re
import shutil
from pathlib import Path

import pytest

from attnproof import _cache, _harness, cli
from attnproof._cache import ProofCache, cached_proof, statement_key
from attnproof.numeric import _compile_cache
from attnproof.symbolic import ProofResult, discover

from . import theorem_files as files

PROVED = ProofResult("proved", "sum normal form (all sizes)", seconds=0.1)


def theorem_from(tmp_path, template, name="doubling", filename="t.py"):
    folder = tmp_path / f"theorems-{name}-{filename}"
    folder.mkdir(exist_ok=True)
    files.write(folder, filename, template, name=name)
    return discover([folder]).by_name()[name]


class Prover:
    """Counts its calls, returning ``record``."""

    def __init__(self, record=PROVED):
        self.record, self.calls = record, 0

    def __call__(self):
        self.calls += 1
        return ProofResult(**self.record.to_json())


def entries(cache_dir, name):
    return sorted((cache_dir / "proofs" / name).glob("*.json"))


def test_the_same_statement_is_proved_once(tmp_path, cache_dir):
    theorem = theorem_from(tmp_path, files.TRUE)
    prover = Prover()
    first = cached_proof(theorem, 60.0, prover)
    again = cached_proof(theorem_from(tmp_path, files.TRUE, filename="copy.py"), 60.0, prover)
    assert first == again == PROVED
    assert prover.calls == 1


def test_the_key_follows_the_statement_and_the_time_limit(tmp_path):
    true, false = theorem_from(tmp_path, files.TRUE), theorem_from(tmp_path, files.FALSE,
                                                                   filename="f.py")
    assert statement_key(true, 60.0) != statement_key(false, 60.0)
    assert statement_key(true, 60.0) != statement_key(true, 5.0)
    assert statement_key(true, 60.0) == statement_key(theorem_from(
        tmp_path, files.TRUE, filename="same.py"), 60.0)


def test_a_changed_theorem_invalidates_its_own_entries_only(tmp_path, cache_dir):
    prover = Prover()
    cached_proof(theorem_from(tmp_path, files.TRUE, name="other"), 60.0, prover)
    cached_proof(theorem_from(tmp_path, files.TRUE), 60.0, prover)
    old = entries(cache_dir, "doubling")
    changed = theorem_from(tmp_path, files.FALSE, filename="changed.py")
    cached_proof(changed, 60.0, prover)
    assert prover.calls == 3
    now = entries(cache_dir, "doubling")
    assert len(now) == 1 and now != old
    assert len(entries(cache_dir, "other")) == 1
    cached_proof(theorem_from(tmp_path, files.TRUE, name="other"), 60.0, prover)
    assert prover.calls == 3  # the other theorem's entry survived


@pytest.mark.parametrize("damage", ["garbage", "tampered value", "wrong key", "empty",
                                    "unknown field"])
def test_a_corrupt_entry_is_recomputed_never_trusted(tmp_path, cache_dir, damage):
    theorem = theorem_from(tmp_path, files.TRUE)
    cached_proof(theorem, 60.0, Prover())
    (path,) = entries(cache_dir, "doubling")
    entry = json.loads(path.read_text())
    if damage == "garbage":
        path.write_bytes(b"\x00{not json")
    elif damage == "tampered value":
        entry["value"]["status"] = "refuted"
        path.write_text(json.dumps(entry))
    elif damage == "unknown field":  # written by another prover version, digest intact
        entry["value"]["extra"] = 1
        entry["digest"] = _cache._digest(entry["value"])
        path.write_text(json.dumps(entry))
    elif damage == "wrong key":
        entry["key"] = "0" * 64
        path.write_text(json.dumps(entry))
    else:
        path.write_text("")
    fresh = Prover(ProofResult("proved", "recomputed"))
    assert cached_proof(theorem, 60.0, fresh).method == "recomputed"
    assert fresh.calls == 1
    assert ProofCache(cache_dir).get("doubling", path.stem)["method"] == "recomputed"


def test_a_timeout_or_an_error_is_not_kept(tmp_path, cache_dir):
    theorem = theorem_from(tmp_path, files.TRUE)
    for status in ("timeout", "error"):
        prover = Prover(ProofResult(status, "no result", seconds=1.0))
        cached_proof(theorem, 60.0, prover)
        cached_proof(theorem, 60.0, prover)
        assert prover.calls == 2
    assert entries(cache_dir, "doubling") == []


def test_no_cache_variable_proves_every_time_and_writes_nothing(tmp_path, cache_dir,
                                                                monkeypatch):
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "1")
    theorem, prover = theorem_from(tmp_path, files.TRUE), Prover()
    cached_proof(theorem, 60.0, prover)
    cached_proof(theorem, 60.0, prover)
    assert prover.calls == 2
    assert not cache_dir.exists()


def test_prove_no_cache_writes_no_cache_and_a_plain_run_does(tmp_path, cache_dir):
    files.write(tmp_path, "t.py", files.TRUE, name="doubling")
    common = ["prove", "--no-catalog", "--theorems", str(tmp_path), "--symbolic-only",
              "--in-process"]
    assert cli.main([*common, "--no-cache", "--out", str(tmp_path / "a")]) == 0
    assert not cache_dir.exists()
    # --no-cache turned caching off for this process; the fixture's setenv restores it after
    assert _compile_cache.cache_directory() is None


def test_a_plain_run_keeps_its_proofs(tmp_path, cache_dir):
    files.write(tmp_path, "t.py", files.TRUE, name="doubling")
    common = ["prove", "--no-catalog", "--theorems", str(tmp_path), "--symbolic-only",
              "--in-process"]
    assert cli.main([*common, "--out", str(tmp_path / "b")]) == 0
    assert len(entries(cache_dir, "doubling")) == 1


def test_the_harness_reuses_the_proofs_prove_stored_and_the_other_way_round(tmp_path,
                                                                          cache_dir,
                                                                          monkeypatch):
    files.write(tmp_path, "t.py", files.TRUE, name="doubling")
    files.write(tmp_path, "u.py", files.TRUE, name="tripling")
    common = ["prove", "--no-catalog", "--theorems", str(tmp_path), "--symbolic-only",
              "--in-process"]
    assert cli.main([*common, "--theorem", "doubling", "--out", str(tmp_path / "a")]) == 0
    found = discover([tmp_path]).by_name()
    harness_prover = Prover(ProofResult("proved", "the harness's own record", seconds=0.1))
    monkeypatch.setattr(_harness, "prove", lambda theorem, limit: harness_prover())
    assert _harness.proof_of(found["doubling"]).status == "proved"
    assert harness_prover.calls == 0  # read back: prove stored it under the same key
    _harness.proof_of(found["tripling"])
    assert harness_prover.calls == 1 and len(entries(cache_dir, "tripling")) == 1
    # and prove reads what the harness stored
    assert cli.main([*common, "--theorem", "tripling", "--out", str(tmp_path / "b")]) == 0
    symbolic = json.loads((tmp_path / "b" / "results.json").read_text())["theorems"][0]
    assert symbolic["symbolic"]["method"].startswith("the harness's own record")


def test_theorems_never_timed_start_first_then_the_slowest(tmp_path, cache_dir):
    names = ("quick", "slow", "new")
    theorems = [theorem_from(tmp_path, files.TRUE, name=n) for n in names]
    _cache.remember_timings({"quick": 1.0, "slow": 9.0})
    assert [t.name for t in _cache.slowest_first(theorems)] == ["new", "slow", "quick"]
    (cache_dir / _cache.TIMINGS_NAME).write_text("[not a mapping")
    assert [t.name for t in _cache.slowest_first(theorems)] == list(names)


class FakeConfig:
    def __init__(self):
        self.values = {}

    def update(self, name, value):
        self.values[name] = value


class FakeJax:
    def __init__(self):
        self.config = FakeConfig()


def test_jax_compilation_cache_lives_in_the_cache_directory(cache_dir):
    jax = FakeJax()
    _compile_cache.configure(jax)
    assert jax.config.values["jax_enable_compilation_cache"] is True
    assert jax.config.values["jax_compilation_cache_dir"] == str(cache_dir / "jax")


def test_with_the_stores_off_jax_keeps_its_compilation_cache(cache_dir, monkeypatch):
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, _compile_cache.STORES_OFF)
    assert _compile_cache.cache_directory() is None  # no stored proof or program
    jax = FakeJax()
    _compile_cache.configure(jax)
    assert jax.config.values["jax_enable_compilation_cache"] is True
    assert jax.config.values["jax_compilation_cache_dir"] == str(cache_dir / "jax")


def test_jax_compilation_cache_is_off_without_caching(cache_dir, monkeypatch):
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "1")
    jax = FakeJax()
    _compile_cache.configure(jax)
    assert jax.config.values == {"jax_enable_compilation_cache": False}


# -- the prover's source is part of the key --------------------------------------------------


@pytest.fixture
def prover_copy(tmp_path, monkeypatch):
    """A copy of the prover's source that the key reads instead of the installed one, so a test
    can edit a prover function the way a developer would."""
    root = Path(_cache._symbolic_root())
    copy = tmp_path / "symbolic"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_cache, "_symbolic_root", lambda: copy)
    forget_digests()
    yield copy
    forget_digests()


def forget_digests():
    for cached in (_cache._core_files, _cache._with_imports, _cache._digest_of_files):
        cached.cache_clear()


def edit_function(path: Path, name: str) -> None:
    """Change the body of function ``name`` in ``path`` (a statement that does nothing)."""
    text = path.read_text()
    header = re.search(rf"^(\s*)def {name}\(.*?\).*?:\n", text, re.MULTILINE | re.DOTALL)
    assert header, f"no function {name} in {path}"
    indent = header.group(1) + "    "
    path.write_text(text[:header.end()] + f"{indent}pass\n" + text[header.end():])


def test_a_changed_prover_function_recomputes_the_proof(prover_copy, cache_dir):
    theorem = discover().by_name()["softmax_jacobian"]
    prover = Prover()
    cached_proof(theorem, 60.0, prover)
    cached_proof(theorem, 60.0, prover)
    assert prover.calls == 1  # unchanged prover: the stored proof is used
    edit_function(prover_copy / "_normal_form.py", "normalize")
    forget_digests()
    cached_proof(theorem, 60.0, prover)
    assert prover.calls == 2  # the prover changed: proved again, not read back


def test_a_changed_kind_recomputes_its_own_theorems_only(prover_copy, cache_dir):
    catalog = discover().by_name()
    identity, cost = catalog["softmax_jacobian"], catalog["standard_attention_memory_quadratic"]
    assert type(cost.claim).__module__.endswith(".kinds.cost")
    provers = {identity.name: Prover(), cost.name: Prover()}
    for theorem in (identity, cost):
        cached_proof(theorem, 60.0, provers[theorem.name])
    edit_function(prover_copy / "kinds" / "cost.py", "as_size")
    forget_digests()
    for theorem in (identity, cost):
        cached_proof(theorem, 60.0, provers[theorem.name])
    assert provers[identity.name].calls == 1  # nothing it is built from changed
    assert provers[cost.name].calls == 2


def test_a_kind_module_imported_by_another_kind_is_part_of_its_key(prover_copy, cache_dir):
    catalog = discover()
    ieee = next(t for t in catalog.theorems if type(t.claim).__module__.endswith(".kinds.ieee"))
    prover = Prover()
    cached_proof(ieee, 60.0, prover)
    # the IEEE kind computes with the shared arithmetic module; the statement never names it
    arithmetic = prover_copy / "kinds" / "_ieee_arithmetic.py"
    arithmetic.write_text(arithmetic.read_text() + "\n# changed\n")
    forget_digests()
    cached_proof(ieee, 60.0, prover)
    assert prover.calls == 2
