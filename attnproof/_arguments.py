"""Checking command-line values against what exists, before any work starts.

Each check returns the value or raises ``argparse.ArgumentTypeError`` (a usage error, exit 2)
that lists the valid choices and suggests the closest one.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import math
import os
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from attnproof.numeric import Device, DeviceError, device_kind

if TYPE_CHECKING:
    from attnproof.numeric import Backend


def closest(value: str, choices: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.5)
    return found[0] if found else None


def unknown(what: str, value: str, choices: Collection[str]) -> str:
    """``unknown dtype 'fp16'; did you mean 'float16'? (choose from float64, ...)``"""
    guess = closest(value, choices)
    hint = f"; did you mean {guess!r}?" if guess else ""
    return f"unknown {what} {value!r}{hint} (choose from {', '.join(choices)})"


def unknown_theorem(name: str, known: list[str]) -> str:
    """``no theorem named 'x'; did you mean 'y'? (...)``, listing the names when few."""
    guess = closest(name, known)
    hint = f"; did you mean {guess!r}?" if guess else ""
    choices = (f"choose from {', '.join(known)}" if len(known) <= 12
               else f"`attnproof list` shows all {len(known)}")
    return f"no theorem named {name!r}{hint} ({choices})"


def one_of(what: str, choices: Iterable[str] | Callable[[], Iterable[str]]
           ) -> Callable[[str], str]:
    """An argparse ``type`` that accepts only ``choices`` (a sequence, or a function giving one,
    so that the numeric table is read only when the option is used)."""

    def check(value: str) -> str:
        known = tuple(choices() if callable(choices) else choices)
        if value not in known:
            raise argparse.ArgumentTypeError(unknown(what, value, known))
        return value

    check.__name__ = what  # argparse names the type in some messages
    return check


# -- the numeric table: backends, dtypes, device kinds, modes ----------------------------------


def _rows() -> tuple[Backend, ...]:
    from attnproof.numeric import BACKENDS

    return BACKENDS


def backend_names() -> tuple[str, ...]:
    return tuple(row.name for row in _rows())


def dtype_names() -> tuple[str, ...]:
    found = [d.name for row in _rows() for dtypes in row.dtypes.values() for d in dtypes]
    return tuple(dict.fromkeys(found))


def mode_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys(mode for row in _rows() for mode in row.modes))


def device(value: str) -> str:
    """A device kind (``cpu``, ``gpu``) or one device of a kind (``gpu:1``): the one device
    vocabulary of every command. Whether the machine has it is checked when the run starts."""
    try:
        return str(Device.parse(value))
    except DeviceError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def nothing_selected(backends: Collection[str] | None, dtypes: Collection[str] | None,
                     devices: Collection[str] | None,
                     modes: Collection[str] | None) -> str | None:
    """Why no row of the numeric table matches the filters together, or None if one does."""

    def allowed(chosen: Collection[str] | None, value: str) -> bool:
        return chosen is None or value in chosen

    kinds = None if devices is None else {device_kind(d) for d in devices}
    for row in _rows():
        if not allowed(backends, row.name) or not any(allowed(modes, m) for m in row.modes):
            continue
        for kind, row_dtypes in row.dtypes.items():
            if allowed(kinds, kind) and any(allowed(dtypes, d.name) for d in row_dtypes):
                return None
    chosen = [f"--{label} {' '.join(values)}" for label, values in
              (("backend", backends), ("dtype", dtypes), ("device", devices), ("mode", modes))
              if values]
    return (f"nothing to check: no backend offers {' with '.join(chosen)} "
            "(see numeric/_backends.py)")


def uninstalled(backends: Collection[str] | None) -> str | None:
    """Why none of the chosen backends can run here (none installed), or None."""
    if not backends:
        return None
    missing = [row.name for row in _rows()
               if row.name in backends and importlib.util.find_spec(row.module.split(".")[0])
               is None]
    if len(missing) < len(set(backends)):
        return None
    return f"nothing to check: backend {', '.join(missing)} is not installed here"


# -- numbers and paths ---------------------------------------------------------------------------


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def positive_seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value}")
    return number


def theorem_source(value: str) -> Path:
    """A ``--theorems`` value: an existing directory holding theorem files, or a .py file."""
    from attnproof.symbolic import source_problem  # here: the language loads SymPy

    problem = source_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return Path(value)


def unwritable(directory: Path) -> str | None:
    """Why reports cannot be written into ``directory`` (creating it if needed), or None.

    Checked without creating anything: the nearest existing ancestor must be a writable
    directory.
    """
    directory = Path(directory).absolute()
    existing = directory
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot write reports into {directory}: {existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot write reports into {directory}: {existing} is not writable"
    return None
