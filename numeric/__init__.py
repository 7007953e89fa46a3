"""Numeric checking of attnproof theorems: compile statements to array code, draw inputs with
Hypothesis, decide truth in float64 and stability in lower precision, per backend.

Importing this package imports none of it: each name below loads its module on first use, so
reading a record (``NumericRecord``) costs the record module alone, and Hypothesis and the
search load with ``check``. Backends load on first use of a backend.

The rest of attnproof imports these names, never a private module of this package
(``tests/packaging/test_layering.py``). Type checkers and editors read the same names, imported
eagerly, from the ``TYPE_CHECKING`` block below, and ``__all__`` is written out so that they
count the names exported under another name than their own (``profile_timeout``) as exported
too; ``tests/packaging/test_type_exports.py`` holds both to ``_EXPORTS``. At run time the block
is skipped and every name stays lazy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# public name -> (module, its name there)
_EXPORTS = {
    "BACKENDS": ("_backends", "BACKENDS"),
    "Backend": ("_backends", "Backend"),
    "available_configurations": ("_backends", "available_configurations"),
    "backend": ("_backends", "backend"),
    "prepared_module": ("_backends", "prepared"),
    "to_numpy": ("_backends", "to_numpy"),
    "kernel_compilations": ("_backends", "kernel_compilations"),
    "Configuration": ("_backends", "Configuration"),
    "jax_devices": ("_backends", "jax_devices"),
    "mlx_devices": ("_backends", "mlx_devices"),
    "unavailable_reason": ("_backends", "unavailable_reason"),
    "start_failure": ("_backends", "start_failure"),
    "backends_that_cannot_start": ("_backends", "backends_that_cannot_start"),
    "ACCELERATORS": ("_devices", "ACCELERATORS"),
    "Device": ("_devices", "Device"),
    "DeviceError": ("_devices", "DeviceError"),
    "accelerator_folder": ("_devices", "accelerator_folder"),
    "device_kind": ("_devices", "kind_of"),
    "devices": ("_devices", None),
    "missing_devices": ("_devices", "missing"),
    "named_devices": ("_devices", "named"),
    "selected_devices": ("_devices", "selected"),
    "share_accelerators": ("_devices", "share_accelerators"),
    "cache_directory": ("_compile_cache", "cache_directory"),
    "cache_folder_name": ("_compile_cache", "folder_name"),
    "disable_caches": ("_compile_cache", "disable"),
    "configure_compilation_cache": ("_compile_cache", "configure"),
    "write_atomically": ("_compile_cache", "write_atomically"),
    "Compiled": ("_compiler", "Compiled"),
    "compile_expression": ("_compiler", "compile_expression"),
    "FINDING": ("_record", "FINDING"),
    "BACKEND_FINDING": ("_record", "BACKEND_FINDING"),
    "NOT_EVALUATED": ("_record", "NOT_EVALUATED"),
    "NumericRecord": ("_record", "NumericRecord"),
    "NumericStatus": ("_record", "NumericStatus"),
    "CellStatus": ("_record", "CellStatus"),
    "CELL_FAILURES": ("_record", "CELL_FAILURES"),
    "UNDECIDED_SHARE_NOTED": ("_evidence", "UNDECIDED_SHARE_NOTED"),
    "undecided_share": ("_evidence", "undecided_share"),
    "check": ("_search", "check"),
    "ROUNDING_MODEL": ("_rounding", "ROUNDING_MODEL"),
    "MINIMUM_DECIDED": ("_driver", "MINIMUM_DECIDED"),
    "MINIMUM_DECIDED_CASES": ("_driver", "MINIMUM_DECIDED_CASES"),
    "too_few_cases": ("_driver", "too_few_cases"),
    "settle_cell": ("_driver", "settle_cell"),
    "find_failure": ("_driver", "find_failure"),
    "DERANDOMIZED_SEED": ("_driver", "DERANDOMIZED_SEED"),
    "draw_each": ("_driver", "draw_each"),
    "time_log": ("_time_log", None),
    "PROFILE_NAMES": ("_profiles", "PROFILE_NAMES"),
    "Profile": ("_profiles", "Profile"),
    "profile": ("_profiles", "profile"),
    "profile_timeout": ("_profiles", "timeout"),
    "edge_draws": ("_strategies", "edge_draws"),
    "from_theorem": ("_strategies", "from_theorem"),
    "KERNEL_CONVENTION_ULPS": ("_tolerance", "KERNEL_CONVENTION_ULPS"),
    "KERNEL_FLOOR_ULPS": ("_tolerance", "KERNEL_FLOOR_ULPS"),
    "KERNEL_LIMIT": ("_tolerance", "KERNEL_LIMIT"),
    "STABILITY_ULPS": ("_tolerance", "STABILITY_ULPS"),
    "TRUTH_ULPS": ("_tolerance", "TRUTH_ULPS"),
}
# the same names, written out for the tools that read ``__all__`` without running this file
__all__ = [
    "BACKENDS", "Backend", "available_configurations", "backend", "prepared_module", "to_numpy",
    "kernel_compilations",
    "Configuration", "jax_devices", "mlx_devices", "unavailable_reason", "start_failure",
    "backends_that_cannot_start", "ACCELERATORS", "Device",
    "DeviceError", "accelerator_folder", "device_kind", "devices", "missing_devices",
    "named_devices", "selected_devices", "share_accelerators", "cache_directory",
    "cache_folder_name", "disable_caches", "configure_compilation_cache", "write_atomically",
    "Compiled", "compile_expression",
    "FINDING", "BACKEND_FINDING", "NOT_EVALUATED", "NumericRecord", "NumericStatus", "CellStatus",
    "CELL_FAILURES",
    "UNDECIDED_SHARE_NOTED", "undecided_share", "check", "ROUNDING_MODEL", "MINIMUM_DECIDED",
    "MINIMUM_DECIDED_CASES", "too_few_cases", "settle_cell", "find_failure", "DERANDOMIZED_SEED",
    "draw_each", "time_log", "PROFILE_NAMES", "Profile", "profile", "profile_timeout",
    "edge_draws", "from_theorem", "KERNEL_CONVENTION_ULPS", "KERNEL_FLOOR_ULPS", "KERNEL_LIMIT",
    "STABILITY_ULPS", "TRUTH_ULPS",
]

if TYPE_CHECKING:  # what type checkers and editors see: _EXPORTS, imported eagerly
    from . import _devices as devices
    from . import _time_log as time_log
    from ._backends import BACKENDS as BACKENDS
    from ._backends import Backend as Backend
    from ._backends import Configuration as Configuration
    from ._backends import available_configurations as available_configurations
    from ._backends import backend as backend
    from ._backends import backends_that_cannot_start as backends_that_cannot_start
    from ._backends import jax_devices as jax_devices
    from ._backends import kernel_compilations as kernel_compilations
    from ._backends import mlx_devices as mlx_devices
    from ._backends import prepared as prepared_module
    from ._backends import start_failure as start_failure
    from ._backends import to_numpy as to_numpy
    from ._backends import unavailable_reason as unavailable_reason
    from ._compile_cache import cache_directory as cache_directory
    from ._compile_cache import configure as configure_compilation_cache
    from ._compile_cache import disable as disable_caches
    from ._compile_cache import folder_name as cache_folder_name
    from ._compile_cache import write_atomically as write_atomically
    from ._compiler import Compiled as Compiled
    from ._compiler import compile_expression as compile_expression
    from ._devices import ACCELERATORS as ACCELERATORS
    from ._devices import Device as Device
    from ._devices import DeviceError as DeviceError
    from ._devices import accelerator_folder as accelerator_folder
    from ._devices import kind_of as device_kind
    from ._devices import missing as missing_devices
    from ._devices import named as named_devices
    from ._devices import selected as selected_devices
    from ._devices import share_accelerators as share_accelerators
    from ._driver import DERANDOMIZED_SEED as DERANDOMIZED_SEED
    from ._driver import MINIMUM_DECIDED as MINIMUM_DECIDED
    from ._driver import MINIMUM_DECIDED_CASES as MINIMUM_DECIDED_CASES
    from ._driver import draw_each as draw_each
    from ._driver import find_failure as find_failure
    from ._driver import settle_cell as settle_cell
    from ._driver import too_few_cases as too_few_cases
    from ._evidence import UNDECIDED_SHARE_NOTED as UNDECIDED_SHARE_NOTED
    from ._evidence import undecided_share as undecided_share
    from ._profiles import PROFILE_NAMES as PROFILE_NAMES
    from ._profiles import Profile as Profile
    from ._profiles import profile as profile
    from ._profiles import timeout as profile_timeout
    from ._record import BACKEND_FINDING as BACKEND_FINDING
    from ._record import CELL_FAILURES as CELL_FAILURES
    from ._record import FINDING as FINDING
    from ._record import NOT_EVALUATED as NOT_EVALUATED
    from ._record import CellStatus as CellStatus
    from ._record import NumericRecord as NumericRecord
    from ._record import NumericStatus as NumericStatus
    from ._rounding import ROUNDING_MODEL as ROUNDING_MODEL
    from ._search import check as check
    from ._strategies import edge_draws as edge_draws
    from ._strategies import from_theorem as from_theorem
    from ._tolerance import KERNEL_CONVENTION_ULPS as KERNEL_CONVENTION_ULPS
    from ._tolerance import KERNEL_FLOOR_ULPS as KERNEL_FLOOR_ULPS
    from ._tolerance import KERNEL_LIMIT as KERNEL_LIMIT
    from ._tolerance import STABILITY_ULPS as STABILITY_ULPS
    from ._tolerance import TRUTH_ULPS as TRUTH_ULPS
else:  # at run time: each name loads its module on first use

    def __getattr__(name: str) -> object:
        if name not in _EXPORTS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, attribute = _EXPORTS[name]
        found = importlib.import_module(f".{module}", __name__)
        value = found if attribute is None else getattr(found, attribute)  # None: the module
        globals()[name] = value  # later reads skip this function
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
