"""Fresh copies of a kernel's callables: the state they hold (a cache in a closure, the fields of
a bound object or of a callable instance, the arguments of a partial) as it was when the kernel
was declared, so that a case runs on the kernel as declared, whatever calls came before.

State held elsewhere (a module's globals) cannot be copied, and a framework's objects are not:
a jitted function, a compiled module or a model keep compilation caches and weights that a copy
would only rebuild, at a compilation per case. Both stay shared, and a callable that holds no
state of its own is used as it is.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import enum
import functools
import types
from typing import Any, TypeVar, cast

import numpy as np

_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), range, slice, type,
              types.ModuleType, types.BuiltinFunctionType, types.CodeType, enum.Enum)
# state of the user's own: containers, and NumPy arrays (a scratch buffer reused across calls)
_CONTAINERS = (dict, list, set, bytearray, collections.deque, np.ndarray)
# packages whose objects are shared, never copied (their caches are compilation caches)
FRAMEWORK_PACKAGES = ("jax", "jaxlib", "torch", "mlx", "numpy", "ml_dtypes", "sympy",
                      "nanobind")
# what ``copied`` copies: its copy is of the same type
_T = TypeVar("_T")


def _framework_owned(obj: object) -> bool:
    return not isinstance(obj, _CONTAINERS) and \
        type(obj).__module__.split(".")[0] in FRAMEWORK_PACKAGES


def holds_state(obj: object, seen: set[int] | None = None) -> bool:
    """Whether ``obj`` (a callable, or what a closure holds) reaches a value that can change:
    a dict, list, set, array or an instance that is not a frozen dataclass."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, _IMMUTABLE) or _framework_owned(obj):
        return False
    seen.add(id(obj))
    if isinstance(obj, types.FunctionType):
        return any(holds_state(value, seen) for value in _closure_values(obj)) or \
            any(holds_state(value, seen) for value in (obj.__defaults__ or ()))
    if isinstance(obj, types.MethodType):
        return holds_state(obj.__func__, seen) or holds_state(obj.__self__, seen)
    if isinstance(obj, functools.partial):
        return any(holds_state(value, seen) for value in (obj.func, *obj.args,
                                                          *obj.keywords.values()))
    if isinstance(obj, (tuple, frozenset)):
        return any(holds_state(value, seen) for value in obj)
    # every dataclass, and each of its instances, has __dataclass_params__ (typeshed's
    # DataclassInstance names only __dataclass_fields__)
    if dataclasses.is_dataclass(obj) and cast(Any, obj).__dataclass_params__.frozen:
        return any(holds_state(getattr(obj, f.name), seen) for f in dataclasses.fields(obj))
    if isinstance(obj, _CONTAINERS):
        return True
    # a compiled function of an extension module has nothing a copy could reset
    return not (callable(obj) and not hasattr(obj, "__dict__"))


def copied(obj: _T, memo: dict[int, Any]) -> _T:
    """A copy of ``obj`` whose state is a copy of its state; shared values (one dict behind two
    closures) stay shared between the copies through ``memo``."""
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, _IMMUTABLE) or _framework_owned(obj):
        return obj
    if isinstance(obj, types.FunctionType):
        if not holds_state(obj):
            return obj
        cells = tuple(types.CellType() for _ in obj.__closure__ or ())
        function = types.FunctionType(obj.__code__, obj.__globals__, obj.__name__,
                                      None, cells or None)
        memo[id(obj)] = function
        function.__defaults__ = copied(obj.__defaults__, memo)
        function.__kwdefaults__ = copied(obj.__kwdefaults__, memo)
        function.__qualname__, function.__module__ = obj.__qualname__, obj.__module__
        function.__dict__.update(obj.__dict__)
        for cell, value in zip(cells, _closure_values(obj, missing=_EMPTY), strict=True):
            if value is not _EMPTY:
                cell.cell_contents = copied(value, memo)
        return cast(_T, function)  # obj is a FunctionType here: its copy is one too
    if isinstance(obj, types.MethodType):
        method = types.MethodType(copied(obj.__func__, memo), copied(obj.__self__, memo))
        memo[id(obj)] = method
        return cast(_T, method)  # obj is a MethodType here: its copy is one too
    if isinstance(obj, functools.partial):
        partial = functools.partial(copied(obj.func, memo),
                                    *(copied(a, memo) for a in obj.args),
                                    **{k: copied(v, memo) for k, v in obj.keywords.items()})
        memo[id(obj)] = partial
        return cast(_T, partial)  # obj is a partial here: its copy is one too
    try:
        duplicate = copy.deepcopy(obj, memo)
    except Exception:  # noqa: BLE001 -- what cannot be copied stays shared
        duplicate = obj
    memo[id(obj)] = duplicate
    return duplicate


_EMPTY = object()


def _closure_values(function: types.FunctionType, missing: object = None) -> list[object]:
    values = []
    for cell in function.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # a cell not yet filled
            values.append(missing)
    return values
