"""Inside the numeric checker a dtype is a ``Format``, not its name: a name is parsed once where
it comes in (a configuration, the command line) and printed once where it goes out (a record,
the time log). A ``Format`` compared with a name is never equal, so a parameter that took a
name where the rest passes formats would answer a silent False; the scan below keeps every
``dtype`` parameter of the package a ``Format`` outside the places that hold names, and the
type checker (``strict_equality``, pyproject.toml) refuses a format compared with a name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attnproof.numeric import Configuration, backend
from attnproof.numeric._driver import Where, rerun_command
from attnproof.symbolic import FLOAT32, FORMATS, discover

NUMERIC = Path(__file__).resolve().parents[2] / "numeric"

# the functions whose ``dtype`` is a name, and why
NAMES_HELD = {
    # the boundary: names come in from the command line, pytest and the worker messages
    ("_backends.py", "__new__"): "Configuration: the names a configuration is made of",
    ("_search.py", "check"): "the public entry: a record is asked for by names",
    ("_search.py", "search"): "the public entry, with its ratios",
    # names go out: the time log's keys
    ("_time_log.py", "attributed"): "the time log's keys are the record's names",
    # the kernel checker's half of a backend's row: a kernel's dtypes are still names there
    ("_backends.py", "_jax_kernel_scope"): "the kernel checker's dtypes",
    ("_backends.py", "_jax_kernel_dtype_reason"): "the kernel checker's dtypes",
    ("_backends.py", "_mlx_kernel_scope"): "the kernel checker's dtypes",
}


def _dtype_names(source: str, filename: str) -> list[str]:
    """``file:function`` for each function of ``source`` that takes a ``dtype`` annotated as a
    name, outside ``NAMES_HELD``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for argument in (*node.args.args, *node.args.kwonlyargs):
            annotation = argument.annotation
            if (argument.arg == "dtype" and annotation is not None
                    and "str" in ast.unparse(annotation)
                    and (filename, node.name) not in NAMES_HELD):
                found.append(f"{filename}:{node.name}")
    return found


def test_every_dtype_parameter_in_the_numeric_checker_is_a_format():
    found = [hit for path in sorted(NUMERIC.rglob("*.py"))
             for hit in _dtype_names(path.read_text(encoding="utf-8"), path.name)]
    assert found == []


def test_the_scan_sees_a_dtype_taken_as_a_name():
    planted = "def measure(x, dtype: str) -> float:\n    return 0.0\n"
    assert _dtype_names(planted, "planted.py") == ["planted.py:measure"]
    assert _dtype_names(planted.replace("str", "Format"), "planted.py") == []


def test_every_name_held_is_still_there():
    # an entry the code no longer has would excuse the next function of that name
    names = {(path.name, node.name) for path in NUMERIC.rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert set(NAMES_HELD) <= names


@pytest.mark.parametrize("name", FORMATS)
def test_a_configuration_parses_its_name_once_and_a_command_prints_it(name):
    configuration = Configuration("numpy", name, "cpu")
    assert configuration.format is FORMATS[name] and configuration.dtype == name
    where = Where(configuration.row, configuration.format, configuration.device,
                  configuration.mode)
    theorem = discover().by_name()["softmax_jacobian"]
    assert f"--dtype {name} " in rerun_command(theorem, where, 3)


def test_a_format_is_never_equal_to_its_name():
    # why the scan matters: a name where a format is expected compares False, silently
    assert FLOAT32 != "float32" and str(FLOAT32) == "float32"
    assert backend("mlx").measured_as(FORMATS["float64"]) is FLOAT32
