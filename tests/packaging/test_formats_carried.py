"""Inside the numeric checker and the kernel checker a dtype is a ``Format``, not its name: a
name is parsed once where it comes in (a configuration, a declaration, the command line, a
public function) and printed once where it goes out (a record, a cell, a command, the time
log). A ``Format`` compared with a name is never equal, so a parameter that took a name where
the rest passes formats would answer a silent False; the scan below keeps every ``dtype`` and
``compute`` parameter of both packages a ``Format`` outside the places that hold names, and the
type checker (``strict_equality``, pyproject.toml) refuses a format compared with a name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attnproof.numeric import Configuration, backend
from attnproof.numeric._driver import Where, rerun_command
from attnproof.symbolic import FLOAT32, FORMATS, discover

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "numeric", ROOT / "attnproof" / "kernels")
FORMAT_PARAMETERS = ("dtype", "compute")

# the functions whose ``dtype`` (or ``compute``) is a name, and why
NAMES_HELD = {
    # the boundary: names come in from the command line, pytest and the worker messages
    ("_backends.py", "__new__"): "Configuration: the names a configuration is made of",
    ("_search.py", "check"): "the public entry: a record is asked for by names",
    ("_search.py", "search"): "the public entry, with its ratios",
    ("_check.py", "check_cell"): "a cell is asked for, and records, its dtype by name",
    ("_check.py", "replay"): "public: a user replays a printed case by its dtype's name",
    ("_check.py", "cell"): "a result's cell looked up by the names it records",
    ("_tolerance.py", "proved_tolerance"): "public: a user names the dtype and compute",
    # names go out: the time log's keys, a replay command
    ("_time_log.py", "attributed"): "the time log's keys are the record's names",
    ("_check.py", "replay_command"): "the command prints the name",
    # a framework's configuration switch, asked by the name the user's library knows
    ("_backends.py", "_jax_kernel_scope"): "JAX's x64 switch, by the dtype's name",
    ("_backends.py", "_jax_kernel_dtype_reason"): "JAX's x64 switch, by the dtype's name",
    ("_backends.py", "_mlx_kernel_scope"): "MLX's configuration, by the dtype's name",
}


def _functions(source: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _dtype_names(source: str, filename: str) -> list[str]:
    """``file:function(parameter)`` for each function of ``source`` that takes a ``dtype`` or
    ``compute`` annotated as a name, outside ``NAMES_HELD``."""
    return [f"{filename}:{node.name}({argument.arg})" for node in _functions(source)
            for argument in (*node.args.args, *node.args.kwonlyargs)
            if argument.arg in FORMAT_PARAMETERS and argument.annotation is not None
            and "str" in ast.unparse(argument.annotation)
            and (filename, node.name) not in NAMES_HELD]


def _sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in package.rglob("*.py"))


def test_every_dtype_parameter_of_both_checkers_is_a_format():
    found = [hit for path in _sources()
             for hit in _dtype_names(path.read_text(encoding="utf-8"), path.name)]
    assert found == []


def test_the_scan_sees_a_dtype_taken_as_a_name():
    planted = "def measure(x, dtype: str) -> float:\n    return 0.0\n"
    assert _dtype_names(planted, "planted.py") == ["planted.py:measure(dtype)"]
    assert _dtype_names(planted.replace("dtype", "compute"), "planted.py") == [
        "planted.py:measure(compute)"]
    assert _dtype_names(planted.replace("str", "Format"), "planted.py") == []


def test_every_name_held_is_still_there():
    # an entry the code no longer has would excuse the next function of that name
    names = {(path.name, node.name) for path in _sources()
             for node in _functions(path.read_text(encoding="utf-8"))}
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
