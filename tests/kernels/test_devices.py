"""Kernels on devices: the one device vocabulary mapped to each framework's own names, kernels
declared per device (their devices, their precision there), cases a kernel refuses, the mode
a JAX kernel runs in, and the matrix's column group per device. GPUs are simulated on the CPU:
an adapter's device table is replaced, or JAX is given several host devices."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from attnproof.cli import main
from attnproof.kernels import Cell, Conformance, Kernel, KernelError, Refused, check_kernel
from attnproof.kernels import _frameworks as frameworks
from attnproof.kernels._check import REFUSALS_BEFORE_NA, cell_devices
from attnproof.kernels._frameworks import TF32, native_device, precision_format, rounded
from attnproof.kernels._matrix import to_markdown
from attnproof.numeric import DeviceError
from attnproof.numeric import _backends as backends
from attnproof.symbolic import FLOAT16, FLOAT32, TENSORFLOAT32

from . import planted


def _variant(**changes) -> Kernel:
    return dataclasses.replace(planted.correct, **changes)


# -- the vocabulary, mapped inside each adapter --------------------------------------------------


def _machine(monkeypatch, framework: str, present: dict) -> None:
    monkeypatch.setitem(frameworks.DEVICES, framework, lambda: present)


def test_gpu_is_torch_s_cuda_device_inside_the_adapter(monkeypatch):
    _machine(monkeypatch, "torch", {"cpu": "cpu", "gpu": "cuda:0"})
    assert native_device("torch", "gpu") == "cuda:0"
    assert native_device("torch", "gpu:0") == "cuda:0"
    assert native_device("torch", "cpu") == "cpu"
    _machine(monkeypatch, "torch", {"cpu": "cpu", "gpu:0": "cuda:0", "gpu:1": "cuda:1"})
    assert native_device("torch", "gpu:1") == "cuda:1"
    with pytest.raises(DeviceError, match="gpu names 2 devices of torch: gpu:0, gpu:1"):
        native_device("torch", "gpu")


def test_torch_s_cuda_devices_are_listed_as_gpu(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert frameworks._torch_devices() == {"cpu": "cpu", "gpu:0": "cuda:0", "gpu:1": "cuda:1"}
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert frameworks._torch_devices() == {"cpu": "cpu", "gpu": "cuda:0"}


def test_a_framework_never_runs_on_the_cpu_when_a_gpu_is_asked_for(monkeypatch):
    _machine(monkeypatch, "mlx", {"cpu": "cpu-stream"})
    with pytest.raises(DeviceError, match=r"mlx has no device gpu here \(devices: cpu\)"):
        native_device("mlx", "gpu")


def test_the_adapter_receives_the_framework_s_own_device(monkeypatch):
    """A recording framework: what ``put`` hands over is the native device of the name asked."""
    _machine(monkeypatch, "numpy", {"cpu": "host", "gpu": "accelerator-0"})
    given = []
    monkeypatch.setattr(frameworks, "native_device",
                        lambda name, device: given.append(
                            frameworks.DEVICES[name]()[device]) or "cpu")
    frameworks.framework("numpy").put(np.ones(2), "float32", "gpu")
    assert given == ["accelerator-0"]


# -- which devices a kernel is checked on ----------------------------------------------------------


def test_a_kernel_is_checked_on_the_declared_devices_this_machine_has(monkeypatch):
    _machine(monkeypatch, "numpy", {"cpu": "cpu"})
    gpu_only = _variant(devices=("gpu",))
    assert cell_devices(gpu_only) == []
    [(device, reason)] = cell_devices(gpu_only, ["gpu"])
    assert device == "gpu" and reason == "numpy has no device gpu here (devices: cpu)"
    _machine(monkeypatch, "numpy", {"cpu": "cpu", "gpu:0": "a", "gpu:1": "b"})
    assert cell_devices(_variant(devices=("cpu", "gpu"))) == [("cpu", None), ("gpu:0", None),
                                                             ("gpu:1", None)]
    assert cell_devices(_variant(devices=("cpu", "gpu")), ["gpu:1"]) == [("gpu:1", None)]


def test_asking_for_a_device_no_kernel_has_here_exits_two_naming_those_present(capsys):
    code = main(["kernels", "--kernel", "tests.kernels.planted:correct", "--device", "gpu",
                 "--out", "unused"])
    assert code == 2
    assert "no kernel checked here can run on gpu (devices present: numpy: cpu)" in \
        capsys.readouterr().err


@pytest.mark.slow
def test_a_jax_kernel_gets_one_column_group_per_device():
    pytest.importorskip("jax")
    code = (
        "import json\n"
        "from attnproof.kernels import check_kernel\n"
        "from attnproof.kernels.library import LIBRARY\n"
        "r = check_kernel(LIBRARY['jax-eager'](), properties=['forward'], dtypes=['float32'],"
        " examples=3)\n"
        "print(json.dumps([[c.device, c.status] for c in r.cells]))\n"
        "print(r.to_markdown())\n")
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600, check=True)
    cells, _, markdown = done.stdout.partition("\n")
    assert json.loads(cells) == [["cpu:0", "conforms"], ["cpu:1", "conforms"]]
    assert "| property | cpu:0 float32 | cpu:1 float32 |" in markdown


def test_the_matrix_puts_each_device_in_its_own_column_group():
    cells = [Cell("forward", dtype, device, "conforms", ratio=0.5, cases=4, decided=4)
             for device in ("cpu", "gpu") for dtype in ("float32", "float16")]
    markdown = to_markdown([Conformance("k", "numpy", {"layout": "bhsd", "mask": "none",
                                                       "gradients": None, "compute": {}},
                                        cells)])
    assert ("| property | cpu float32 | cpu float16 | gpu float32 | gpu float16 |"
            in markdown)
    assert "on cpu, gpu" in markdown


# -- declarations per device -------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value", "message"), [
    ("devices", ("cuda",), "did you mean 'gpu'"), ("devices", (), "names no device"),
    ("mode", "lazy", "mode"), ("compute_on", {"gpu": {"float32": "tf16"}}, "compute_on"),
    ("compute_on", {"cuda": {"float32": "float32"}}, "compute_on")])
def test_a_bad_device_declaration_names_the_kernel_and_the_field(field, value, message):
    with pytest.raises(KernelError, match=message):
        _variant(**{field: value})


def test_the_precision_a_kernel_computes_in_may_differ_by_device():
    kernel = _variant(dtypes=("float32", "float16"), compute_dtype={"float16": "float32"},
                      compute_on={"gpu": {"float32": TF32}})
    assert kernel.compute_for(FLOAT32, "cpu") == FLOAT32
    assert kernel.compute_for(FLOAT32, "gpu") == TENSORFLOAT32
    assert kernel.compute_for(FLOAT32, "gpu:1") == TENSORFLOAT32
    assert kernel.compute_for(FLOAT16, "gpu") == FLOAT32


def test_tensorfloat32_keeps_float32_s_range_and_ten_fraction_bits():
    assert precision_format(TF32).epsilon == 2.0 ** -10
    values = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -12, 3e38, np.inf, -2.5])
    expected = np.array([1.0, 1 + 2 ** -9, 1.0, np.nan, np.inf, -2.5])
    got = rounded(values, TENSORFLOAT32)
    assert got[0] == expected[0] and got[1] == expected[1] and got[2] == expected[2]
    assert got[4] == np.inf and got[5] == -2.5 and np.isfinite(got[3])


def _tf32(array):
    """TF32 by another route than the checker's: frexp's fraction rounded to 11 significant
    bits, ties to even."""
    fraction, exponent = np.frexp(np.asarray(array, np.float32).astype(np.float64))
    return np.ldexp(np.round(fraction * 2.0 ** 11) / 2.0 ** 11, exponent)


def _tf32_attention(q, k, v, mask=None, causal=False, scale=None):
    """Attention whose two products take TF32 operands and accumulate in float32, the rest in
    float32: what a GPU's tensor cores do to JAX's float32 attention by default."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = np.einsum("bhqd,bhkd->bhqk", _tf32(q), _tf32(k)).astype(np.float32) * scale
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores, dtype=np.float32)
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", _tf32(weights), _tf32(v)).astype(np.float32)


def test_a_kernel_in_tensorfloat32_fails_as_float32_and_conforms_as_declared():
    as_float32 = Kernel("tf32 products", _tf32_attention, "numpy", dtypes=("float32",))
    failed = check_kernel(as_float32, properties=["forward"], examples=20)
    assert failed.cell("forward", "float32").status == "fails"
    assert failed.cell("forward", "float32").ratio > 10
    declared = dataclasses.replace(as_float32, compute_on={"cpu": {"float32": TF32}})
    conforms = check_kernel(declared, properties=["forward"], examples=20)
    assert conforms.cell("forward", "float32").status == "conforms"


# -- cases a kernel refuses ----------------------------------------------------------------------


def _even_heads_only(q, k, v, mask=None, causal=False, scale=None):
    if q.shape[-1] % 2:
        raise Refused("head size must be even")
    return planted.attention(q, k, v, mask, causal, scale)[0]


def _refuses_everything(q, k, v, mask=None, causal=False, scale=None):
    raise Refused("this backend takes no such input")


def test_refused_cases_are_drawn_again_counted_and_never_decided():
    kernel = Kernel("even", _even_heads_only, "numpy", dtypes=("float64",),
                    compute_dtype="float32")  # the planted kernel computes in float32
    cell = check_kernel(kernel, properties=["forward"], examples=10).cell("forward", "float64")
    assert cell.status == "conforms" and cell.decided >= 10
    assert cell.refused > 0 and cell.cases == cell.decided + cell.refused
    assert "cases refused by the kernel: head size must be even" in cell.reason


def test_a_kernel_that_refuses_every_case_is_not_applicable_with_its_reason():
    kernel = Kernel("never", _refuses_everything, "numpy", dtypes=("float64",))
    cell = check_kernel(kernel, properties=["forward"], examples=10).cell("forward", "float64")
    assert cell.status == "n/a" and cell.decided == 0
    assert cell.refused == cell.cases == REFUSALS_BEFORE_NA
    assert cell.reason.endswith("this backend takes no such input")


# -- modes and time ------------------------------------------------------------------------------


def test_a_jax_kernel_runs_jitted_by_default_and_eagerly_when_declared():
    pytest.importorskip("jax")
    jax_adapter = frameworks.framework("jax")
    calls = []

    def fn(q, k, v):
        calls.append(type(q).__name__)
        return q

    before = len(backends._JITTED)
    ones = jax_adapter.put(np.ones((1, 1, 2, 2)), "float32", "cpu")
    jax_adapter.bind(fn, {}, "eager")(ones, ones, ones)
    assert len(backends._JITTED) == before and "Tracer" not in calls[-1]
    jax_adapter.bind(fn, {}, "jit")(ones, ones, ones)
    assert len(backends._JITTED) == before + 1 and "Tracer" in calls[-1]


def test_a_kernel_s_time_budget_skips_the_cells_not_begun_saying_so():
    result = check_kernel(planted.correct, properties=["forward", "mask"], examples=2,
                          budget=1e-9)
    assert {c.status for c in result.cells} == {"skipped"}
    assert all("time budget of 1e-09 s" in c.reason for c in result.cells)


def test_a_pytest_cell_on_a_device_this_machine_lacks_skips_naming_those_present():
    from attnproof.kernels import assert_conforms, conformance_cells

    params = conformance_cells(planted.correct, properties=["forward"], dtypes=["float32"],
                               devices=["cpu", "gpu"], examples=2)
    assert [p.id for p in params] == ["correct-forward-float32-cpu",
                                      "correct-forward-float32-gpu"]
    with pytest.raises(pytest.skip.Exception, match=r"numpy has no device gpu here"):
        assert_conforms(params[1].values[0])


def test_the_matrix_counts_refused_cases_and_says_why_cells_were_set_aside():
    kernel = Kernel("even", _even_heads_only, "numpy", dtypes=("float64",),
                    compute_dtype="float32")
    result = check_kernel(kernel, properties=["forward", "mask"], examples=5)
    markdown = result.to_markdown()
    forward = result.cell("forward", "float64")
    assert f"{forward.refused} refused" in markdown
    assert "Set aside (not a verdict):" in markdown
    assert "cases refused by the kernel: head size must be even" in markdown
