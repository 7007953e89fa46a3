"""The catalog's theorem names and declarations, read without building its statements.

Loading the catalog builds every SymPy statement (seconds); ``list`` and a misspelt
``--theorem`` need only each theorem's name, source and expectation, and the catalog's load
errors, and ``prove --theorem NAME`` only the file that declares NAME. They are kept in one
file of the user cache directory (beside the proofs of ``_cache``), under a digest of the
sources that decide them: every file of the catalog, the language's source, and the versions
of Python and SymPy. Any change to one of them, a file that cannot be read, or one whose
content does not match its own digest, and the index is rebuilt from the catalog, never
trusted.

``$ATTNPROOF_NO_CACHE=1`` turns it off with every other cache (the catalog is then loaded).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .numeric import cache_directory, write_atomically

if TYPE_CHECKING:
    from collections.abc import Collection

    from attnproof.symbolic import Catalog

INDEX_NAME = "catalog-index.json"
FORMAT = 1  # of the file; another format is rebuilt

_PACKAGE = Path(__file__).resolve().parent
# the folders whose files decide the declarations: the catalog's, and the language's
SOURCES = (_PACKAGE / "theorems", _PACKAGE / "symbolic")


@dataclass(frozen=True)
class CatalogIndex:
    """Each catalog theorem's declaration (``attnproof.report.declaration``'s fields) and each
    load error's fields (``path``, ``message``, ``theorem``), in the catalog's order."""

    theorems: tuple[dict, ...]
    errors: tuple[dict, ...]

    def names(self) -> list[str]:
        """The names a ``--theorem`` may give: every theorem's, and those of theorems whose
        declaration failed (so that the run reports their error)."""
        return ([t["name"] for t in self.theorems]
                + [e["theorem"] for e in self.errors if e["theorem"]])


def catalog_index() -> CatalogIndex:
    """The catalog's index: read, or built from the catalog (and stored) when there is none
    that matches the sources."""
    found = read_index()
    if found is not None:
        return found
    catalog = load_catalog()
    remember(catalog)
    return _from_catalog(catalog)


def catalog_declaring(names: Collection[str]) -> Catalog | None:
    """The catalog reduced to the files that declare ``names``, loaded alone, with every load
    error of the whole catalog as the index records them; None where no index matches the
    sources or it does not list every name (the caller then loads the whole catalog).

    The index matches the sources, so these files hold what they held when it was built: the
    theorems named are those a whole load gives, and a name declared in two files, already an
    error of the index, is not a theorem of it and not loaded here.
    """
    from attnproof.symbolic import CATALOG_DIR, Catalog, LoadError, discover

    index = read_index()
    if index is None or any(name not in index.names() for name in names):
        return None
    file_of = {t["name"]: CATALOG_DIR / Path(t["origin"]).name for t in index.theorems}
    files = sorted({file_of[name] for name in names if name in file_of})
    if not all(path.is_file() for path in files):
        return None
    loaded = discover(files)
    return Catalog(tuple(t for t in loaded.theorems if t.name in file_of),
                   tuple(LoadError(e["path"], e["message"], e["theorem"]) for e in index.errors))


def load_catalog() -> Catalog:
    """The catalog directory's theorems, loaded alone (every statement built: seconds)."""
    from attnproof import symbolic

    return symbolic.discover([symbolic.CATALOG_DIR])


def read_index() -> CatalogIndex | None:
    """The stored index if it matches the sources, else None (a damaged one is removed)."""
    path = _path()
    if path is None:
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        content = stored["content"]
        if stored["digest"] != _digest(content):  # damaged, or written by hand
            raise ValueError("the index does not match its digest")
        if content["format"] != FORMAT or content["sources"] != sources_digest():
            return None  # an index of other sources: rebuilt, and replaced
        return CatalogIndex(tuple(content["theorems"]), tuple(content["errors"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def remember(catalog: Catalog) -> None:
    """Store the index of ``catalog``, the catalog directory's theorems loaded alone."""
    path = _path()
    if path is None:
        return
    index = _from_catalog(catalog)
    content = {"format": FORMAT, "sources": sources_digest(), "theorems": list(index.theorems),
               "errors": list(index.errors)}
    with contextlib.suppress(OSError):  # an index that cannot be written is only slower
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps({"digest": _digest(content), "content": content}))


def _from_catalog(catalog: Catalog) -> CatalogIndex:
    from .report import declaration

    return CatalogIndex(
        tuple(declaration(t) for t in catalog.theorems),
        tuple({"path": e.path, "message": e.message, "theorem": e.theorem}
              for e in catalog.errors))


def sources_digest() -> str:
    """A digest of what decides the catalog's declarations: every file of theorems/ (its
    helpers too), the language (symbolic/), and the versions of Python and SymPy."""
    digest = hashlib.sha256(f"python {platform.python_version()}, "
                            f"sympy {_version('sympy')}".encode())
    for root in SOURCES:
        folder = root.resolve()
        for path in sorted(folder.rglob("*.py")):
            digest.update(f"{root.name}/{path.relative_to(folder)}".encode() + b"\0"
                          + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _path() -> Path | None:
    directory = cache_directory()
    return None if directory is None else directory / INDEX_NAME


def _digest(content: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
