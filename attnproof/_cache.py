"""Proof results kept across runs, in a user cache directory outside the repository.

A symbolic proof is a deterministic function of the statement and the prover, so its result is
stored under a key made of both: the statement (the ``srepr`` of the claim, its lemmas, its
definitions and its inputs with their domains), the proof time limit, and the prover's version
(a digest of the source that can decide the statement, and SymPy's version: see
``prover_version``). A changed theorem gets a new key, and storing it removes that theorem's
other entries, and nobody else's. An entry that
cannot be read, or whose digest does not match its content, is deleted and recomputed: it is
never trusted. Time-outs and prover errors are not stored: they say nothing lasting.

``$ATTNPROOF_CACHE_DIR`` chooses the directory (default ``$XDG_CACHE_HOME/attnproof``, else
``~/.cache/attnproof``); ``$ATTNPROOF_NO_CACHE=1`` or ``attnproof prove --no-cache`` turns
every cache off.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sympy as sp

from .numeric import cache_directory, cache_folder_name, write_atomically
from .symbolic import ProofResult

if TYPE_CHECKING:
    from .report import Report
    from .symbolic import Theorem

# statuses worth keeping: the others (timeout, error) depend on the machine or on a bug
LASTING_STATUSES = ("proved", "proved-bounded", "refuted", "not-proved", "lemmas-proved")


# -- keys -----------------------------------------------------------------------------------------


def prover_version(theorem: Theorem) -> str:
    """A digest of the prover source that can decide ``theorem``, and of SymPy's version.

    That source is the prover's core (every module of ``symbolic`` outside ``kinds/``) and the
    claim-kind modules the statement is built from: its claim's kind, the kinds of its facts
    and of the functions in its expressions, and the kind modules those import. Any change to
    one of them is a new prover whose results are not the old one's; a change to another kind's
    module leaves this theorem's stored proof in place."""
    return _digest_of_files(_core_files() + _kind_files(theorem))


def _symbolic_root() -> Path:
    from attnproof import symbolic

    return Path(symbolic.__file__).resolve().parent


@functools.cache
def _core_files() -> tuple[Path, ...]:
    kinds = _symbolic_root() / "kinds"
    return tuple(path for path in sorted(_symbolic_root().rglob("*.py"))
                 if path.parent != kinds or path.name == "__init__.py")


def _kind_files(theorem: Theorem) -> tuple[Path, ...]:
    kinds = _symbolic_root() / "kinds"
    statement = [theorem.claim, theorem.lemmas, theorem.definitions, theorem.inputs,
                 theorem.given]
    named = {module.rpartition(".")[2] for module in _modules_in(statement)
             if isinstance(module, str) and module.startswith(KINDS_PACKAGE)}
    return tuple(sorted(_with_imports(kinds, frozenset(named))))


KINDS_PACKAGE = "attnproof.symbolic.kinds."


def _modules_in(value: object, seen: set[int] | None = None) -> set[str]:
    """The modules defining the types of ``value`` and of everything inside it: dataclass
    fields, sequences, mappings and every node of a SymPy expression."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return set()
    seen.add(id(value))
    found = {type(value).__module__}
    if isinstance(value, sp.Basic):
        return found | {type(node).__module__ for node in sp.preorder_traversal(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = list(value)
    elif isinstance(value, dict):
        parts = list(value.values())
    else:
        parts = []
    for part in parts:
        found |= _modules_in(part, seen)
    return found


@functools.cache
def _with_imports(kinds: Path, names: frozenset[str]) -> set[Path]:
    """The kind modules ``names`` and, transitively, the sibling modules each imports."""
    files, pending = set(), list(names)
    while pending:
        path = kinds / f"{pending.pop()}.py"
        if path in files or not path.exists():
            continue
        files.add(path)
        pending.extend(_sibling_imports(path))
    return files


def _sibling_imports(path: Path) -> list[str]:
    """Modules of the same folder that ``path`` imports (``from . import x``, ``from .x ...``)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names += [node.module] if node.module else [alias.name for alias in node.names]
    return names


@functools.cache
def _digest_of_files(paths: tuple[Path, ...]) -> str:
    root = _symbolic_root()
    digest = hashlib.sha256(f"sympy {sp.__version__}".encode())
    for path in paths:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def statement_key(theorem: Theorem, time_limit: float) -> str:
    """The key of a proof: the statement as SymPy sees it, the time limit, the prover."""
    parts = [
        canonical(theorem.claim),
        canonical(theorem.lemmas),
        canonical(theorem.definitions),
        canonical(theorem.inputs),
        canonical(theorem.given),
        # the prover never runs a hook or an implementation, but whether there is one decides
        # what it may conclude (a hook is an assumption; code is never proved)
        f"hook {theorem.at is not None}, implementation {theorem.implementation is not None}",
        f"time limit {time_limit!r}",
        prover_version(theorem),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def canonical(value: object) -> str:
    """A text that changes whenever ``value`` does: ``srepr`` for SymPy objects, field by field
    for dataclasses (domains, dimensions, inputs, definitions, claims)."""
    if isinstance(value, sp.Basic):
        return sp.srepr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(f"{f.name}={canonical(getattr(value, f.name))}"
                           for f in dataclasses.fields(value))
        return f"{type(value).__name__}({fields})"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(canonical(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {canonical(v)}" for k, v in sorted(value.items())) + "}"
    if callable(value):
        return f"<callable {getattr(value, '__qualname__', type(value).__name__)}>"
    return repr(value)


# -- the store ------------------------------------------------------------------------------------


class ProofCache:
    """Proof results as JSON files ``proofs/<theorem>/<key>.json``, each with its digest."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root) / "proofs"

    def get(self, name: str, key: str) -> dict | None:
        path = self._path(name, key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry["key"] == key and entry["digest"] == _digest(entry["value"]):
                return entry["value"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        with contextlib.suppress(OSError):  # unreadable or tampered: recompute, never trust
            path.unlink()
        return None

    def put(self, name: str, key: str, value: dict) -> None:
        """Store ``value``, replacing every other entry of theorem ``name``."""
        folder = self._path(name, key).parent
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            folder.mkdir(parents=True, exist_ok=True)
            for stale in folder.glob("*.json"):
                if stale.stem != key:
                    stale.unlink()
            entry = {"key": key, "digest": _digest(value), "value": value}
            write_atomically(self._path(name, key), json.dumps(entry))

    def _path(self, name: str, key: str) -> Path:
        return self.root / cache_folder_name(name) / f"{key}.json"


def _digest(value: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def cached_proof(theorem: Theorem, time_limit: float,
                 prove: Callable[[], ProofResult]) -> ProofResult:
    """The prover's result for ``theorem``: from the cache when its statement and the prover are
    unchanged, else computed by ``prove()`` (and stored if its status lasts). What is stored is
    the prover's own record, so a change in how results are reported never meets an old entry."""
    directory = cache_directory()
    if directory is None:
        return prove()
    store, key = ProofCache(directory), statement_key(theorem, time_limit)
    found = store.get(theorem.name, key)
    if found is not None:
        with contextlib.suppress(TypeError):  # fields the prover no longer has: recompute
            return ProofResult(**found)
    result = prove()
    if result.status in LASTING_STATUSES:
        store.put(theorem.name, key, result.to_json())
    return result


# -- how long each theorem took, to start the slowest first -------------------------------------

TIMINGS_NAME = "timings.json"


def slowest_first(theorems: list) -> list:
    """``theorems`` ordered by the time each took in the last run, slowest first (theorems never
    timed first of all), so that no long theorem starts last and runs alone at the end."""
    known = last_timings()
    return sorted(theorems, key=lambda t: -known.get(t.name, float("inf")))


def last_timings() -> dict[str, float]:
    """The seconds each theorem took when it last ran (none with the caches off)."""
    directory = cache_directory()
    return _read_timings(directory / TIMINGS_NAME) if directory else {}


def remember_timings(seconds: dict[str, float]) -> None:
    """Merge this run's seconds per theorem into the stored ones."""
    directory = cache_directory()
    if directory is None or not seconds:
        return
    path = directory / TIMINGS_NAME
    merged = {**_read_timings(path), **seconds}
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(merged, sort_keys=True))


def _read_timings(path: Path) -> dict[str, float]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: float(v) for k, v in found.items() if isinstance(v, (int, float))}


# -- results files already found valid, so that list and show need not check them again --------

VALID_RESULTS_NAME = "valid-results.json"
# digests kept: every run under reports/ and some past ones
KEPT_VALID = 64


class ValidResults:
    """The digests (``results_digest``: the schema's and the text's together) of the results
    files found valid so far. A file is checked against the schema once for its bytes; the
    same bytes read again are not checked again. Nothing else is trusted: a changed file or
    schema has another digest and is checked, and a memo that cannot be read is empty."""

    def __init__(self) -> None:
        directory = cache_directory()
        self._path = directory / VALID_RESULTS_NAME if directory else None
        self._known = self._read()
        self._added = False

    def load(self, path: Path) -> Report:
        """``load_results(path)``, checked unless its bytes were valid before."""
        from .report import load_results

        seen: list[str] = []  # the file's digest, as load_results computed it

        def valid_before(digest: str) -> bool:
            seen.append(digest)
            return digest in self._known

        report = load_results(path, valid_before=valid_before)
        if seen[0] not in self._known:  # valid: load_results raises otherwise
            self._known[seen[0]] = None
            self._added = True
        return report

    def save(self) -> None:
        if self._path is None or not self._added:
            return
        newest = list(self._known)[-KEPT_VALID:]
        with contextlib.suppress(OSError):
            self._path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self._path, json.dumps(newest))

    def _read(self) -> dict[str, None]:
        if self._path is None:
            return {}
        try:
            found = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(found, list):
            return {}
        return dict.fromkeys(d for d in found if isinstance(d, str))
