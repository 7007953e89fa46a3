"""Discovery of theorem modules: a pure function of the directories it is given.

Every ``*.py`` file (not starting with ``_``) in a theorem directory is imported in isolation;
every ``Theorem`` object at its top level joins the catalog. A file is run one top-level
statement at a time, so a statement that fails (a theorem that does not validate, a tensor
indexed wrongly) is reported with the file, line and theorem it declares, and the file's other
theorems still load. A file that cannot be parsed is reported with its path and the other
files still load; a theorem name declared in two files is an error of both, with their lines,
and neither theorem is checked.

Loading runs a file's code. The built-in catalog is part of this package and trusted; a user's
files are loaded by ``attnproof._sandbox`` in a worker process, with ``contained=True``: there
an exit, an interrupt or a change of directory at import is an error of the file's statement,
not the end of the process that loads it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

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


# a directory or a file of theorems, as the command line and the tests name one
TheoremPath = str | os.PathLike[str]
# what ``discover`` calls to load theorem files: per path, in order, (theorems, errors)
LoadFiles = Callable[[list[Path]], Sequence[tuple[Sequence[Theorem], Sequence[LoadError]]]]


def theorem_files(directories: Iterable[TheoremPath]) -> list[Path]:
    """The theorem files named by ``directories`` (each a directory or a file), sorted."""
    files = []
    for directory in directories:
        directory = Path(directory)
        if directory.is_file():
            files.append(directory)
            continue
        files.extend(p for p in sorted(directory.glob("*.py")) if not p.name.startswith("_"))
    return files


def source_problem(path: TheoremPath) -> str | None:
    """Why ``path`` cannot serve as a ``--theorems`` source, or None when it can."""
    path = Path(path)
    if not path.exists():
        return f"{path} does not exist"
    if path.is_file():
        return None if path.suffix == ".py" else f"{path} is not a Python (.py) file"
    if not path.is_dir():
        return f"{path} is neither a directory nor a file"
    if not theorem_files([path]):
        return f"{path} holds no theorem files (*.py not starting with _)"
    return None


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


def discover(directories: Iterable[TheoremPath] = (CATALOG_DIR,), *,
             load_files: LoadFiles | None = None) -> Catalog:
    """Load every theorem in ``directories``; same input, same catalog, in the same order.

    ``load_files(paths)`` returns ``(theorems, errors)`` for each path, in order; by default
    each file is loaded in this process (``load_file``).
    """
    theorems: list[Theorem] = []
    errors: list[LoadError] = []
    paths = theorem_files(directories)
    loaded_files = load_files(paths) if load_files else [load_file(path) for path in paths]
    # names that differ only in case share a report anchor and, on a case-insensitive file
    # system, a cache folder: they are one name
    places: dict[str, list[str]] = {}
    for path, (loaded, _) in zip(paths, loaded_files, strict=True):
        for theorem in loaded:
            places.setdefault(theorem.name.lower(), []).append(str(path))
    for path, (loaded, file_errors) in zip(paths, loaded_files, strict=True):
        errors.extend(file_errors)
        for theorem in loaded:
            if len(places[theorem.name.lower()]) > 1:
                errors.append(_duplicate_error(theorem.name, str(path),
                                               places[theorem.name.lower()]))
                continue
            theorems.append(theorem.loaded_from(str(path)))
    return Catalog(tuple(theorems), tuple(errors))


def _duplicate_error(name: str, path: str, paths: list[str]) -> LoadError:
    """The error of one file that declares ``name``, which other files declare too: every
    declaration is named with its line, and none of them is checked, since which one a report
    under that name would hold cannot be told."""
    where = " and ".join(_declaration_place(p, name) for p in paths)
    return LoadError(path, f"{_declaration_place(path, name)}: theorem {name!r} is declared "
                           f"in more than one file ({where}); none of them is checked until "
                           "each has a name of its own", name)


def _declaration_place(path: str, name: str) -> str:
    """``path:line`` of the statement that declares theorem ``name`` (``path`` alone where no
    top-level statement does, e.g. a theorem made in a loop)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return path
    for statement in tree.body:
        declared = _declared_theorem(statement)
        if declared is not None and declared.lower() == name.lower():
            return f"{path}:{statement.lineno}"
    return path


def load_file(path: Path, *, contained: bool = False,
              before_statement: Callable[[int], None] | None = None
              ) -> tuple[list[Theorem], list[LoadError]]:
    """The theorems of one file and its errors.

    A statement that calls ``sys.exit`` or changes the working directory is an error of that
    statement (the directory is restored). ``contained`` (only where a user's file is loaded in
    a process of its own): ``KeyboardInterrupt`` and any other ``BaseException`` are too.
    ``before_statement(line)`` is called before each top-level statement runs, so a watcher
    knows where a file stopped.
    """
    try:
        module, errors = _import_theorem_file(path, contained, before_statement)
    except Exception as error:  # any failure in a user's file is reported, never fatal
        return [], [LoadError(str(path), _file_error(path, error))]
    # one object bound to two names is one theorem; two objects with one name are an error,
    # reported once, and the file's other theorems still load
    found = list({id(v): v for v in vars(module).values() if isinstance(v, Theorem)}.values())
    names = [t.name for t in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    errors = errors + [LoadError(str(path), f"{path}: declares theorem {name!r} twice", name)
                       for name in duplicates]
    return [t for t in found if t.name not in duplicates], errors


def _import_theorem_file(path: Path, contained: bool = False,
                         before_statement: Callable[[int], None] | None = None
                         ) -> tuple[ModuleType, list[LoadError]]:
    """The module of a theorem file and the errors of its failed statements.

    A catalog file is loaded as a module of ``attnproof.theorems`` (its siblings are relative
    imports); any other file in isolation, under a name no user module can take.
    """
    path = Path(path)
    if path.suffix != ".py":
        raise ImportError(f"not a Python (.py) file: {path.name}")
    if path.resolve().parent == CATALOG_DIR:
        module_name = f"{CATALOG_PACKAGE}.{path.stem}"
        if module_name in sys.modules:  # loaded before in this process, with its errors
            module = sys.modules[module_name]
            return module, list(getattr(module, "__attnproof_errors__", []))
        importlib.import_module(CATALOG_PACKAGE)
        spec = importlib.util.find_spec(module_name)
    else:
        module_name = f"attnproof_theorems_{abs(hash(str(path.resolve())))}_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:  # a catalog file that is not there: find_spec finds no module
        raise ImportError(f"no such theorem file: {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        errors = _run_statements(path, module, contained, before_statement)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    vars(module)["__attnproof_errors__"] = errors  # vars(): ModuleType declares no such name
    return module, errors


def _run_statements(path: Path, module: ModuleType, contained: bool = False,
                    before_statement: Callable[[int], None] | None = None) -> list[LoadError]:
    """Execute the file one top-level statement at a time; report each one that fails."""
    # In this process a Ctrl-C is the user's and must stop the run; where the file is contained
    # (its own process, which ignores the signals) only the file itself can raise one. An exit
    # or a change of directory is the file's wherever it loads.
    caught = BaseException if contained else (Exception, SystemExit)
    directory = os.getcwd()
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))  # a SyntaxError loses the file: reported
    namespace = vars(module)
    namespace["__doc__"] = ast.get_docstring(tree, clean=False)  # as a whole-file import sets
    flags = 0
    errors: list[LoadError] = []
    failed_names: dict[str, int] = {}
    for statement in tree.body:
        flags |= _future_flags(statement)
        code = compile(ast.Module([statement], []), str(path), "exec", flags=flags,
                       dont_inherit=True)
        if before_statement is not None:
            before_statement(statement.lineno)
        try:
            exec(code, namespace)
        except caught as error:  # reported with its line; the next statements still run
            errors.append(_statement_error(path, statement, error, failed_names))
            failed_names.update(dict.fromkeys(_bound_names(statement), statement.lineno))
        if moved := _directory_changed(directory):
            errors.append(LoadError(str(path), f"{path}:{statement.lineno}: changed the working "
                                    f"directory at import (to {moved}); a theorem file must not "
                                    "(restored)"))
    return errors


def _directory_changed(directory: str) -> str | None:
    """Where a statement moved the working directory (restoring ``directory``), or None."""
    try:
        now = os.getcwd()
    except OSError:  # the directory moved to was removed
        now = "a removed directory"
    if now == directory:
        return None
    os.chdir(directory)
    return now


def _file_error(path: Path, error: Exception) -> str:
    """Why a whole file failed to load; its first line says what and where (a syntax error's
    own first line is only its location, so its message is put first)."""
    summary = "".join(traceback.format_exception_only(error)).strip()
    if isinstance(error, SyntaxError) and error.lineno is not None:
        return f"{path}:{error.lineno}: {type(error).__name__}: {error.msg}\n{summary}"
    return f"{path}: {summary}"


def _future_flags(statement: ast.stmt) -> int:
    if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
        return 0
    import __future__

    return sum(getattr(__future__, alias.name).compiler_flag for alias in statement.names)


def _statement_error(path: Path, statement: ast.stmt, error: BaseException,
                     failed: dict[str, int]) -> LoadError:
    theorem = _declared_theorem(statement)
    where = f"{path}:{_error_line(error, path, statement)}"
    subject = f"theorem {theorem!r}: " if theorem else ""
    missing = getattr(error, "name", None) if isinstance(error, NameError) else None
    if missing in failed:
        message = f"{where}: {subject}uses {missing}, whose declaration at line " \
                  f"{failed[missing]} failed"
    else:
        summary = "".join(traceback.format_exception_only(error)).strip()
        message = f"{where}: {subject}{summary}{_why_fatal(error)}"
    return LoadError(str(path), message, theorem)


def _why_fatal(error: BaseException) -> str:
    """What an exception that would end a process means when a theorem file raises it."""
    if isinstance(error, SystemExit):
        return " (the file exits at import; a theorem file must not)"
    if not isinstance(error, Exception):
        return " (raised by the file at import, not by a signal)"
    return ""


def _error_line(error: BaseException, path: Path, statement: ast.stmt) -> int:
    """The line of the file where ``error`` was raised (the innermost frame in the file)."""
    line = statement.lineno
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == str(path) and frame.lineno is not None:  # None: no line known
            line = frame.lineno
    return line


def _declared_theorem(statement: ast.stmt) -> str | None:
    """The name of the theorem a statement declares (``x = Theorem("name", ...)``), if any."""
    value = getattr(statement, "value", None)
    if not isinstance(value, ast.Call):
        return None
    function = value.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if called != "Theorem":
        return None
    named = [k.value for k in value.keywords if k.arg == "name"] or value.args[:1]
    if named and isinstance(named[0], ast.Constant) and isinstance(named[0].value, str):
        return named[0].value
    targets = _bound_names(statement)
    return targets[0] if targets else None


def _bound_names(statement: ast.stmt) -> list[str]:
    """The module-level names a statement assigns (for blaming later uses of them)."""
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    names = []
    for target in targets:
        if target is not None:
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    if isinstance(statement, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        names.append(statement.name)
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        names += [(a.asname or a.name).split(".")[0] for a in statement.names]
    return names
