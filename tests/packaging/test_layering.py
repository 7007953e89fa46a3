"""The layering a reader (and an import-graph tool) can see from the import statements.

Claim kinds (``symbolic/kinds/``, ``numeric/kinds/``) reach the rest of the tool only through
public names: the route toolkits ``attnproof.symbolic.route`` and ``attnproof.numeric.route``,
the packages ``attnproof.symbolic`` / ``attnproof.numeric``, and the public kind modules. A kind
module imports no name that starts with an underscore from another module, no module of the
tool whose path has a private part, and reads no private attribute of anything it imported.
The one exception is each kinds package's own shared helpers, modules that start with an
underscore because they are not kinds (``SHARED_HELPERS``): a kind module may import those of
its own package, and nothing outside the package may.

Everywhere in the repository, ``symbolic``, ``numeric`` and ``theorems`` are imported as
``attnproof.symbolic`` (and so on) or relatively, never as top-level packages of their own; and
inside ``symbolic/`` and ``numeric/`` a module imports its own folder relatively, so that every
absolute import names another layer.

The application layer (``attnproof/*.py``, ``attnproof/report/``, ``attnproof/kernels/``) reaches
``symbolic/`` and ``numeric/`` the same way, by the names their ``__init__`` exports: it imports
no private module of theirs (``attnproof.numeric._devices``), no private name, and reads no
private attribute of what it imported from them (``symbolic._catalog``). scripts/ and
benchmarks/ are developer tools and may.

Every claim, the three built in (``Equals``, ``AtLeast``, ``Rounds``) as much as the kinds, says
itself what the tool needs from it (``Claim``, ``symbolic/_kind.py``): outside the kinds packages
no module of the tool asks which type a claim is. Likewise every backend says itself what it
gives (``Backend``, ``numeric/_backends.py``): no module but the backend rows compares a
backend's name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KINDS_PACKAGES = {"attnproof.symbolic.kinds": REPO / "symbolic" / "kinds",
                  "attnproof.numeric.kinds": REPO / "numeric" / "kinds"}
SHARED_HELPERS = {
    "attnproof.symbolic.kinds": {"_ieee_arithmetic"},
    "attnproof.numeric.kinds": {"_along_axes", "_evaluate", "_row_values", "_sides"},
}
LAYERS = ("symbolic", "numeric", "theorems")
SOURCE_FOLDERS = ("attnproof", "symbolic", "numeric", "theorems", "tests", "scripts",
                  "benchmarks")
# the tool's own code: everything but the tests, which may pick theorems by their claim's type
TOOL_FOLDERS = tuple(folder for folder in SOURCE_FOLDERS if folder != "tests")
CLAIM_TYPES = {"Equals", "AtLeast", "Rounds", "ClaimKind"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(package: str, module: str | None, level: int) -> str:
    """The module a ``from`` import inside ``package`` (the importing module's package) names."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def kind_import_problems(source: str, package: str) -> list[str]:
    """Each import or attribute use of ``source`` (a module of the kinds ``package``) that
    reaches a private name of another module."""
    helpers = SHARED_HELPERS.get(package, set())
    problems, imported = [], set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(package, node.module, node.level)
            for alias in node.names:
                imported.add(alias.asname or alias.name)
                if module == package and alias.name in helpers:
                    continue
                if _private(alias.name):
                    problems.append(f"line {node.lineno}: imports {alias.name} from {module}")
                elif _private_part(module, package, helpers):
                    problems.append(f"line {node.lineno}: imports {alias.name} from the private "
                                    f"module {module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imported.add((alias.asname or alias.name).split(".")[0])
                if _private_part(alias.name, package, helpers):
                    problems.append(f"line {node.lineno}: imports the private module "
                                    f"{alias.name}")
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in imported and _private(node.attr)):
            problems.append(f"line {node.lineno}: reads {node.value.id}.{node.attr}")
    return problems


def _private_part(module: str, package: str, helpers: set[str]) -> bool:
    """Whether ``module`` is a private module of the tool, other than ``package``'s helpers."""
    if not module.startswith("attnproof"):
        return False
    if module.startswith(package + ".") and module[len(package) + 1:] in helpers:
        return False
    return any(_private(part) for part in module.split("."))


def layer_import_problems(source: str, folder: str) -> list[str]:
    """Bare imports of a layer (``import numeric``), and absolute imports of ``folder``'s own
    layer from inside it (``attnproof.numeric`` in ``numeric/``)."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules = [node.module or ""]
        else:
            continue
        for module in modules:
            top = module.split(".")[0]
            if top in LAYERS:
                problems.append(f"line {node.lineno}: imports {module} as a top-level package; "
                                f"write attnproof.{module}")
            elif folder in ("symbolic", "numeric") and (
                    module == f"attnproof.{folder}" or module.startswith(f"attnproof.{folder}.")):
                problems.append(f"line {node.lineno}: imports its own layer as {module}; "
                                "import it relatively")
    return problems


def _kind_modules() -> list[tuple[str, Path]]:
    return [(package, path) for package, folder in KINDS_PACKAGES.items()
            for path in sorted(folder.glob("*.py"))]


def _source_files() -> list[Path]:
    return [path for folder in SOURCE_FOLDERS for path in sorted((REPO / folder).rglob("*.py"))
            if not path.is_relative_to(REPO / "attnproof" / "symbolic")
            and not path.is_relative_to(REPO / "attnproof" / "numeric")
            and not path.is_relative_to(REPO / "attnproof" / "theorems")]


@pytest.mark.parametrize(("package", "path"), _kind_modules(),
                         ids=lambda value: value.name if isinstance(value, Path) else None)
def test_a_kind_reaches_the_tool_by_public_names_only(package, path):
    problems = kind_import_problems(path.read_text(encoding="utf-8"), package)
    assert not problems, f"{path.relative_to(REPO)}:\n  " + "\n  ".join(problems)


def test_the_kind_check_names_each_way_of_reaching_a_private_name():
    package = "attnproof.numeric.kinds"
    source = "\n".join([
        "from .._record import NumericStatus",            # a private module
        "from ..route import _hidden",                     # a private name
        "from attnproof.numeric import _evidence as evidence",  # a private module, by name
        "from attnproof.symbolic.kinds import ieee as kind",
        "kind._entry_name(key)",                           # a private attribute
        "from . import _sides as sides",                   # a shared helper: allowed
        "from ..route import numeric_route",               # the toolkit: allowed
        "from attnproof.symbolic.route import free_indices",
        "import attnproof.numeric._search",                # a private module, imported whole
    ])
    problems = kind_import_problems(source, package)
    assert [p.split(":")[0] for p in problems] == [
        "line 1", "line 2", "line 3", "line 9", "line 5"]


def test_the_shared_helpers_exist():
    for package, helpers in SHARED_HELPERS.items():
        for helper in helpers:
            assert (KINDS_PACKAGES[package] / f"{helper}.py").is_file(), (package, helper)


def test_no_file_imports_a_layer_as_a_top_level_package():
    files = _source_files()
    assert len(files) > 100
    problems = []
    for path in files:
        folder = path.relative_to(REPO).parts[0]
        problems += [f"{path.relative_to(REPO)} {p}"
                     for p in layer_import_problems(path.read_text(encoding="utf-8"), folder)]
    assert not problems, "\n".join(problems)


def test_the_layer_check_names_bare_and_self_absolute_imports():
    source = "import numeric\nfrom symbolic import Dim\nfrom attnproof.numeric import check\n"
    assert len(layer_import_problems(source, "numeric")) == 3
    assert len(layer_import_problems(source, "attnproof")) == 2
    assert layer_import_problems("from attnproof.symbolic import Dim\n", "numeric") == []


def claim_type_tests(source: str) -> list[str]:
    """Each ``isinstance(<...claim...>, Equals|AtLeast|Rounds|ClaimKind)`` and each
    ``type(<...claim...>) is|==|in ...`` of ``source``: a branch on a claim's type."""
    found = [node for node in ast.walk(ast.parse(source))
             if _is_isinstance_of_claim(node) or _compares_type_of_claim(node)]
    return [f"line {node.lineno}: {ast.unparse(node)}"
            for node in sorted(found, key=lambda node: node.lineno)]


def _is_isinstance_of_claim(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance" and len(node.args) == 2
            and _mentions_claim(node.args[0]) and bool(_names(node.args[1]) & CLAIM_TYPES))


_TYPE_COMPARISONS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _compares_type_of_claim(node: ast.AST) -> bool:
    return (isinstance(node, ast.Compare) and _is_type_of_claim(node.left)
            and any(isinstance(op, _TYPE_COMPARISONS) for op in node.ops))


def _mentions_claim(node: ast.AST) -> bool:
    return "claim" in ast.unparse(node).lower()


def _names(node: ast.AST) -> set[str]:
    """The class names a type argument names (``Equals``, ``(AtLeast, kinds.ClaimKind)``)."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))}


def _is_type_of_claim(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "type" and len(node.args) == 1 and _mentions_claim(node.args[0]))


def _tool_files() -> list[Path]:
    """The tool's modules outside the kinds packages (the kinds may know their own types)."""
    return [path for path in _source_files()
            if path.relative_to(REPO).parts[0] in TOOL_FOLDERS
            and not any(path.is_relative_to(folder) for folder in KINDS_PACKAGES.values())]


def test_no_module_outside_the_kinds_branches_on_a_claims_type():
    files = _tool_files()
    assert any(path.name == "_prover.py" for path in files)
    problems = [f"{path.relative_to(REPO)} {p}" for path in files
                for p in claim_type_tests(path.read_text(encoding="utf-8"))]
    assert not problems, "ask the claim (symbolic/_kind.py), not its type:\n" + "\n".join(
        problems)


def test_the_claim_type_check_names_each_way_of_asking():
    source = "\n".join([
        "if isinstance(theorem.claim, ClaimKind): pass",          # the prover's old branch
        "rhs = m(c.printed) if isinstance(claim, Rounds) else c",  # the LaTeX printer's
        "ok = isinstance(theorem.claim, (*BUILT_IN, symbolic.AtLeast))",
        "same = type(theorem.claim) is Equals",
        "known = type(claim) in KINDS",
        "fine = isinstance(lemma, (Equals, AtLeast))",             # a lemma, not the claim
        "fine = isinstance(theorem.claim, Claim)",                 # the contract itself
        "fine = theorem.claim.truth_measure == 'shortfall'",       # asking the claim
    ])
    assert [p.split(":")[0] for p in claim_type_tests(source)] == [
        "line 1", "line 2", "line 3", "line 4", "line 5"]


# -- a backend's knowledge lives in its row ------------------------------------------------------


def backend_name_tests(source: str, names: set[str]) -> list[str]:
    """Each comparison of ``source`` with one of the backends' ``names`` as a string (``row.name
    == "jax"``, ``c[0] in ("numpy", "mlx")``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        strings = set()
        for side in (node.left, *node.comparators):
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            strings |= {item.value for item in items
                        if isinstance(item, ast.Constant) and isinstance(item.value, str)}
        if strings & names:
            found.append((node.lineno, f"line {node.lineno}: {ast.unparse(node)}"))
    return [text for _, text in sorted(found)]


def _backend_names() -> set[str]:
    from attnproof.numeric import BACKENDS

    return {row.name for row in BACKENDS}


def test_no_module_but_the_backend_rows_compares_a_backends_name():
    names = _backend_names()
    rows = REPO / "numeric" / "_backends.py"
    # the package's own code (benchmarks/ and scripts/ are developer tools, and may)
    files = [path for path in _source_files()
             if path.relative_to(REPO).parts[0] in ("attnproof", *LAYERS) and path != rows]
    assert any(path.name == "cost.py" for path in files)
    problems = [f"{path.relative_to(REPO)} {p}" for path in files
                for p in backend_name_tests(path.read_text(encoding="utf-8"), names)]
    assert not problems, ("say it in the backend's row (numeric/_backends.py: a field, or a "
                          "capability a claim needs), not by its name:\n" + "\n".join(problems))


def test_the_backend_name_check_names_each_way_of_asking():
    source = "\n".join([
        'kept = [c for c in found if c[0] == "numpy"]',  # the cost kind's old filter
        'lazy = row.name in ("mlx", "jax")',
        'if "jax" != backend: pass',
        'fine = row.gives >= claim.numeric_needs',      # asking the row
        'fine = dtype == "float32"',
    ])
    assert [p.split(":")[0] for p in backend_name_tests(source, _backend_names())] == [
        "line 1", "line 2", "line 3"]


# -- the application layer reaches symbolic/ and numeric/ by their public names -----------------

LOWER_LAYERS = ("attnproof.symbolic", "attnproof.numeric")
APPLICATION_FOLDERS = (REPO / "attnproof" / "report", REPO / "attnproof" / "kernels")


def _application_modules() -> list[tuple[str, Path]]:
    """The application layer's modules, by dotted name: ``attnproof/*.py``, ``attnproof/report/``
    and ``attnproof/kernels/`` (not the linked layers, nor scripts/ and benchmarks/)."""
    paths = sorted((REPO / "attnproof").glob("*.py"))
    paths += [path for folder in APPLICATION_FOLDERS for path in sorted(folder.rglob("*.py"))]
    modules = []
    for path in paths:
        parts = path.relative_to(REPO).with_suffix("").parts
        modules.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return modules


def _in_lower_layer(module: str) -> bool:
    return any(module == layer or module.startswith(layer + ".") for layer in LOWER_LAYERS)


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute reads on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return None


def application_import_problems(source: str, name: str, is_package: bool = False) -> list[str]:
    """Each import or attribute read of ``source`` (the application module ``name``) that reaches
    a private module or a private name of ``attnproof.symbolic`` or ``attnproof.numeric``."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(source)
    problems, bound = [], {}  # bound: a name of this module -> the module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(package, node.module, node.level)
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{module}.{alias.name}"
                if not _in_lower_layer(f"{module}.{alias.name}"):
                    continue
                if any(_private(part) for part in module.split(".")):
                    problems.append(f"line {node.lineno}: imports {alias.name} from the private "
                                    f"module {module}")
                elif _private(alias.name):
                    problems.append(f"line {node.lineno}: imports {alias.name} from {module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
                if _in_lower_layer(alias.name) and any(_private(p) for p in alias.name.split(".")):
                    problems.append(f"line {node.lineno}: imports the private module "
                                    f"{alias.name}")
    reads = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and _private(node.attr) and _dotted(node.value)]
    for node in sorted(reads, key=lambda node: (node.lineno, node.col_offset)):
        first, _, rest = (path := _dotted(node.value)).partition(".")
        if first in bound and _in_lower_layer(".".join(filter(None, (bound[first], rest)))):
            problems.append(f"line {node.lineno}: reads {path}.{node.attr}")
    return problems


@pytest.mark.parametrize(("name", "path"), _application_modules(),
                         ids=lambda value: value if isinstance(value, str) else None)
def test_the_application_reaches_symbolic_and_numeric_by_public_names_only(name, path):
    problems = application_import_problems(path.read_text(encoding="utf-8"), name,
                                           path.name == "__init__.py")
    assert not problems, (
        f"{path.relative_to(REPO)}: export the name from attnproof/symbolic/__init__.py or "
        "attnproof/numeric/__init__.py and import it from there:\n  " + "\n  ".join(problems))


def test_the_application_modules_are_found():
    names = {name for name, _ in _application_modules()}
    assert {"attnproof", "attnproof._commands", "attnproof.report", "attnproof.report.view",
            "attnproof.kernels._frameworks"} <= names
    assert not any(_in_lower_layer(name) for name in names)


def test_the_application_check_names_each_way_of_reaching_a_private_name():
    source = "\n".join([
        "from attnproof.numeric._devices import Device",       # a private module, absolute
        "from .numeric._devices import Device",                # relative, from the report
        "from ..numeric._devices import Device",               # relative, two levels up
        "import attnproof.numeric._search",                    # imported whole
        "from attnproof.numeric import _backends",             # a private module, by name
        "from attnproof.numeric import jax_devices, _hidden",  # a private name
        "from attnproof import symbolic",
        "symbolic._catalog.CATALOG_DIR",                       # a private attribute
        "from attnproof.numeric import Device, devices",       # public: allowed
        "from ._runner import run",                            # this layer's own: allowed
        "from .results import _private_helper",                # this layer's own: allowed
        "symbolic.__file__",                                   # a dunder: allowed
        "import attnproof.symbolic.kinds._ieee_arithmetic as arithmetic",
        "attnproof.numeric._plan",                             # through `import attnproof...`
    ])
    problems = application_import_problems(source, "attnproof.report.view")
    assert [p.split(":")[0] for p in problems] == [
        "line 1", "line 3", "line 4", "line 5", "line 6", "line 13", "line 8", "line 14"]
    # line 2 names attnproof.report.numeric from inside attnproof.report, which is no layer
    assert application_import_problems("from .numeric._devices import Device\n",
                                       "attnproof._commands") != []


def test_the_names_only_the_tool_needs_stay_outside_the_language():
    import attnproof
    import attnproof.symbolic as symbolic

    assert symbolic._TOOL_NAMES
    for name in symbolic._TOOL_NAMES:
        assert hasattr(symbolic, name), f"symbolic/__init__.py does not import {name}"
        assert name not in symbolic.__all__ and not hasattr(attnproof, name), name
