"""Discovery of theorem modules: a pure function of the directories it is given.

Every ``*.py`` file (not starting with ``_``) in a theorem directory is imported in isolation;
every ``Theorem`` object at its top level joins the catalog. A file that fails to import, or
declares a name already taken, is reported with its path and the others still load.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from ._theorem import Theorem

CATALOG_PACKAGE = "attnproof.theorems"
# the catalog is package data of attnproof, found beside this package (in a source tree the
# folders are linked into attnproof/, so resolve() lands on the same directory either way)
CATALOG_DIR = Path(__file__).resolve().parent.parent / "theorems"


@dataclass(frozen=True)
class LoadError:
    """A theorem file that could not be loaded, or a theorem that could not join the catalog."""

    path: str
    message: str
    theorem: str | None = None


@dataclass(frozen=True)
class Catalog:
    theorems: tuple[Theorem, ...]
    errors: tuple[LoadError, ...]

    def by_name(self) -> dict[str, Theorem]:
        return {t.name: t for t in self.theorems}


def theorem_files(directories) -> list[Path]:
    files = []
    for directory in directories:
        directory = Path(directory)
        if directory.is_file():
            files.append(directory)
            continue
        files.extend(p for p in sorted(directory.glob("*.py")) if not p.name.startswith("_"))
    return files


def theorem_file_argument(origin: str) -> str | None:
    """What to pass as ``--theorems`` to load the theorem declared in ``origin`` again: nothing
    for the built-in catalog (loaded by default), else its path, relative to the working
    directory where it lies below it."""
    if not origin or origin == "<unknown>":
        return None
    path = Path(origin).resolve()
    if path.parent == CATALOG_DIR.resolve():
        return None
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def discover(directories=(CATALOG_DIR,)) -> Catalog:
    """Load every theorem in ``directories``; same input, same catalog, in the same order."""
    theorems: list[Theorem] = []
    errors: list[LoadError] = []
    seen: dict[str, str] = {}
    for path in theorem_files(directories):
        loaded, error = _load_file(path)
        if error:
            errors.append(error)
            continue
        for theorem in loaded:
            if theorem.name in seen:
                errors.append(LoadError(str(path), f"duplicate theorem name {theorem.name!r}, "
                                        f"already declared in {seen[theorem.name]}", theorem.name))
                continue
            seen[theorem.name] = str(path)
            theorems.append(replace(theorem, origin=str(path)))
    return Catalog(tuple(theorems), tuple(errors))


def _load_file(path: Path) -> tuple[list[Theorem], LoadError | None]:
    try:
        module = _import_theorem_file(path)
    except Exception as error:  # any failure in a user's file is reported, never fatal
        summary = "".join(traceback.format_exception_only(error)).strip()
        return [], LoadError(str(path), f"{path}: {summary}")
    # one object bound to two names is one theorem; two objects with one name are an error
    found = list({id(v): v for v in vars(module).values() if isinstance(v, Theorem)}.values())
    names = [t.name for t in found]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        return [], LoadError(str(path), f"{path}: declares theorem {duplicate!r} twice", duplicate)
    return found, None


def _import_theorem_file(path: Path):
    """A catalog file is imported as a module of ``attnproof.theorems`` (its siblings are
    relative imports); any other file in isolation, under a name no user module can take."""
    if path.resolve().parent == CATALOG_DIR:
        return importlib.import_module(f"{CATALOG_PACKAGE}.{path.stem}")
    module_name = f"attnproof_theorems_{abs(hash(str(path.resolve())))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module
