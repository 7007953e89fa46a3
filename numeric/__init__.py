"""Numeric checking of attnproof theorems: compile statements to array code, draw inputs with
Hypothesis, decide truth in float64 and stability in lower precision, per backend.

Importing this package imports none of it: each name below loads its module on first use, so
reading a record (``NumericRecord``) costs the record module alone, and Hypothesis and the
search load with ``check``. Backends load on first use of a backend.
"""

from __future__ import annotations

import importlib

# public name -> (module, its name there)
_EXPORTS = {
    "BACKENDS": ("_backends", "BACKENDS"),
    "Backend": ("_backends", "Backend"),
    "available_configurations": ("_backends", "available_configurations"),
    "backend": ("_backends", "backend"),
    "Configuration": ("_backends", "Configuration"),
    "Device": ("_devices", "Device"),
    "DeviceError": ("_devices", "DeviceError"),
    "devices": ("_devices", None),
    "Compiled": ("_compiler", "Compiled"),
    "compile_expression": ("_compiler", "compile_expression"),
    "FINDING": ("_record", "FINDING"),
    "NOT_EVALUATED": ("_record", "NOT_EVALUATED"),
    "NumericRecord": ("_record", "NumericRecord"),
    "NumericStatus": ("_record", "NumericStatus"),
    "UNDECIDED_SHARE_NOTED": ("_evidence", "UNDECIDED_SHARE_NOTED"),
    "undecided_share": ("_evidence", "undecided_share"),
    "check": ("_search", "check"),
    "time_log": ("_time_log", None),
    "PROFILE_NAMES": ("_profiles", "PROFILE_NAMES"),
    "Profile": ("_profiles", "Profile"),
    "profile": ("_profiles", "profile"),
    "profile_timeout": ("_profiles", "timeout"),
    "from_theorem": ("_strategies", "from_theorem"),
    "STABILITY_ULPS": ("_tolerance", "STABILITY_ULPS"),
    "TRUTH_ULPS": ("_tolerance", "TRUTH_ULPS"),
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    found = importlib.import_module(f".{module}", __name__)
    value = found if attribute is None else getattr(found, attribute)  # None: the module
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
