"""Each finished theorem on disk at once, so that a killed run loses none of them.

``attnproof prove`` writes its results only at the end. A run stopped by Ctrl-C or SIGTERM
still writes what it finished, but SIGKILL (the kernel's out-of-memory killer, a CI job's hard
timeout) gives it no chance. So every theorem's result is also appended, as it finishes, to a
journal beside the results file (``results.journal.jsonl``, one JSON object per line). The
journal is removed once a complete run's results are written; after any other ending it stays,
and the next run with the same options recovers from it every theorem whose result still
stands, instead of checking it again.

A recorded result stands only while nothing that could change it has changed: the run's
options, the checker's own source, the versions of the libraries it runs on (the run's key,
in the journal's first line), and the theorem's statement and the file that declares it (the
theorem's key, on its line). A line cut short by the kill, or whose digest does not match, is
ignored. A theorem whose worker died or overran its time is not journaled: the next run tries
it again.

Lines are written with one ``write`` each and flushed: the kernel keeps what a killed process
wrote, so no ``fsync`` is needed against a kill (only against a power cut, which would cost
a disk flush per theorem to guard).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ._cache import _with_imports, statement_key
from .report import TheoremResult

JOURNAL_VERSION = 1
# the libraries whose behaviour a recorded result depends on
_LIBRARIES = ("sympy", "numpy", "hypothesis", "jax", "jaxlib", "mlx", "torch", "ml_dtypes")


def journal_path(results: Path) -> Path:
    """The journal of the run whose complete results go to ``results``."""
    return results.with_name(results.stem + ".journal.jsonl")


@dataclass
class Journal:
    """The journal at ``path`` for a run whose key is ``run_key``: what it recovered when it
    was opened, and each result recorded since."""

    path: Path
    run_key: str
    recovered: dict[str, tuple[str, TheoremResult]] = field(default_factory=dict)
    _file: object = None

    @classmethod
    def open(cls, path: Path, run_key: str, recover: bool = True) -> Journal:
        """Read what an earlier run with the same key left at ``path`` (unless ``recover`` is
        false), then start the file afresh: a journal never holds another run's results, and
        the run records again each recovered result that still stands (``recover``)."""
        journal = cls(Path(path), run_key)
        if recover:
            journal.recovered = _read(journal.path, run_key)
        journal._start()
        return journal

    def recover(self, theorem, time_limit: float) -> TheoremResult | None:
        """``theorem``'s recorded result, if it still stands."""
        found = self.recovered.get(theorem.name)
        if found is None or found[0] != theorem_key(theorem, time_limit):
            return None
        return found[1]

    def record(self, theorem, time_limit: float, result: TheoremResult) -> None:
        """Append ``result``; a journal that cannot be written costs only its protection."""
        self._append(_line(theorem.name, theorem_key(theorem, time_limit), result))

    def complete(self) -> None:
        """The run's results are written: the journal has nothing left to protect."""
        self.close()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def _start(self) -> None:
        """Write the header to a new file and put it in place of the old one in one step, then
        keep it open for appending."""
        header = json.dumps({"attnproof_journal": JOURNAL_VERSION, "run": self.run_key})
        fresh = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh.write_text(header + "\n", encoding="utf-8")
            os.replace(fresh, self.path)
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
        except OSError:
            with contextlib.suppress(OSError):
                fresh.unlink()
            self._file = None

    def _append(self, line: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(line + "\n")
            self._file.flush()
        except OSError:
            self.close()


def run_key(options: dict) -> str:
    """The key of a run: its options, the checker's source and the libraries' versions."""
    digest = hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode())
    digest.update(_source_digest().encode())
    for library in _LIBRARIES:
        digest.update(f"\n{library} {_version(library)}".encode())
    return digest.hexdigest()


def theorem_key(theorem, time_limit: float) -> str:
    """The key of one theorem's result: the bytes of the file that declares it and of the
    modules of its folder that file imports (``from . import ...``, transitively), which hold
    its statement and its code (hooks, implementations), the time limit, and, where the run
    holds the theorem itself (the catalog's, loaded in this process), its statement as the
    proof cache keys it. A user's theorem is known here only by its declaration: its file was
    loaded in a worker."""
    digest = hashlib.sha256(f"{theorem.name}\n{theorem.origin}\n{time_limit!r}\n".encode())
    if hasattr(theorem, "claim"):
        digest.update(statement_key(theorem, time_limit).encode())
    for path in _declaring_files(theorem.origin):
        with contextlib.suppress(OSError):
            digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _declaring_files(origin: str) -> list[Path]:
    """The file ``origin`` and the modules of its folder it imports, transitively."""
    path = Path(origin)
    try:
        return sorted(_with_imports(path.parent, frozenset([path.stem])))
    except (OSError, SyntaxError, ValueError):  # unreadable now: only the name keys it
        return [path]


def _source_digest() -> str:
    """A digest of every source file of the checker (``attnproof``, ``numeric``, ``symbolic``)."""
    package = Path(__file__).resolve().parent
    roots = sorted({package, (package / "numeric").resolve(), (package / "symbolic").resolve()})
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _version(library: str) -> str:
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return "absent"


def _line(name: str, key: str, result: TheoremResult) -> str:
    data = result.to_json()
    return json.dumps({"theorem": name, "key": key, "digest": _digest(data), "result": data},
                      default=str)


def _digest(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _read(path: Path, run_key: str) -> dict[str, tuple[str, TheoremResult]]:
    """The entries of the journal at ``path`` recorded under ``run_key``; a missing or
    foreign journal, or a damaged line, gives nothing for it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    if not lines or _header_key(lines[0]) != run_key:
        return {}
    found = {}
    for line in lines[1:]:
        entry = _entry(line)
        if entry is not None:
            found[entry[0]] = entry[1:]
    return found


def _header_key(line: str) -> str | None:
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        header = json.loads(line)
        if header.get("attnproof_journal") == JOURNAL_VERSION:
            return header.get("run")
    return None


def _entry(line: str) -> tuple[str, str, TheoremResult] | None:
    """(name, key, result) of one line, or None where the line is cut short or altered."""
    try:
        entry = json.loads(line)
        if entry["digest"] != _digest(entry["result"]):
            return None
        return entry["theorem"], entry["key"], TheoremResult.from_json(entry["result"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
