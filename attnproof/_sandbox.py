"""Discovery of a user's theorem files in a worker process, where nothing they do at import can
end the run.

A theorem file is Python, run when it is loaded. The built-in catalog is part of this package,
trusted, and loaded in this process as before (as fast as ever). Every other file (``--theorems``)
is loaded in a spawned worker with a time limit per file, which sends back what the parent needs
of each theorem (``DeclaredTheorem``: its name, origin, source, expectation, note) and the
file's errors. There ``sys.exit``, ``KeyboardInterrupt`` or any ``BaseException`` and ``os.chdir``
are errors of the statement that did them (see ``symbolic._catalog.load_file``); ``os._exit``, a
crash such as a segfault, or a file still loading when its time is up end the worker and are an
error of that file at the line it had reached. A fresh worker then loads the remaining files, so
every other file, and the catalog, is still checked.

The theorems themselves never cross to the parent (they need not pickle): the workers of
``_workers`` load each one again from its file, contained the same way, to check it. What does
cross is, with each declaration, the files of the modules its file imported from outside the
installed environment (``_imports``): the journal keys a recorded result by their bytes.
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
import time
from collections import deque
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from attnproof import symbolic
from attnproof.symbolic import Catalog, LoadError

from ._imports import ImportRecorder
from ._signals import sigterm_as_interrupt

# Spawning a worker that imports SymPy takes seconds on a busy machine; this much is allowed
# before it says it has begun a file, on top of the file's own time.
STARTUP_ALLOWANCE = 120.0

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnContext
    from multiprocessing.process import BaseProcess
    from os import PathLike
    from typing import TypeAlias

    from attnproof.symbolic import Theorem

    # What ``symbolic.discover`` calls to load files (``symbolic._catalog.LoadFiles``, private)
    _LoadFiles: TypeAlias = Callable[
        [list[Path]], Sequence[tuple[Sequence[Theorem], Sequence[LoadError]]]]
    # One file's (theorems, errors) as a worker sends them back: declarations, not theorems
    _Declared: TypeAlias = tuple[list["DeclaredTheorem"], list[LoadError]]


@dataclass(frozen=True)
class DeclaredTheorem:
    """What the run needs of a theorem loaded in a worker: its declaration, not its objects.

    The fields are those of ``attnproof.report.declaration``; ``rendered`` holds the statement,
    definitions and assumptions when they were asked for (``attnproof show``);
    ``imported_files`` the files of the modules its file imported from outside the installed
    environment as it loaded (``_imports``).
    """

    name: str
    source: str
    expect: str
    corrects: str | None
    note: str | None
    unstable_in: list[str]
    denied: bool
    origin: str
    rendered: dict[str, Any] | None = None
    imported_files: tuple[str, ...] = ()

    def loaded_from(self, origin: str) -> DeclaredTheorem:
        """As ``Theorem.loaded_from``: this declaration as found in the file ``origin``."""
        return replace(self, origin=origin)


def discover(directories: Iterable[str | PathLike[str]], *, timeout: float,
             render: bool = False) -> Catalog:
    """The theorems of ``directories``: the catalog's loaded here, any other file's in a worker
    that has ``timeout`` seconds per file; ``render`` also renders each of those theorems."""
    def load_files(paths: list[Path]
                   ) -> list[_Declared | tuple[list[Theorem], list[LoadError]]]:
        foreign = [p for p in paths if not _trusted(p)]
        loaded = _load_in_workers(foreign, timeout, render) if foreign else {}
        return [loaded[p] if p in loaded else symbolic.load_file(p) for p in paths]

    # The catalog then holds a ``DeclaredTheorem`` for each theorem of a user's file: what the
    # run reads of it (``declaration``, name, origin) it has, and its workers load the theorem
    # itself again (``_workers``); ``_commands`` tells the two apart where it needs to.
    return symbolic.discover(directories, load_files=cast("_LoadFiles", load_files))


def load_contained(path: str | PathLike[str]) -> tuple[list[Theorem], list[LoadError]]:
    """One file loaded the way the workers load it: an exit or interrupt is the file's error."""
    return symbolic.load_file(Path(path), contained=True)


def _trusted(path: Path) -> bool:
    return Path(path).resolve().parent == symbolic.CATALOG_DIR


# -- the parent's side ---------------------------------------------------------------------------


def _load_in_workers(paths: list[Path], timeout: float, render: bool
                     ) -> dict[Path, _Declared]:
    """``{path: (theorems, errors)}`` for every path, one worker at a time; a worker that dies
    or overruns costs only the file it was loading."""
    context = multiprocessing.get_context("spawn")
    remaining = deque(paths)
    loaded: dict[Path, _Declared] = {}
    with sigterm_as_interrupt():  # SIGTERM, like Ctrl-C, ends the worker before the command
        while remaining:
            _run_one_worker(context, remaining, loaded, timeout, render)
    return loaded


def _run_one_worker(context: SpawnContext, remaining: deque[Path],
                    loaded: dict[Path, _Declared], timeout: float,
                    render: bool) -> None:
    """Load files from ``remaining`` in one worker until it is done, dies or overruns."""
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(target=_worker_main, args=(theirs, [str(p) for p in remaining],
                                                         render), daemon=True)
    process.start()
    theirs.close()  # so the worker's exit shows as end-of-file on our side
    line, begun = None, False
    deadline = time.monotonic() + STARTUP_ALLOWANCE + timeout
    try:
        while remaining:
            if not wait([ours], timeout=max(0.0, deadline - time.monotonic())):
                _blame(remaining, loaded, line, f"still loading after the {timeout:g} s limit "
                                                "(--timeout); stopped")
                return
            try:
                kind, data = ours.recv()
            except (EOFError, OSError):
                _blame(remaining, loaded, line, _death(process) if begun else
                       f"not loaded: the loading worker {how_it_ended(process)} before it began")
                return
            if kind == "file":
                line, begun = None, True
                deadline = time.monotonic() + timeout
            elif kind == "line":
                line = data
            elif kind == "loaded":
                loaded[remaining.popleft()] = data
    finally:
        ours.close()
        if process.is_alive():
            process.kill()
        process.join()


def _blame(remaining: deque[Path], loaded: dict[Path, _Declared], line: int | None,
           reason: str) -> None:
    """The file being loaded gets the worker's end as its error, at the line it had reached."""
    path = remaining.popleft()
    where = f"{path}:{line}" if line is not None else str(path)
    loaded[path] = ([], [LoadError(str(path), f"{where}: {reason}")])


def _death(process: BaseProcess) -> str:
    """Why the worker ended while it ran a file's code: that code ended it."""
    ended = how_it_ended(process)
    exited = process.exitcode is not None and process.exitcode >= 0
    return (f"the file's code ended its loading process at import ({ended})"
            + ("; a theorem file must not exit" if exited else ""))


def how_it_ended(process: BaseProcess) -> str:
    """How a worker process ended, once it has (waiting a moment for it)."""
    process.join(timeout=5)
    code = process.exitcode
    if code is not None and code < 0:
        return f"died from signal {signal.Signals(-code).name}"
    return f"exited with code {code}"


# -- the worker's side ---------------------------------------------------------------------------


def _worker_main(connection: Connection, paths: list[str], render: bool) -> None:
    """Load each file in turn, saying which file and which statement it is at, and send back
    each file's declared theorems and errors."""
    # Ctrl-C and SIGTERM are the parent's to handle (they reach the whole process group)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from .report import declaration, rendering

    def at_line(line: int) -> None:
        connection.send(("line", line))

    imports = ImportRecorder()
    for path in paths:
        connection.send(("file", path))
        (theorems, errors), imported = imports.loading(functools.partial(
            symbolic.load_file, Path(path), contained=True, before_statement=at_line))
        declared = []
        for theorem in theorems:
            try:
                rendered = rendering(theorem) if render else None
            except Exception as error:  # shown by `show` without its statement, and why
                rendered = None
                errors.append(LoadError(path, f"{path}: theorem {theorem.name!r} cannot be "
                                              f"rendered: {type(error).__name__}: {error}",
                                        theorem.name))
            declared.append(DeclaredTheorem(**declaration(theorem), rendered=rendered,
                                            imported_files=imported))
        connection.send(("loaded", (declared, errors)))
    connection.close()
