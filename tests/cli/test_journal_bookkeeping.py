"""The journal's bookkeeping, in this process: what a theorem file imported from outside the
environment is recorded file by file; a theorem's key follows those files' bytes and stands on
nothing it cannot read; a run takes over only the journals of ended runs with its key, and a
complete one removes those it has settled every theorem of."""

import sys
import textwrap

import pytest
import sympy

from attnproof import _journal, symbolic
from attnproof._imports import ImportRecorder, outside_file
from attnproof._journal import Journal, theorem_key
from attnproof._sandbox import DeclaredTheorem
from attnproof.report import TheoremResult, TheoremStatus

from . import theorem_files as files

# Imports the helper beside it through sys.path, as a file loaded outside any package must.
IMPORTS_THE_HELPER = """
    import os, sys, wave
    sys.path.insert(0, os.path.dirname(__file__))
    import journal_test_shared
"""


@pytest.fixture
def forgets_its_imports(monkeypatch):
    """sys.path and sys.modules as they were before the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_each_file_records_the_outside_modules_it_imports_even_those_loaded_before(
        tmp_path, forgets_its_imports):
    (tmp_path / "journal_test_shared.py").write_text("from journal_test_inner import VALUE\n")
    (tmp_path / "journal_test_inner.py").write_text("VALUE = 1\n")
    theorem_files = []
    for name in ("first", "second"):
        files.write(tmp_path, f"{name}.py", textwrap.dedent(IMPORTS_THE_HELPER)
                    + textwrap.dedent(files.TRUE), name=name)
        theorem_files.append(tmp_path / f"{name}.py")
    imports = ImportRecorder()
    for path in theorem_files:
        (theorems, errors), imported = imports.loading(
            lambda path=path: symbolic.load_file(path, contained=True))
        assert [t.name for t in theorems] == [path.stem] and not errors
        # the standard library (wave), SymPy and the checker are the run's to key, not these
        assert set(imported) == {str(path.resolve()),
                                 str((tmp_path / "journal_test_shared.py").resolve()),
                                 str((tmp_path / "journal_test_inner.py").resolve())}


def test_only_modules_outside_the_environment_have_a_file_to_key():
    assert outside_file(textwrap) is None  # the standard library
    assert outside_file(sympy) is None  # site-packages
    assert outside_file(_journal) is None
    assert outside_file(sys) is None  # built in: no file


def _declared(tmp_path, *imported, name="doubling"):
    origin = tmp_path / f"{name}.py"
    origin.write_text("# declares it\n")
    return DeclaredTheorem(name=name, source="f, s", expect="holds", corrects=None, note=None,
                           unstable_in=[], denied=False, origin=str(origin),
                           imported_files=tuple(str(path) for path in imported))


def test_a_theorems_key_follows_the_bytes_of_what_its_file_imported(tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text("VALUE = 1\n")
    theorem = _declared(tmp_path, helper)
    before = theorem_key(theorem, 60.0)
    assert before is not None and theorem_key(theorem, 60.0) == before
    helper.write_text("VALUE = 2\n")
    assert theorem_key(theorem, 60.0) not in (None, before)
    helper.unlink()
    assert theorem_key(theorem, 60.0) is None  # nothing stands on a file that cannot be read


def test_a_theorem_whose_imports_are_unknown_has_no_key_and_a_catalog_theorem_has_one(tmp_path):
    files.write(tmp_path, "own.py", files.TRUE, name="own")
    own = symbolic.discover([tmp_path]).by_name()["own"]  # loaded here: imports unrecorded
    assert theorem_key(own, 60.0) is None
    catalog = symbolic.discover([symbolic.CATALOG_DIR / "online_softmax.py"]).theorems[0]
    assert theorem_key(catalog, 60.0) is not None


def _result(name):
    return TheoremResult(name=name, source="f, s", expect="holds", status=TheoremStatus.PROVED,
                         ok=True)


def _journals(tmp_path):
    return sorted(tmp_path.glob("results.journal.*.jsonl"))


def _killed_run_of(tmp_path, theorems, key="k" * 64):
    """A journal holding a result of each of ``theorems``, left as a killed run leaves it."""
    journal = Journal.open(tmp_path / "results.json", key)
    for theorem in theorems:
        journal.recover(theorem, 60.0)
        journal.record(theorem, 60.0, _result(theorem.name))
    journal.close()
    return journal.path


def test_a_complete_run_removes_only_the_journals_it_has_settled_every_theorem_of(tmp_path):
    first, second = _declared(tmp_path, name="first"), _declared(tmp_path, name="second")
    killed = _killed_run_of(tmp_path, [first, second])
    of_first_only = Journal.open(tmp_path / "results.json", "k" * 64)
    assert of_first_only.recover(first, 60.0) == _result("first")
    of_first_only.complete()
    assert _journals(tmp_path) == [killed]  # "second" is still only there

    of_both = Journal.open(tmp_path / "results.json", "k" * 64)
    assert [of_both.recover(t, 60.0) for t in (first, second)] == [_result("first"),
                                                                   _result("second")]
    assert [(run.path, count) for run, count in of_both.recoveries()] == [(killed, 2)]
    of_both.complete()
    assert _journals(tmp_path) == []


def test_a_live_run_and_a_run_with_another_key_keep_their_journals(tmp_path):
    first = _declared(tmp_path, name="first")
    other_key = _killed_run_of(tmp_path, [first], key="o" * 64)
    live = Journal.open(tmp_path / "results.json", "k" * 64)
    live.record(first, 60.0, _result("first"))
    beside = Journal.open(tmp_path / "results.json", "k" * 64)
    assert beside.earlier == [] and beside.recover(first, 60.0) is None
    beside.complete()
    assert _journals(tmp_path) == sorted([other_key, live.path])
    live.close()
    after = Journal.open(tmp_path / "results.json", "k" * 64)
    assert after.recover(first, 60.0) == _result("first")
    after.complete()
    assert _journals(tmp_path) == [other_key]
