"""The modules a theorem file imports from outside the installed environment, recorded as it
loads.

A recorded result stands only while the code that produced it is unchanged, and that code is
not only the theorem's file: a file of one's own imports its implementation from a module
beside it (``sys.path.insert(0, os.path.dirname(__file__))``), or from a library on
``PYTHONPATH``. What the environment holds is keyed by the run instead: the checker's own
source by its bytes, the standard library by Python's version, site-packages by the version
of each distribution installed (``_journal.run_key``). Every other module is recorded, whatever
the import statement that loaded it (``import``, ``from``, ``importlib``, one module importing
the next), as a module that appeared in ``sys.modules`` while the file ran.
"""

from __future__ import annotations

import functools
import site
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from types import ModuleType

Loaded = TypeVar("Loaded")


def checker_roots() -> tuple[Path, ...]:
    """The folders of the checker's source: ``attnproof`` and the ``numeric`` and ``symbolic``
    linked into it (the links are resolved: a walk of ``attnproof`` does not follow them)."""
    package = Path(__file__).resolve().parent
    return tuple(sorted({package, (package / "numeric").resolve(),
                         (package / "symbolic").resolve()}))


@functools.cache
def _environment_roots() -> tuple[Path, ...]:
    """The folders of the standard library, of site-packages (the user's too) and of the
    checker."""
    paths = sysconfig.get_paths()
    folders = [paths[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    folders += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return tuple({Path(folder).resolve() for folder in folders}) + checker_roots()


def outside_file(module: ModuleType | None) -> str | None:
    """The file ``module`` was loaded from, where that lies outside the environment; None for
    one inside it, and for a module without a file (built in, a namespace package)."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return None
    path = Path(file).resolve()
    if any(path.is_relative_to(root) for root in _environment_roots()):
        return None
    return str(path)


class ImportRecorder:
    """Records, for each theorem file one process loads in turn, the files of the modules it
    imported from outside the environment."""

    def __init__(self) -> None:
        self._outside: set[str] = set()  # the names of such modules earlier files imported

    def loading(self, load: Callable[[], Loaded]) -> tuple[Loaded, tuple[str, ...]]:
        """``load()``'s value, and the files of the outside modules it imported.

        The outside modules earlier files imported are first taken out of ``sys.modules``, so
        that this file's imports of them run again, as they would were it loaded alone, and
        are seen: else a helper that two files import would be recorded for the first only.
        """
        for name in self._outside:
            sys.modules.pop(name, None)
        before = set(sys.modules)
        loaded = load()
        files: set[str] = set()
        for name in set(sys.modules) - before:
            file = outside_file(sys.modules.get(name))
            if file is not None:
                self._outside.add(name)
                files.add(file)
        return loaded, tuple(sorted(files))
