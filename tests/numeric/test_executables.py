"""Compiled JAX programs kept across runs: a loaded program computes bit for bit what a fresh
compilation does and is not traced again; a damaged entry is compiled again, never trusted; a
changed theorem replaces its own programs and nobody else's; user code (``implementation=``)
is never stored; with caching off nothing is written."""

import contextlib
import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest
import sample_theorems as samples

from attnproof.numeric import _compile_cache, _executables
from attnproof.numeric._backends import backend
from attnproof.numeric._plan import Runner, plan_for
from attnproof.symbolic import FLOAT32, format_named

jax = pytest.importorskip("jax")
monitoring = pytest.importorskip("jax.monitoring")
compilation_cache = pytest.importorskip("jax.experimental.compilation_cache.compilation_cache")

SIZES = {"n_q": 2, "n_k": 3, "d_k": 2, "d_v": 2}
# Each test its own batch size, so its programs are new to this process's JAX as well
BATCHES = itertools.count(8)
TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv(_compile_cache.DIRECTORY_VARIABLE, str(directory))
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "")
    monkeypatch.setitem(SIZES, "batch", next(BATCHES))
    with _jax_cache_in_this_directory():
        yield directory


def configure_jax_from_the_environment():
    """JAX's persistent cache as a process started with this test's variables would have it."""
    _compile_cache.configure(jax)
    compilation_cache.reset_cache()


@contextlib.contextmanager
def _jax_cache_in_this_directory():
    """JAX's persistent cache in the test's own directory for the test's duration, then back
    where it was. JAX reads its cache settings once per process, where the worker's first test
    left them (a user's cache, kept across runs); a program JAX reads back from its own cache
    is not stored, so the store's tests must start from a cache that holds nothing."""
    backend("jax").load()  # configured as every other test finds it
    names = ("jax_enable_compilation_cache", "jax_compilation_cache_dir")
    saved = {name: jax.config.values[name] for name in names}
    configure_jax_from_the_environment()
    try:
        yield
    finally:
        for name, value in saved.items():
            jax.config.update(name, value)
        compilation_cache.reset_cache()


_TRACES: list[float] = []


def _on_duration(event, duration, **_):
    if event == TRACE_EVENT:
        _TRACES.append(duration)


@pytest.fixture
def traces():
    """Each time JAX traces a function while the test runs (one listener for the session:
    JAX offers no public way to remove one)."""
    if _on_duration not in _REGISTERED:
        monitoring.register_event_duration_secs_listener(_on_duration)
        _REGISTERED.append(_on_duration)
    _TRACES.clear()
    return _TRACES


_REGISTERED: list = []


def arrays_for(theorem, seed=0):
    rng = np.random.default_rng(seed)
    shapes = {"S": ("n_q", "n_k"), "Q": ("n_q", "d_k"), "K": ("n_k", "d_k"),
              "V": ("n_k", "d_v"), "G": ("n_q", "d_v")}
    arrays = {}
    for item in theorem.inputs:
        shape = (SIZES["batch"], *(SIZES[d] for d in shapes.get(item.name, ())))
        arrays[item.name] = rng.uniform(0.5, 2.0, shape)
    return arrays


def fresh_runner(theorem):
    """A runner of its own (``runner_for`` would share compiled programs across tests)."""
    jax_row = backend("jax")
    return Runner(plan_for(theorem, jax_row.target), jax_row, "cpu", "jit")


def evaluate(theorem, dtype="float32"):
    return fresh_runner(theorem).evaluate(arrays_for(theorem), SIZES, format_named(dtype),
                                          with_scale=False)


def stored_files(cache_dir, theorem):
    return sorted((cache_dir / _executables.FOLDER / theorem.name).rglob("*.bin"))


@pytest.mark.parametrize("theorem", [samples.softmax_jacobian, samples.attention_dq],
                         ids=lambda t: t.name)
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_a_loaded_program_computes_bit_for_bit_what_a_compiled_one_does(cache_dir, traces,
                                                                         theorem, dtype):
    compiled = evaluate(theorem, dtype)
    assert traces, "the first run compiles"
    assert len(stored_files(cache_dir, theorem)) == 1
    traced_before = len(traces)
    loaded = evaluate(theorem, dtype)
    assert len(traces) == traced_before, "a stored program is loaded, not traced again"
    assert compiled.keys() == loaded.keys()
    for name in compiled:
        assert compiled[name].dtype == loaded[name].dtype
        np.testing.assert_array_equal(compiled[name], loaded[name])


def test_each_shape_and_dtype_is_its_own_entry(cache_dir):
    theorem = samples.softmax_jacobian
    evaluate(theorem, "float32")
    evaluate(theorem, "float64")
    assert len(stored_files(cache_dir, theorem)) == 2


@pytest.mark.parametrize("damage", ["garbage", "flipped byte", "empty"])
def test_a_damaged_entry_is_compiled_again_never_trusted(cache_dir, traces, damage):
    theorem = samples.softmax_jacobian
    expected = evaluate(theorem)
    (entry,) = stored_files(cache_dir, theorem)
    data = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(b"not an executable")
    elif damage == "flipped byte":
        entry.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    else:
        entry.write_bytes(b"")
    damaged = entry.read_bytes()
    traced_before = len(traces)
    again = evaluate(theorem)
    assert len(traces) > traced_before, "the damaged entry was not used"
    for name in expected:
        np.testing.assert_array_equal(expected[name], again[name])
    assert not entry.exists() or entry.read_bytes() != damaged


def test_an_entry_that_loads_but_does_not_run_is_replaced_by_a_compilation(cache_dir):
    theorem = samples.softmax_jacobian
    expected = evaluate(theorem)
    (entry,) = stored_files(cache_dir, theorem)
    # a genuine executable of another program (other inputs) under this program's key
    evaluate(samples.attention_dq)
    (foreign,) = stored_files(cache_dir, samples.attention_dq)
    entry.write_bytes(foreign.read_bytes())
    again = evaluate(theorem)
    for name in expected:
        np.testing.assert_array_equal(expected[name], again[name])
    assert not entry.exists() or entry.read_bytes() != foreign.read_bytes()


def test_a_changed_theorem_replaces_its_own_programs_only(cache_dir):
    evaluate(samples.softmax_jacobian)
    evaluate(samples.rows_sum_to_one)
    (old,) = stored_files(cache_dir, samples.softmax_jacobian)
    (other,) = stored_files(cache_dir, samples.rows_sum_to_one)
    # the same name, another statement: a user edited the theorem
    edited = samples._softmax_theorem("softmax_jacobian",
                                      samples.softmax_jacobian_missing_beta.claim)
    evaluate(edited)
    (new,) = stored_files(cache_dir, samples.softmax_jacobian)
    assert new.parent != old.parent and not old.exists()
    assert other.exists()


def test_user_code_is_never_stored(cache_dir):
    theorem = samples.flash
    runner = fresh_runner(theorem)
    arrays = {**arrays_for(theorem), "B": 2}
    runner.evaluate(arrays, SIZES, FLOAT32, with_scale=False)
    assert not (cache_dir / _executables.FOLDER).exists()


def test_nothing_is_stored_with_caching_off(cache_dir, monkeypatch):
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "1")
    configure_jax_from_the_environment()
    evaluate(samples.softmax_jacobian)
    assert not cache_dir.exists()


def test_the_key_follows_sizes_dtypes_and_the_device():
    device = jax.devices("cpu")[0]
    x = jax.numpy.zeros((8, 2, 3), jax.numpy.float32)
    base = _executables.call_key({"n": 3}, {}, {"x": x}, device)
    assert base == _executables.call_key({"n": 3}, {}, {"x": x}, device)
    assert base != _executables.call_key({"n": 4}, {}, {"x": x}, device)
    assert base != _executables.call_key({"n": 3}, {"B": 2}, {"x": x}, device)
    assert base != _executables.call_key({"n": 3}, {}, {"x": x.astype("float16")}, device)


CHILD = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
import sample_theorems as samples
from attnproof.numeric._backends import backend
from attnproof.numeric._plan import Runner, plan_for
from attnproof.symbolic import FLOAT32

theorem = samples.softmax_jacobian
row = backend("jax")
runner = Runner(plan_for(theorem, row.target), row, "cpu", "jit")
rng = np.random.default_rng(0)
arrays = {{"S": rng.uniform(-3, 3, (5, 2, 3)), "T": rng.uniform(0.5, 2, (5,))}}
values = runner.evaluate(arrays, {{"batch": 5, "n_q": 2, "n_k": 3}}, FLOAT32, False)
print(json.dumps({{k: v.tolist() for k, v in values.items()}}))
"""


@pytest.mark.slow
def test_a_program_jax_read_from_its_own_cache_is_not_stored_and_results_stay_right(tmp_path):
    """Three processes, as three runs: the first compiles and stores; with the store emptied,
    the second compiles from JAX's persistent cache (such an executable serializes without its
    machine code) and must not store it; the third still computes the first's values."""
    import json
    import os
    import subprocess
    import sys

    cache = tmp_path / "cache"
    env = {**os.environ, _compile_cache.DIRECTORY_VARIABLE: str(cache),
           _compile_cache.NO_CACHE_VARIABLE: ""}
    script = CHILD.format(tests=str(Path(__file__).parent))

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    store = cache / _executables.FOLDER
    first = run()
    assert list(store.rglob("*.bin")), "a fresh compilation is stored"
    assert list((cache / "jax").iterdir()), "and JAX's persistent cache has it too"
    for entry in store.rglob("*.bin"):
        entry.unlink()
    second = run()
    assert not list(store.rglob("*.bin")), "a program read from JAX's cache is not stored"
    third = run()
    assert first == second == third


def test_the_key_pins_the_source_that_assembles_programs(tmp_path):
    root = Path(_executables.__file__).resolve().parent
    copy = tmp_path / "numeric"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert _executables.source_digest(copy) == _executables.numeric_version()
    # a kind's route is pinned in its own programs' keys (kinds_version), not in the search's
    route = copy / "kinds" / "cost.py"
    route.write_text(route.read_text() + "\n# changed\n")
    assert _executables.source_digest(copy) == _executables.numeric_version()
    assert _executables.source_digest(copy / "kinds") != _executables.kinds_version()
    compiler = copy / "_compiler.py"
    compiler.write_text(compiler.read_text().replace("def compile_expression(",
                                                     "def compile_expression_(", 1))
    assert _executables.source_digest(copy) != _executables.numeric_version()
