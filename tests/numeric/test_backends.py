"""The backend table, device enumeration and the configurations the harness runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnproof.numeric import BACKENDS, available_configurations, check
from attnproof.numeric._backends import ALL_FLOATS, backend, unavailable_reason
from attnproof.numeric._compiler import TARGETS
from attnproof.symbolic import FLOAT32, FLOAT64

# loads every array backend and enumerates devices: the slow tier
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("row", BACKENDS, ids=lambda b: b.name)
def test_every_row_names_a_compiler_target_and_known_dtypes(row):
    assert row.target in TARGETS
    assert row.default_mode == row.modes[0]
    for dtypes in row.dtypes.values():
        for dtype in dtypes:
            assert dtype in ALL_FLOATS and row.measured_as(dtype).epsilon >= dtype.epsilon


@pytest.mark.parametrize("row", BACKENDS, ids=lambda b: b.name)
def test_a_rows_index_array_function_is_in_its_module(row):
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    assert callable(getattr(row.load(), row.index_array))


def test_mlx_float64_is_never_a_reference():
    row = backend("mlx")
    assert not row.reference
    assert row.measured_as(FLOAT64) == FLOAT32


@pytest.mark.parametrize("name", ["jax", "mlx"])
def test_backends_list_every_mode_and_dtype_on_this_cpu(name):
    row = backend(name)
    if unavailable_reason(row):
        pytest.skip(unavailable_reason(row))
    found = {(d, m) for b, d, device, m in available_configurations() if b == name}
    assert found >= {(d, m) for d in ("float64", "float32", "float16", "bfloat16")
                     for m in row.modes}


def test_configurations_put_the_default_mode_first():
    seen: dict[str, str] = {}
    for name, _, _, mode in available_configurations():
        seen.setdefault(name, mode)
    assert seen == {name: backend(name).default_mode for name in seen}


_SEVERAL_DEVICES = """
import json, numeric
from attnproof.symbolic import discover
theorem = discover().by_name()["softmax_jacobian_temperature"]
configurations = [c for c in numeric.available_configurations(theorem) if c[0] == "jax"]
record = numeric.check(theorem, "jax", "float32", "cpu:1", "jit", profile="quick")
print(json.dumps({"devices": sorted({c[2] for c in configurations}), "status": record.status,
                  "device": record.device}))
"""


def test_jax_enumerates_every_device_and_runs_on_the_second():
    pytest.importorskip("jax")
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
           "JAX_PLATFORMS": "cpu"}
    result = subprocess.run([sys.executable, "-c", _SEVERAL_DEVICES], capture_output=True,
                            text=True, cwd=REPO, env=env, timeout=300, check=True)
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found == {"devices": ["cpu:0", "cpu:1"], "status": "passed", "device": "cpu:1"}


def test_a_gpu_that_is_absent_is_skipped_with_a_reason(catalog):
    theorem = catalog.by_name()["softmax_jacobian"]
    for name in ("jax", "mlx"):
        if not unavailable_reason(backend(name)) and "gpu" in backend(name).devices():
            continue  # a GPU machine runs it instead
        record = check(theorem, name, "float32", "gpu", profile="quick")
        assert record.status == "skipped" and record.reason
