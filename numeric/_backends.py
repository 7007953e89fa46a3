"""The backends the numeric checker runs on: one table, one row per backend.

A row is everything the project knows about a backend: its name, the distribution whose version
results record, the array module, what compiled code may call on it (its compiler target), the
dtypes each device kind supports and what each is measured as, whether its float64 decides
truth, its execution modes, the few operations that differ between backends (setup, devices,
placing arrays, a device scope, jit, autodiff), and capability flags where a claim kind must
work around the module. The compiler, the records, the results and their view, the numeric
claim kinds and the kernel checker read this table instead of listing backends or testing their
names.

Adding a backend is one row in :data:`BACKENDS` plus its adapter functions (a section of this
module, as for NumPy, JAX and MLX, or a module of its own the row points to): one adapter per
framework, which the numeric checker and the kernel checker both use (every backend is a
framework kernels may be written in; ``attnproof/kernels/_frameworks.py`` builds its view of
a backend from the row, and holds an adapter only for a framework that is no backend, PyTorch).
Compiled code only ever calls ``xp.<function>``. Backends import on first use, and one that
cannot be imported, or imported cannot start (JAX with a ``JAX_PLATFORMS`` this machine cannot
serve), is reported unavailable, never raised.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import os
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import numpy as np
import numpy.typing as npt

from attnproof.symbolic import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, FORMATS, Format

from ._devices import Device, kind_of, named, platform_kind

if TYPE_CHECKING:
    import mlx.core as mx

    from attnproof.symbolic import Theorem

# an array of any backend's module (NumPy, JAX, MLX): no one type covers them all
Array = Any
# an array module, or a namespace standing in for one (``_Bfloat16Numpy``)
ArrayModule = Any
# a framework's own device object (a JAX Device, an MLX Device; None for NumPy's CPU): each
# adapter takes its own framework's, so the table can name no one type for them
NativeDevice = Any

ALL_FLOATS = tuple(FORMATS.values())


def _first_line(error: BaseException) -> str:
    """An exception as one line: its type, and the first line of its message if it has one."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


@dataclass(frozen=True)
class Target:
    """What the emitted source may call on one array module.

    ``missing`` declares the NumPy names the module lacks, so a gap is refused when compiling,
    naming the target, instead of surfacing as an AttributeError mid-run. ``einsum`` spells a
    contraction; NumPy's has no bfloat16 loop and upcasts under ``optimize``, hence the cast back.
    """

    name: str
    einsum: str
    missing: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class Backend:
    """One array backend; ``dtypes`` maps a device kind ("cpu", "gpu", ...) to its dtypes.

    ``package``: the distribution whose version the results record. ``compiler``: what
    compiled code may call on ``module`` (``target`` is its name, the key the compiler takes).
    ``reference``: its float64 is trusted to decide truth. ``accuracy`` maps a dtype to the
    dtype whose epsilon honestly measures it, where the two differ (MLX float64).
    ``linalg_on_cpu``: its decompositions (eigvalsh, svd) run on the CPU stream only.
    ``index_array``: the module function that turns NumPy integer indices into its array
    (``asarray``, or ``array`` where the module has no ``asarray``).

    What the kernel checker asks of the same adapter: ``prepare`` (what any use of the module
    needs, where ``setup`` configures the numeric checker's own arithmetic, in its own process:
    a kernel is never called under ``setup``'s configuration), ``select`` (make a device the
    default for the code a kernel runs), ``kernel_scope`` (the configuration a user's kernel
    is called under, for a dtype and whether its declaration asks for 64-bit types: the user's
    own, whatever ``setup`` did in this process, restored when the call returns),
    ``kernel_dtype_reason`` (why arrays of a dtype cannot be made under the configuration in
    effect, None when they can), ``vjp`` (differentiate a kernel), ``permute`` (a view in
    another axis order; None where the module's arrays have no strides a user can see) and
    ``bind``/``bind_vjp`` (compile a kernel's call, where the module compiles).
    """

    name: str
    package: str
    module: str
    compiler: Target
    dtypes: Mapping[str, tuple[Format, ...]]
    modes: tuple[str, ...]
    reference: bool = True
    accuracy: Mapping[Format, Format] = field(default_factory=dict)
    setup: Callable[[types.ModuleType], None] = lambda module: None
    devices: Callable[[], dict[str, object]] = lambda: {"cpu": None}
    # (module, array, the NumPy name of the array's dtype: a format's storage, bool, int32,
    # device) -> the array on the device
    place: Callable[[ArrayModule, npt.ArrayLike, str, NativeDevice], Array] = (
        lambda xp, array, dtype, device: xp.asarray(array, dtype=dtype))
    scope: Callable[[NativeDevice], contextlib.AbstractContextManager] = (
        lambda device: contextlib.nullcontext())
    # (module, format) -> the module the compiled statements call for that format
    namespace: Callable[[types.ModuleType, Format], Any] = lambda module, dtype: module
    compile: Callable = lambda function: function
    stores_executables: bool = False  # compiled programs can be kept across runs
    jacobian: Callable | None = None
    linalg_on_cpu: bool = False
    index_array: str = "asarray"
    notes: str = ""
    prepare: Callable[[types.ModuleType], None] = lambda module: None
    select: Callable[[NativeDevice], None] = lambda device: None
    kernel_scope: Callable[[str, bool], contextlib.AbstractContextManager] = (
        lambda dtype, asks_x64: contextlib.nullcontext())
    kernel_dtype_reason: Callable[[str], str | None] = lambda dtype: None
    # (f, primals, cotangent) -> the cotangents of f's inputs, f returning one array
    vjp: Callable | None = None
    # (array, axis order) -> the same memory seen in that axis order
    permute: Callable | None = None
    # (fn, keywords, mode) -> (q, k, v) -> output, compiled where mode is not "eager"
    bind: Callable | None = None
    # (fn, keywords, first, mode) -> (q, k, v, g) -> (dq, dk, dv); first picks fn's output
    bind_vjp: Callable | None = None
    explain_failed_start: Callable[[BaseException], str] = _first_line
    # its float64 is the ground truth every other configuration is measured against
    truth: bool = False
    # the module has a switch for 64-bit types that a kernel's declaration may ask for
    x64_switch: bool = False
    # (on_compiled(seconds), on_loaded()) -> None: calls them for each program the module
    # compiles, or reads from its persistent cache instead, from then on; None: it reports none
    listen_compilations: Callable[[Callable[[float], None], Callable[[], None]], None] | None = None
    # () -> None: its persistent compilation cache at attnproof's, unless the user set one of
    # their own; None: it keeps no compiled programs across runs
    kernel_compilation_cache: Callable[[], None] | None = None
    # what this backend gives a claim's numeric route beyond running statements, by the names
    # of ``CAPABILITIES`` (a claim's ``numeric_needs``)
    gives: frozenset[str] = frozenset()

    @property
    def target(self) -> str:
        return self.compiler.name

    @property
    def autodiff(self) -> bool:
        return self.jacobian is not None

    @property
    def default_mode(self) -> str:
        return self.modes[0]

    def load(self) -> types.ModuleType:
        """The array module, configured; raises ImportError when the backend is not installed."""
        return _load(self)

    def measured_as(self, dtype: Format) -> Format:
        """The format whose epsilon measures ``dtype``'s results here (``accuracy``)."""
        return self.accuracy.get(dtype, dtype)


@functools.cache
def _load(backend: Backend) -> types.ModuleType:
    from . import _time_log

    with _time_log.phase("imports"):
        module = prepared(backend)
        backend.setup(module)
    return module


@functools.cache
def prepared(backend: Backend) -> types.ModuleType:
    """The array module with what any use of it needs (``Backend.prepare``), without the numeric
    checker's own configuration: what the kernel checker calls a kernel with."""
    module = importlib.import_module(backend.module)
    backend.prepare(module)
    return module


# -- NumPy --------------------------------------------------------------------------------


def _numpy_place(xp: ArrayModule, array: npt.ArrayLike, array_dtype: str,
                 device: object) -> np.ndarray:
    return np.asarray(array).astype(_numpy_dtype(array_dtype))


def _numpy_dtype(name: str) -> np.dtype:
    """NumPy's dtype of a format (bfloat16's from ml_dtypes), or of another dtype a kernel's
    arrays are placed in (a boolean mask, integer lengths)."""
    return FORMATS[name].numpy_dtype if name in FORMATS else np.dtype(name)


def _numpy_namespace(module: types.ModuleType,
                     dtype: Format) -> types.ModuleType | _Bfloat16Numpy:
    """NumPy for ``dtype``: its einsum has no bfloat16 loop, so bfloat16 contractions accumulate
    in float32 and round back, as bfloat16 matrix units do."""
    if dtype != BFLOAT16:
        return module
    return _Bfloat16Numpy(module)


class _Bfloat16Numpy(types.SimpleNamespace):
    def __init__(self, module: types.ModuleType) -> None:
        super().__init__()
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def einsum(self, spec: str, *operands: npt.ArrayLike, **options: Any) -> np.ndarray:
        widened = [np.asarray(o, np.float32) for o in operands]
        result = self._module.einsum(spec, *widened, **options)
        return np.asarray(result).astype(_numpy_dtype("bfloat16"))


# -- JAX ----------------------------------------------------------------------------------


# what this process had for the settings the numeric checker's setup changes, read just before
# it changed them (empty while it has not run here): the configuration a user's kernel is called
# under, as the user set it (``_jax_kernel_scope``)
_JAX_BEFORE_SETUP: dict[str, object] = {}


def _jax_setup(module: types.ModuleType) -> None:
    """The numeric checker's own configuration of JAX, for the whole process it runs in (its
    workers, or a test session that checks theorems): float64 arrays stay float64, and matrix
    products are exact in float32 (the CPU default already is; GPUs and TPUs otherwise use TF32
    or bfloat16 passes). A kernel checked in the same process is called under the settings the
    process had before this (``_jax_kernel_scope``)."""
    import jax

    # JAX's options are properties it adds to Config at import: its stubs declare none of them
    _JAX_BEFORE_SETUP.setdefault(
        "jax_enable_x64", bool(jax.config.jax_enable_x64))  # type: ignore[attr-defined]
    _JAX_BEFORE_SETUP.setdefault(
        "jax_default_matmul_precision",
        jax.config.jax_default_matmul_precision)  # type: ignore[attr-defined]
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_default_matmul_precision", "highest")
    from . import _compile_cache, _time_log

    _compile_cache.configure(jax)
    _time_log.listen()


def jax_user_setting(name: str) -> Any:  # whatever type the option has
    """JAX's ``name`` as the user has it: as this process had it before the numeric checker's
    setup changed it, or as it is now where the setup has not run here."""
    import jax

    return _JAX_BEFORE_SETUP[name] if name in _JAX_BEFORE_SETUP else getattr(jax.config, name)


@contextlib.contextmanager
def _jax_kernel_scope(dtype: str, asks_x64: bool) -> Iterator[None]:
    """A user's kernel called under the user's own configuration: ``jax_enable_x64`` and the
    default matmul precision as the user has them (``jax_user_setting``), but x64 switched on
    for a float64 call whose declaration asks for it. Both are JAX's thread-local context
    managers: nothing outside the call sees them, and each is restored when it returns."""
    import jax

    x64 = bool(jax_user_setting("jax_enable_x64")) or (asks_x64 and dtype == "float64")
    with jax.enable_x64(x64), \
            jax.default_matmul_precision(jax_user_setting("jax_default_matmul_precision")):
        yield


JAX_X64_NEEDED = ("float64 needs JAX's jax_enable_x64, which is off here (JAX would make float32 "
                  "arrays of it); the checker leaves the setting as the user has it: switch it "
                  "on (JAX_ENABLE_X64=1, or jax.config.update(\"jax_enable_x64\", True) before "
                  "the check), or declare the kernel with enable_x64=True to have it switched "
                  "on around the kernel's float64 calls only")


def _jax_kernel_dtype_reason(dtype: str) -> str | None:
    """Why JAX cannot make arrays of ``dtype`` under the configuration in effect (float64 with
    x64 off, which JAX turns into float32 without a word), None when it can."""
    import jax

    # an option JAX adds to Config at import, which its stubs do not declare
    if dtype == "float64" and not jax.config.jax_enable_x64:  # type: ignore[attr-defined]
        return JAX_X64_NEEDED
    return None


def jax_devices() -> dict[str, object]:
    """JAX's devices on every platform it initialised here: its default platform (a GPU or TPU
    where there is one) and the host CPU beside it, which JAX always has."""
    import jax

    found = list(jax.devices())
    if all(platform_kind(d.platform) != "cpu" for d in found):
        found += jax.devices("cpu")
    return named(found, lambda d: platform_kind(d.platform), lambda d: d.id)


def _jax_failed_start(error: BaseException) -> str:
    """JAX starts its platforms at the first device query; a ``JAX_PLATFORMS`` this machine
    cannot serve (``cuda`` carried over from a GPU job) fails there, with a RuntimeError or, for
    ``cuda`` without a GPU, a bare AssertionError. The setting is named, and left as it is."""
    setting = os.environ.get("JAX_PLATFORMS")
    said = _first_line(error)
    if not setting:
        return said
    jax_said = f"; JAX said {said}" if str(error).strip() else ""
    return (f"JAX_PLATFORMS={setting!r} names no platform JAX can start on this machine (unset "
            f"it, or set JAX_PLATFORMS=cpu{jax_said})")


def _jax_place(xp: ArrayModule, array: npt.ArrayLike, array_dtype: str,
               device: object) -> Array:
    """Rounded to ``array_dtype`` on the host, as ``jnp.asarray`` does too, but without the
    compiled no-op conversion it runs afterwards: one compilation fewer per shape and dtype."""
    import jax

    return jax.device_put(np.asarray(array).astype(_numpy_dtype(array_dtype)), device)


def _jax_scope(device: object) -> contextlib.AbstractContextManager:
    import jax

    return jax.default_device(device)


def _jax_compile(function: Callable) -> Callable:
    import jax

    return jax.jit(function)


# the jax.monitoring events: an XLA compilation (its duration) and a persistent-cache hit
JAX_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
JAX_CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"


def _jax_listen_compilations(on_compiled: Callable[[float], None],
                             on_loaded: Callable[[], None]) -> None:
    """``on_compiled`` for each XLA compilation (eager dispatch's per-primitive programs
    included), ``on_loaded`` for each program read from the persistent cache instead, as
    ``jax.monitoring`` reports them. A listener only counts: it changes nothing JAX does."""
    from jax import monitoring

    # JAX passes the event and duration by position: the names are its listener protocols'
    def duration(event: str, duration_secs: float, **_: str | int) -> None:
        if event == JAX_COMPILE_EVENT:
            on_compiled(duration_secs)

    def loaded(event: str, **_: str | int) -> None:
        if event == JAX_CACHE_HIT_EVENT:
            on_loaded()

    monitoring.register_event_duration_secs_listener(duration)
    monitoring.register_event_listener(loaded)


def _jax_kernel_compilation_cache() -> None:
    """JAX's persistent compilation cache at attnproof's, unless the user has a directory of
    their own (``$JAX_COMPILATION_CACHE_DIR`` or a setting of their code)."""
    import jax

    from ._compile_cache import configure

    # an option JAX adds to Config at import, which its stubs do not declare
    if not jax.config.jax_compilation_cache_dir:  # type: ignore[attr-defined]
        configure(jax)


def _jax_jacobian(primal: Callable, wrt: str) -> Callable:
    """``arrays -> d primal / d arrays[wrt]`` per batch row: (batch, *out, *wrt shape)."""
    import jax

    def single(arrays: dict[str, Any]) -> Array:
        def of_wrt(value: Array) -> Array:
            row = {k: (v[None] if hasattr(v, "shape") else v) for k, v in arrays.items()}
            row[wrt] = value[None]
            return primal(row, 1)[0]

        return jax.jacrev(of_wrt)(arrays[wrt])

    def batched(arrays: dict[str, Any]) -> Array:
        traced = {k: v for k, v in arrays.items() if hasattr(v, "shape")}
        static = {k: v for k, v in arrays.items() if not hasattr(v, "shape")}
        return jax.vmap(lambda t: single({**t, **static}))(traced)

    return batched


def _jax_vjp(f: Callable, primals: Sequence[Array], cotangent: Array) -> tuple[Array, ...]:
    import jax

    _, pullback = jax.vjp(f, *primals)
    return pullback(cotangent)


# a kernel's call traced once per function, static keywords and (for gradients) output picked
_JITTED: dict = {}
# each (traced call, signature) compiled once: the executable, or what its compilation raised
_COMPILED: dict = {}
# how many times each (traced call, signature) was compiled in this process: 1 each, unless
# the executables were dropped (``kernel_compilations`` reads it)
_COMPILATIONS: dict = {}


class _CompileFailed:
    """What compiling a signature raised, raised again for every later call of it: XLA compiles
    the same program the same way (a dtype its CPU backend cannot emit fails each time)."""

    def __init__(self, error: Exception) -> None:
        self.error, self.traceback = error, error.__traceback__

    def raise_again(self) -> NoReturn:
        raise self.error.with_traceback(self.traceback)


def kernel_compilations() -> dict:
    """Per (traced call, signature) of the kernels bound here, how many times it was compiled."""
    return dict(_COMPILATIONS)


def _signature(arguments: tuple) -> tuple:
    """What a compiled program is specific to, as ``jax.jit``'s own cache keys it: each array's
    shape, dtype, weak type and placement, the arguments' structure, and the configuration a
    trace reads (64-bit types, the default matmul precision)."""
    import jax

    leaves, structure = jax.tree_util.tree_flatten(arguments)
    return (structure, tuple((a.shape, str(a.dtype), bool(getattr(a, "weak_type", False)),
                              a.sharding) for a in leaves),
            # options JAX adds to Config at import, which its stubs do not declare
            bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
            jax.config.jax_default_matmul_precision)  # type: ignore[attr-defined]


def _compiled_call(key: tuple, jitted: Any, *arguments: Any) -> Any:
    """``jitted(*arguments)``, its program compiled once per signature (ahead of time, so that
    a compilation is counted, and one that failed is not attempted again)."""
    signature = (key, _signature(arguments))
    executable = _COMPILED.get(signature)
    if executable is None:
        lowered = jitted.lower(*arguments)  # a tracing error is the kernel's, raised each call
        _COMPILATIONS[signature] = _COMPILATIONS.get(signature, 0) + 1
        try:
            executable = lowered.compile()
        except Exception as error:  # noqa: BLE001 -- raised again, as it was, on each call
            executable = _CompileFailed(error)
        _COMPILED[signature] = executable
    if isinstance(executable, _CompileFailed):
        executable.raise_again()
    return executable(*arguments)


def _split_keywords(keywords: dict[str, Any]) -> tuple[dict[str, Any], tuple | None]:
    """Array keywords (traced) apart from the others (static, closed over), or None for the
    statics when one of them cannot be hashed."""
    import jax

    arrays = {k: v for k, v in keywords.items() if isinstance(v, jax.Array)}
    statics = tuple(sorted((k, v) for k, v in keywords.items() if k not in arrays))
    try:
        hash(statics)
    except TypeError:
        return arrays, None
    return arrays, statics


def _jax_bind(fn: Callable, keywords: dict[str, Any], mode: str | None = None) -> Callable:
    """``fn`` with its keywords, under ``jit`` (the default mode): compiled once per shape,
    dtype and static keyword, where eager dispatch would compile every primitive anew for each
    shape. ``mode="eager"`` calls it as it stands, as a user's eager code does."""
    import jax

    arrays, statics = _split_keywords(keywords)
    if statics is None or mode == "eager":  # an unhashable keyword: run eagerly
        return lambda q, k, v: fn(q, k, v, **keywords)
    key = ("forward", fn, statics)
    if key not in _JITTED:
        _JITTED[key] = jax.jit(lambda q, k, v, arrays: fn(q, k, v, **arrays, **dict(statics)))
    return lambda q, k, v: _compiled_call(key, _JITTED[key], q, k, v, arrays)


def _jax_bind_vjp(fn: Callable, keywords: dict[str, Any], first: Callable,
                  mode: str | None = None) -> Callable:
    """The VJP of ``fn`` as one jitted program (forward and backward compiled together), or
    eagerly with ``mode="eager"``."""
    import jax

    arrays, statics = _split_keywords(keywords)
    if statics is None or mode == "eager":
        return lambda q, k, v, g: jax.vjp(lambda *p: first(fn(*p, **keywords)), q, k, v)[1](g)
    key = ("vjp", fn, statics, first)
    if key not in _JITTED:
        def pullback(q: Array, k: Array, v: Array, g: Array,
                     arrays: dict[str, Any]) -> tuple[Array, ...]:
            def forward(*p: Array) -> Array:
                return first(fn(*p, **arrays, **dict(statics)))

            return jax.vjp(forward, q, k, v)[1](g)

        _JITTED[key] = jax.jit(pullback)
    return lambda q, k, v, g: _compiled_call(key, _JITTED[key], q, k, v, g, arrays)


# -- MLX ----------------------------------------------------------------------------------


def mlx_devices() -> dict[str, object]:
    import mlx.core as mx

    found: dict[str, object] = {}
    for name, kind in (("cpu", mx.cpu), ("gpu", mx.gpu)):
        count = mx.device_count(kind) if mx.is_available(kind) else 0
        for n in range(count):
            found[name if count == 1 else f"{name}:{n}"] = mx.Device(kind, n)
    return found  # a CPU-only build has no gpu: asking for one skips, never runs on the CPU


def _mlx_place(xp: ArrayModule, array: npt.ArrayLike, array_dtype: str,
               device: object) -> Array:
    if array_dtype == "bool":  # a kernel's boolean mask
        return xp.array(np.asarray(array, dtype=bool))
    return xp.array(np.asarray(array, np.float32 if array_dtype == "bfloat16" else None),
                    dtype=getattr(xp, array_dtype))


def _mlx_select(device: mx.Device) -> None:
    import mlx.core as mx

    mx.set_default_device(device)


@contextlib.contextmanager
def _mlx_kernel_scope(dtype: str, asks_x64: bool) -> Iterator[None]:
    """A kernel's call with MLX's default device made the cell's (``_mlx_select``, as arrays
    are placed), and the process's own default device restored when the call returns."""
    import mlx.core as mx

    before = mx.default_device()
    try:
        yield
    finally:
        mx.set_default_device(before)


def _mlx_vjp(f: Callable, primals: Sequence[Array], cotangent: Array) -> tuple[Array, ...]:
    import mlx.core as mx

    # a function of several outputs (O and its lse) takes a cotangent for each
    cotangents = list(cotangent) if isinstance(cotangent, tuple) else [cotangent]
    _, grads = mx.vjp(f, list(primals), cotangents)
    return tuple(grads)


def _mlx_transpose(array: Array, axes: Sequence[int]) -> Array:
    import mlx.core as mx

    return mx.transpose(array, axes)


def _mlx_scope(device: mx.Device) -> contextlib.AbstractContextManager:
    import mlx.core as mx

    return mx.stream(device)


def _mlx_jacobian(primal: Callable, wrt: str) -> Callable:
    """The Jacobian from ``mlx.core.vjp``: rows of a batch are independent, so one cotangent
    per output entry, the same in every row, gives that entry's gradient for the whole batch."""
    import mlx.core as mx

    def batched(arrays: dict[str, Any]) -> Array:
        batch = arrays[wrt].shape[0]

        def of_wrt(value: Array) -> Array:
            return primal({**arrays, wrt: value}, batch)

        out = of_wrt(arrays[wrt])
        entries = math.prod(out.shape[1:])
        basis = mx.eye(entries, dtype=out.dtype).reshape((entries, 1, *out.shape[1:]))
        cotangents = mx.broadcast_to(basis, (entries, *out.shape))

        def row(cotangent: Array) -> Array:
            return mx.vjp(of_wrt, [arrays[wrt]], [cotangent])[1][0]

        gradients = mx.vmap(row)(cotangents)  # (entries, batch, *wrt shape)
        gradients = mx.moveaxis(gradients, 0, 1)
        return gradients.reshape((batch, *out.shape[1:], *arrays[wrt].shape[1:]))

    return batched


BACKENDS: tuple[Backend, ...] = (
    Backend(
        name="numpy",
        package="numpy",
        module="numpy",
        compiler=Target("numpy", "xp.einsum({operands}, optimize=True).astype(dtype, copy=False)"),
        dtypes={"cpu": ALL_FLOATS},
        modes=("eager",),
        place=_numpy_place,
        namespace=_numpy_namespace,
        notes="no autodiff: derivative claims compare the SymPy derivative with the closed form",
        permute=np.transpose,
        truth=True,
        gives=frozenset({"counted arrays"}),
    ),
    Backend(
        name="jax",
        package="jax",
        module="jax.numpy",
        compiler=Target("jax", "xp.einsum({operands})"),
        dtypes={"cpu": ALL_FLOATS, "gpu": ALL_FLOATS, "tpu": (FLOAT32, BFLOAT16)},
        modes=("jit", "eager"),
        setup=_jax_setup,
        devices=jax_devices,
        place=_jax_place,
        scope=_jax_scope,
        compile=_jax_compile,
        stores_executables=True,
        jacobian=_jax_jacobian,
        kernel_scope=_jax_kernel_scope,
        kernel_dtype_reason=_jax_kernel_dtype_reason,
        vjp=_jax_vjp,
        bind=_jax_bind,
        bind_vjp=_jax_bind_vjp,  # a jax array has no strides a user can see: no permute
        explain_failed_start=_jax_failed_start,
        x64_switch=True,
        listen_compilations=_jax_listen_compilations,
        kernel_compilation_cache=_jax_kernel_compilation_cache,
    ),
    Backend(
        name="mlx",
        package="mlx",
        module="mlx.core",
        # mlx.core has no amax, amin, select, dot, diagflat (nor the ndarray.dot method)
        compiler=Target("mlx", "xp.einsum({operands})",
                        frozenset({"amax", "amin", "select", "dot", "diagflat", "einsum_path"})),
        # Metal has no float64; on CPU float64 exists but exp runs in float32 (see _tolerance)
        dtypes={"cpu": ALL_FLOATS, "gpu": (FLOAT32, FLOAT16, BFLOAT16)},
        modes=("eager",),  # mx.compile costs 0.5-3.6 s per shape, and shapes vary
        reference=False,
        accuracy={FLOAT64: FLOAT32},
        devices=mlx_devices,
        place=_mlx_place,
        scope=_mlx_scope,
        jacobian=_mlx_jacobian,
        linalg_on_cpu=True,
        index_array="array",
        select=_mlx_select,
        kernel_scope=_mlx_kernel_scope,
        vjp=_mlx_vjp,
        permute=_mlx_transpose,
    ),
)


def backend(name: str) -> Backend:
    for row in BACKENDS:
        if row.name == name:
            return row
    raise KeyError(f"unknown backend {name!r}; known: {[b.name for b in BACKENDS]}")


def truth_row() -> Backend:
    """The backend whose float64 is the ground truth."""
    return next(row for row in BACKENDS if row.truth)


def is_truth(row: Backend, dtype: Format) -> bool:
    """Whether ``row`` in ``dtype`` is the ground truth's configuration itself."""
    return row.truth and dtype == FLOAT64


def reference_names() -> tuple[str, ...]:
    """The backends whose float64 decides truth."""
    return tuple(row.name for row in BACKENDS if row.reference)


def unavailable_reason(row: Backend) -> str | None:
    """Why ``row`` cannot run here (not installed, or installed but unable to start), or None."""
    return _not_installed(row) or start_failure(row)


def _not_installed(row: Backend) -> str | None:
    try:
        row.load()
    except ImportError as error:
        return f"{row.name} is not installed ({error})"
    return None


@functools.cache
def start_failure(row: Backend) -> str | None:
    """Why the installed ``row`` cannot start here, or None: listing its devices starts it.
    Asked once per process, as a framework starts once."""
    try:
        row.devices()
    except Exception as error:  # whatever a framework raises, the backend is reported unavailable
        return f"{row.name} cannot start here: {row.explain_failed_start(error)}"
    return None


def backends_that_cannot_start() -> dict[str, str]:
    """The backends installed here that cannot start, each with why."""
    return {row.name: reason for row in BACKENDS
            if _not_installed(row) is None and (reason := start_failure(row)) is not None}


class _ConfigurationFields(NamedTuple):
    backend: str
    dtype: str
    device: str
    mode: str


class Configuration(_ConfigurationFields):
    """Where one numeric record runs: a backend, a dtype, a device, a mode, as their names
    (``backend, dtype, device, mode = configuration``).

    Every configuration is created and checked here: the backend is a row of the table, the
    dtype a float format, the device a word of the one device vocabulary (written in its one
    spelling) and the mode one of the backend's; anything else raises ``ValueError`` naming
    what is known (``numeric.check`` turns it into a skipped record with that reason). Whether
    this machine has the backend, the device or the dtype on it is not checked here: a record
    says that (skipped, with the reason).
    """

    __slots__ = ()

    def __new__(cls, backend_name: str, dtype: str, device: str,
                mode: str | None = None) -> Configuration:
        try:
            row = backend(backend_name)
        except KeyError as error:
            raise ValueError(error.args[0]) from None
        if dtype not in FORMATS:
            raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(FORMATS)}")
        mode = row.default_mode if mode is None else mode
        if mode not in row.modes:
            raise ValueError(f"{row.name} has no mode {mode!r} (modes: {', '.join(row.modes)})")
        return super().__new__(cls, row.name, dtype, str(Device.parse(device)), mode)

    @property
    def row(self) -> Backend:
        return backend(self.backend)

    @property
    def format(self) -> Format:
        """The dtype's format (its name was checked when the configuration was made)."""
        return FORMATS[self.dtype]


# what a claim's numeric route may need of a backend (``Claim.numeric_needs``), given by the
# rows that can (``Backend.gives``), so that no claim kind names a backend
CAPABILITIES = {
    "counted arrays": "arrays whose creation and release a run can count (a NumPy subclass "
                      "can; XLA's and MLX's lazy graphs decide their buffers themselves)",
}


def available_configurations(theorem: Theorem | None = None,
                             profile: str | None = None) -> list[Configuration]:
    """Every (backend, dtype, device, mode) that can run here, default mode first per backend.

    With a ``profile`` name, only the modes it runs (each backend's default mode, unless the
    profile runs every mode). A claim with nothing to draw (worked numbers, ``Rounds``) has no
    configuration: it is settled exactly by the symbolic side. Every other claim keeps the
    configurations it makes sense for (``Claim.numeric_configurations``), of the backends that
    give what its numeric route needs (``Claim.numeric_needs``, ``CAPABILITIES``).
    """
    from ._strategies import profile as profile_named

    if theorem is not None and theorem.claim.nothing_to_draw:
        return []
    needs = needed_capabilities(theorem) if theorem is not None else frozenset()
    every_mode = profile is None or profile_named(profile).every_mode
    found: list[Configuration] = []
    for row in BACKENDS:
        if unavailable_reason(row) is not None or not needs <= row.gives:
            continue
        for mode in row.modes if every_mode else (row.default_mode,):
            for device in row.devices():
                for dtype in row.dtypes.get(kind_of(device), ()):
                    found.append(Configuration(row.name, dtype.name, device, mode))
    if theorem is not None:
        return list(theorem.claim.numeric_configurations(found))
    return found


def needed_capabilities(theorem: Theorem) -> frozenset[str]:
    """What ``theorem``'s claim needs of a backend; a need no row can name is a TheoremError
    naming the theorem, not a claim that silently runs nowhere."""
    needs = frozenset(theorem.claim.numeric_needs)
    unknown = sorted(needs - CAPABILITIES.keys())
    if unknown:
        from attnproof.symbolic import TheoremError

        raise TheoremError(f"{theorem.name}: its {type(theorem.claim).__name__} claim needs "
                           f"{', '.join(map(repr, unknown))} of a backend, which no backend row "
                           f"names; the capabilities are {sorted(CAPABILITIES)}")
    return needs


def to_numpy(array: Array) -> np.ndarray:
    if type(array).__module__.startswith("mlx"):
        import mlx.core as mx

        if array.dtype in (mx.float16, mx.bfloat16):  # exact in float32; NumPy lacks bfloat16
            array = array.astype(mx.float32)
    return np.asarray(array, dtype=np.float64)
