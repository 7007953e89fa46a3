"""Reading a results JSON safely: valid against ``results.schema.json`` before anything renders.

The schema file is the machine-readable form of ``RESULTS.md``; any JSON Schema tool can check a
results file with it. A file of the wrong shape (a list, a number where a string belongs, a
missing field) is refused with one message naming the field, e.g.
``$.theorems[3].numeric[0].status: 'ok' is not one of [...]``, never a traceback.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
from jsonschema.exceptions import best_match

from .results import Report, report_from_json

if TYPE_CHECKING:
    from os import PathLike

SCHEMA_FILE = "results.schema.json"


class ResultsError(ValueError):
    """A results file that cannot be read, or that is not of the documented shape."""


@functools.cache
def _schema_bytes(package: str, name: str) -> bytes:
    return resources.files(package).joinpath(name).read_bytes()


@functools.cache
def schema_validator(package: str, name: str) -> jsonschema.Draft202012Validator:
    """The validator of the JSON Schema file ``name`` shipped in ``package`` (read once)."""
    return jsonschema.Draft202012Validator(json.loads(_schema_bytes(package, name)))


def problem(data: Any) -> str | None:  # a parsed JSON value of any shape
    """What is wrong with ``data`` as results, naming the field; None when it is valid."""
    error = best_match(schema_validator(__package__, SCHEMA_FILE).iter_errors(data))
    if error is not None:
        return f"{error.json_path}: {_short(error.message)}"
    return _duplicate_name(data["theorems"])


def _duplicate_name(theorems: list[dict]) -> str | None:
    """A theorem name used twice (which no schema keyword can say), at its second use."""
    first_use: dict[str, int] = {}
    for index, theorem in enumerate(theorems):
        name = theorem["name"]
        if name in first_use:
            return (f"$.theorems[{index}].name: {_short(repr(name), 80)} is already the name "
                    f"of $.theorems[{first_use[name]}]")
        first_use[name] = index
    return None


def _short(message: str, limit: int = 300) -> str:
    """A validator message cut to a line: it quotes the offending value, which may be huge."""
    flat = " ".join(message.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def load_results(path: str | PathLike[str],
                 valid_before: Callable[[str], bool] | None = None) -> Report:
    """The report in the results file at ``path``; ``ResultsError`` says why it cannot be.

    ``valid_before(digest)`` says whether a text of that ``results_digest`` was found valid
    against this schema before, so the check need not run again (``list`` and ``show`` read
    every run under reports/ on each call, and the check is most of their time)."""
    path = Path(path)
    text = _text(path)
    data = _parse(path, text)
    if valid_before is None or not valid_before(results_digest(text)):
        wrong = problem(data)
        if wrong is not None:
            raise ResultsError(f"{path} is not a results file: {wrong}")
    return report_from_json(data)


def results_digest(text: str) -> str:
    """What a results text is known valid by: the digest of the schema and the text together,
    so that a changed schema checks every file again."""
    schema = _schema_bytes(__package__, SCHEMA_FILE)
    return hashlib.sha256(schema + b"\0" + text.encode("utf-8")).hexdigest()


def _text(path: Path) -> str:
    if path.is_dir():
        raise ResultsError(f"{path} is a directory, not a results file")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except UnicodeDecodeError as error:
        raise ResultsError(f"{path} is not UTF-8 text: {error.reason}") from None
    except OSError as error:
        raise ResultsError(f"cannot read {path}: {error.strerror}") from None


def _parse(path: Path, text: str) -> Any:  # whatever JSON the text holds
    try:
        # NaN and Infinity are not JSON; read as the strings they are spelled with, the schema
        # refuses them and names the field where they stand
        return json.loads(text, parse_constant=str)
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not valid JSON: {error.msg} at line {error.lineno}, "
                           f"column {error.colno}") from None
    except RecursionError:
        raise ResultsError(f"{path} is nested too deeply to be a results file") from None
