"""The generic kernel-conformance test, collected by the pytest plugin for the kernels a session
names (``--attnproof-kernel SPEC``, or ``attnproof_kernels`` in the pytest configuration): one
test per property × dtype × device of each kernel, as ``conformance_cells`` makes them, so
``pytest -n auto`` checks the cells in parallel, ``--attnproof-device D`` keeps them to a
device as it does the theorems' numeric tests, and the plugin's controller writes the
session's conformance matrix beside the theorem report (``reports/pytest/kernels/``).

A spec that does not load is one failing test naming it (``test_kernels_load``); the kernels
that load are checked all the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

import pytest

from ._check import DEFAULT_EXAMPLES
from ._declaration import Kernel
from ._pytest import KernelCell, assert_conforms, conformance_cells

if TYPE_CHECKING:
    from _pytest.mark.structures import ParameterSet  # what pytest.param returns

    from ._pytest import RecordProperty


@dataclass
class Loaded:
    """The kernels a session names, each with its spec (for replay commands), and why any
    spec did not load."""

    kernels: list[tuple[str, Kernel]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class _Configured(Protocol):
    """A pytest configuration as the plugin's ``pytest_configure`` leaves it, before any
    collection: the kernels the session names set on it (the plugin collects this module only
    where they are not None)."""

    attnproof_kernels: Loaded


def load(specs: Iterable[str]) -> Loaded:
    """Each spec as ``attnproof kernels --kernel`` reads it: a library kernel's name or
    ``module:attribute`` of a ``Kernel``."""
    from ._spec import load as load_kernel

    loaded = Loaded()
    for spec in specs:
        try:
            loaded.kernels.append((spec, load_kernel(spec)))
        except Exception as error:  # noqa: BLE001 -- named in a failing test, others still run
            loaded.errors.append(f"--attnproof-kernel {spec}: {type(error).__name__}: {error}")
    return loaded


def cells(config: pytest.Config) -> list[ParameterSet]:
    """One ``pytest.param`` per cell of every loaded kernel, on the session's devices."""
    devices = config.getoption("attnproof_device", None)
    examples = config.getoption("attnproof_kernel_examples", None) or DEFAULT_EXAMPLES
    # set by the plugin's pytest_configure (_Configured)
    return [param for spec, kernel in cast(_Configured, config).attnproof_kernels.kernels
            for param in conformance_cells(kernel, devices=devices, examples=examples,
                                           spec=spec)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.function is test_kernel_cell:
        metafunc.parametrize("cell", cells(metafunc.config))


def test_kernel_cell(cell: KernelCell, record_property: RecordProperty) -> None:
    assert_conforms(cell, record_property)


def test_kernels_load(request: pytest.FixtureRequest) -> None:
    errors = cast(_Configured, request.config).attnproof_kernels.errors  # set by the plugin
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)
