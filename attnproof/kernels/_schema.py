"""Reading a conformance.json safely: valid against ``conformance.schema.json``.

The schema file describes the JSON ``attnproof kernels`` writes (``_matrix.to_json``); any JSON
Schema tool can check a file with it, and ``_matrix.write`` checks each file it writes. A file of
the wrong shape is refused with one line naming the field, e.g.
``$.kernels[0].cells[3].status: 'ok' is not one of [...]``, never a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from jsonschema.exceptions import ValidationError, best_match

from attnproof.report import schema_validator, short_message

SCHEMA_FILE = "conformance.schema.json"
# the characters of a value a message quotes, at most
QUOTED = 80


class ConformanceError(ValueError):
    """A conformance file that cannot be read, or that is not of the schema's shape."""


def problem(data: object) -> str | None:
    """What is wrong with ``data`` as a conformance file, naming the field; None when valid."""
    error = best_match(schema_validator(__package__, SCHEMA_FILE).iter_errors(data))
    return None if error is None else f"{error.json_path}: {_message(error)}"


def _message(error: ValidationError) -> str:
    """The validator's message on a line; a long value it quotes first (a whole kernel where a
    list belongs) is cut there, so that what is wrong with it still shows."""
    quoted = repr(error.instance)
    if len(quoted) > QUOTED and error.message.startswith(quoted):
        return short_message(short_message(quoted, QUOTED) + error.message[len(quoted):])
    return short_message(error.message)


def load_conformance(path: str | os.PathLike[str]) -> dict:
    """The parsed conformance file at ``path``; ``ConformanceError`` says why it cannot be.

    Infinity, -Infinity and NaN are read as the floats the checker wrote them for (a failed
    cell's ratio is Infinity)."""
    path = Path(path)
    if path.is_dir():
        raise ConformanceError(f"{path} is a directory, not a conformance file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConformanceError(f"{path} is not UTF-8 text: {error.reason}") from None
    except OSError as error:
        raise ConformanceError(f"cannot read {path}: {error.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConformanceError(f"{path} is not valid JSON: {error.msg} at line {error.lineno}, "
                               f"column {error.colno}") from None
    except RecursionError:
        raise ConformanceError(f"{path} is nested too deeply to be a conformance file") from None
    wrong = problem(data)
    if wrong is not None:
        raise ConformanceError(f"{path} is not a conformance file: {wrong}")
    return data
