"""Each finished theorem on disk at once, so that a killed run loses none of them.

``attnproof prove`` writes its results only at the end. A run stopped by Ctrl-C or SIGTERM
still writes what it finished, but SIGKILL (the kernel's out-of-memory killer, a CI job's hard
timeout) gives it no chance. So every theorem's result is also appended, as it finishes, to the
run's own journal beside the results file (``results.journal.<key prefix>-<pid>-<token>.jsonl``,
one JSON object per line; the first names the run: its key, pid, host and start).

Every run writes a journal of its own, so runs that write one results file, at once or one
after another, never write over or remove each other's. A run holds a lock on its journal
while it lives (``flock``, which the kernel drops when the process ends, by SIGKILL too): that
is how a later run tells a journal left by a run that ended from one still being written. A run
recovers from every journal that a run with the same key (options, checker, libraries) left
unfinished each theorem whose result still stands, instead of checking it again, and says from
which journal and run; it leaves alone the journal of a run still live, and of a run with other
options. A complete run removes its own journal once its results are written, and each journal
it recovered from whose every theorem it has now checked or recovered (its results supersede
that journal's); after any other ending its journal stays for the next run. A journal of a run
with other options stays until a run with those options completes: whether they will be used
again cannot be told.

A recorded result stands only while nothing that could change it has changed: the run's
options, the checker's own source, Python's version and the version of every distribution
installed (the run's key, in the journal's first line), and the theorem's statement, the file
that declares it and every module that file imported from outside the installed environment
as it loaded (``_imports``: a module beside it imported through ``sys.path``, a library on
``PYTHONPATH``; not one imported only later, while the theorem is checked): the theorem's key,
on its line. A result that depends on a file that can no longer be read does not stand. A
theorem of one's own loaded in this process (``--in-process``) is not journaled: what its file
imported is not known. A line cut short by the kill, or whose digest does not match, is
ignored. A theorem whose worker died or overran its time is not journaled: the next run tries
it again.

Lines are written with one ``write`` each and flushed: the kernel keeps what a killed process
wrote, so no ``fsync`` is needed against a kill (only against a power cut, which would cost
a disk flush per theorem to guard).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import secrets
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from ._cache import _with_imports, statement_key
from ._imports import checker_roots
from .report import TheoremResult, now_iso
from .symbolic import CATALOG_DIR

if TYPE_CHECKING:
    from ._sandbox import DeclaredTheorem
    from .symbolic import Theorem

    # a theorem of the catalog loaded here, or one of a user's file loaded in a worker
    AnyTheorem = Theorem | DeclaredTheorem

# 2: one journal per run, each theorem keyed by the modules its file imported
JOURNAL_VERSION = 2
Entries = dict[str, tuple[str, TheoremResult]]  # theorem: (its key, its result)


@dataclass(eq=False)
class EarlierRun:
    """The journal of a run with this run's key that ended unfinished, locked by this run from
    the moment it is read until this run ends, so that no other run takes it over meanwhile."""

    path: Path
    header: dict
    entries: Entries
    handle: IO  # holds the lock

    def who(self) -> str:
        """The run, in words: its pid, host and start."""
        return (f"pid {self.header.get('pid')} on {self.header.get('host')}, started "
                f"{self.header.get('started')}")

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()


@dataclass
class Journal:
    """This run's journal (``path``, None where it could not be written) for a run whose key
    is ``run_key``; the earlier runs it recovers from, and which theorem came from which."""

    run_key: str
    path: Path | None = None
    earlier: list[EarlierRun] = field(default_factory=list)
    recovered_from: dict[str, EarlierRun] = field(default_factory=dict)
    _file: IO | None = None
    _asked: set[str] = field(default_factory=set)
    _keys: dict[tuple[str, float], str | None] = field(default_factory=dict)
    _digests: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def open(cls, results: Path, run_key: str, recover: bool = True) -> Journal:
        """A new journal beside ``results``, after taking over the journals that runs with
        the same key left unfinished there (unless ``recover`` is false)."""
        journal = cls(run_key)
        results = Path(results)
        if recover:
            journal.earlier = _unfinished_runs(results, run_key)
        journal._start(results)
        return journal

    def recover(self, theorem: AnyTheorem, time_limit: float) -> TheoremResult | None:
        """``theorem``'s recorded result, if it still stands (the newest earlier run's first).

        Every theorem asked about is one this run settles: once it completes, its own result
        supersedes what any earlier run recorded of it."""
        self._asked.add(theorem.name)
        key = self._key(theorem, time_limit)
        if key is None:
            return None
        for run in self.earlier:
            found = run.entries.get(theorem.name)
            if found is not None and found[0] == key:
                self.recovered_from[theorem.name] = run
                return found[1]
        return None

    def recoveries(self) -> list[tuple[EarlierRun, int]]:
        """Each earlier run this one recovered theorems from, and how many."""
        runs = list(self.recovered_from.values())
        return [(run, runs.count(run)) for run in self.earlier if run in runs]

    def record(self, theorem: AnyTheorem, time_limit: float, result: TheoremResult) -> None:
        """Append ``result``; a journal that cannot be written costs only its protection, and a
        theorem that cannot be keyed is not recorded (nothing could tell its result stands)."""
        key = self._key(theorem, time_limit)
        if key is not None:
            self._append(_line(theorem.name, key, result))

    def complete(self) -> None:
        """The run's results are written: remove this journal, and each earlier one whose
        every theorem this run has settled; the others stay for a run that needs them."""
        self._close_own()
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
        for run in self.earlier:
            if run.entries.keys() <= self._asked:
                with contextlib.suppress(OSError):
                    run.path.unlink()
        self._release_earlier()

    def close(self) -> None:
        """Leave every journal where it is, unlocked: this run's for the next one."""
        self._close_own()
        self._release_earlier()

    def _key(self, theorem: AnyTheorem, time_limit: float) -> str | None:
        """``theorem``'s key, taken once, when the run asks for its recorded result: a file
        edited while the run checks it keys the result by its former bytes, so the next run
        checks it again rather than trust a result of code it may not have run."""
        memo = (theorem.name, time_limit)
        if memo not in self._keys:
            self._keys[memo] = theorem_key(theorem, time_limit, self._file_digest)
        return self._keys[memo]

    def _file_digest(self, path: str) -> str | None:
        """A file's digest, read once a run: the theorems of one file share its imports."""
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def _start(self, results: Path) -> None:
        """Create this run's journal and lock it before its header names the run: until then
        no run with this key can take it for an unfinished one."""
        name = f"{results.stem}.journal.{self.run_key[:12]}-{os.getpid()}-{secrets.token_hex(4)}"
        path = results.with_name(name + ".jsonl")
        header = {"attnproof_journal": JOURNAL_VERSION, "run": self.run_key,
                  "pid": os.getpid(), "host": socket.gethostname(), "started": now_iso()}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(path, "x", encoding="utf-8")  # noqa: SIM115 (kept open, and locked)
        except OSError:
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.write(json.dumps(header) + "\n")
            handle.flush()
        except OSError:  # unlocked, it would look unfinished to the next run: no journal
            handle.close()
            with contextlib.suppress(OSError):
                path.unlink()
            return
        self.path, self._file = path, handle

    def _append(self, line: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(line + "\n")
            self._file.flush()
        except OSError:
            self._close_own()

    def _close_own(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def _release_earlier(self) -> None:
        for run in self.earlier:
            run.release()


def run_key(options: dict) -> str:
    """The key of a run: its options, the checker's source, Python's version and the version
    of every distribution installed (any of them may be what a theorem file imports)."""
    digest = hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode())
    digest.update(_source_digest().encode())
    digest.update(f"\npython {sys.version}".encode())
    for distribution in _installed_distributions():
        digest.update(f"\n{distribution}".encode())
    return digest.hexdigest()


def file_digest(path: str) -> str | None:
    """The digest of a file's bytes, None where it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def theorem_key(theorem: AnyTheorem, time_limit: float,
                digest_of: Callable[[str], str | None] = file_digest) -> str | None:
    """The key of one theorem's result, or None where nothing could tell that it stands.

    It covers the theorem's name, its file and the time limit; where the run holds the
    theorem itself (the catalog's, loaded in this process), its statement as the proof cache
    keys it; and the bytes of every file its code came from (``_files_behind``), each read
    with ``digest_of`` (default ``file_digest``): a file that can no longer be read keys
    nothing.
    """
    files = _files_behind(theorem)
    if files is None:
        return None
    digest = hashlib.sha256(f"{theorem.name}\n{theorem.origin}\n{time_limit!r}\n".encode())
    if hasattr(theorem, "claim"):
        # a statement of its own: a Theorem, which mypy's hasattr does not narrow the union to
        digest.update(statement_key(cast("Theorem", theorem), time_limit).encode())
    for path in files:
        content = digest_of(path)
        if content is None:
            return None
        digest.update(f"{path}\0{content}\n".encode())
    return digest.hexdigest()


def _files_behind(theorem: AnyTheorem) -> list[str] | None:
    """The files that hold ``theorem``'s statement and code: its own file and what that
    imported as it loaded in a worker (``_sandbox``); for the catalog's, its file and the
    modules of its folder it imports (``from . import ...``, the only way it imports any).
    None for a theorem of one's own loaded in this process: what its file imported is
    unknown."""
    imported = getattr(theorem, "imported_files", None)
    if imported is not None:
        return sorted({str(theorem.origin), *imported})
    if Path(theorem.origin).resolve().parent == CATALOG_DIR:
        return _catalog_files(theorem.origin)
    return None


def _catalog_files(origin: str) -> list[str] | None:
    path = Path(origin)
    try:
        return sorted(str(p) for p in _with_imports(path.parent, frozenset([path.stem])))
    except (OSError, SyntaxError, ValueError):  # unreadable now
        return None


def _source_digest() -> str:
    """A digest of every source file of the checker (``attnproof``, ``numeric``, ``symbolic``)."""
    digest = hashlib.sha256()
    for root in checker_roots():
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _installed_distributions() -> list[str]:
    return sorted({f"{d.metadata['Name']} {d.version}" for d in metadata.distributions()})


def _unfinished_runs(results: Path, run_key: str) -> list[EarlierRun]:
    """The journals beside ``results`` of runs with ``run_key`` that have ended, each taken
    over (locked), the newest first."""
    pattern = f"{glob.escape(results.stem)}.journal.{run_key[:12]}-*.jsonl"
    runs = [run for path in sorted(results.parent.glob(pattern))
            if (run := _take_over(path, run_key)) is not None]
    return sorted(runs, key=lambda run: str(run.header.get("started")), reverse=True)


def _take_over(path: Path, run_key: str) -> EarlierRun | None:
    """The journal at ``path``, locked, if a run with ``run_key`` left it and has ended; None
    for another run's, one a live run holds (its own, or one it took over), or one removed
    meanwhile."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 (kept open: it holds the lock)
    except OSError:
        return None
    try:
        header = _header(handle.readline())
        if header is not None and header.get("run") == run_key:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: still live
            if os.fstat(handle.fileno()).st_ino == path.stat().st_ino:
                handle.seek(0)
                return EarlierRun(path, header, _entries(handle.read().splitlines()[1:]),
                                  handle)
    except (OSError, UnicodeDecodeError):
        pass
    handle.close()
    return None


def _header(line: str) -> dict | None:
    with contextlib.suppress(ValueError, TypeError):
        header = json.loads(line)
        if isinstance(header, dict) and header.get("attnproof_journal") == JOURNAL_VERSION:
            return header
    return None


def _line(name: str, key: str, result: TheoremResult) -> str:
    data = result.to_json()
    return json.dumps({"theorem": name, "key": key, "digest": _digest(data), "result": data},
                      default=str)


def _digest(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _entries(lines: list[str]) -> Entries:
    found = {}
    for line in lines:
        entry = _entry(line)
        if entry is not None:
            found[entry[0]] = entry[1:]
    return found


def _entry(line: str) -> tuple[str, str, TheoremResult] | None:
    """(name, key, result) of one line, or None where the line is cut short or altered."""
    try:
        entry = json.loads(line)
        if entry["digest"] != _digest(entry["result"]):
            return None
        return entry["theorem"], entry["key"], TheoremResult.from_json(entry["result"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
