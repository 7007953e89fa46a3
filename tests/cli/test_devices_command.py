"""``attnproof devices`` and the devices of a ``prove`` run: the same device words for every
command, a device the machine lacks refused before any work, a GPU run written beside the CPU
one, and the workers that share an accelerator bounded and said."""

from __future__ import annotations

import json

import pytest

from attnproof import _runner
from attnproof._machine import WORKERS_PER_ACCELERATOR, RunDevices, run_devices
from attnproof.cli import main
from attnproof.numeric import DeviceError

from . import theorem_files as files
from .fakes import FakeNumeric


def test_devices_lists_every_backend_with_its_version_devices_and_dtypes(capsys):
    assert main(["devices"]) == 0
    printed = capsys.readouterr().out
    assert "numpy " in printed and "(numeric backend, modes eager)" in printed
    assert "  cpu  float64 float32 float16 bfloat16" in printed


def test_devices_as_json_says_why_an_accelerator_is_missing(capsys):
    assert main(["devices", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_name = {f["name"]: f for f in data["frameworks"]}
    assert set(by_name) >= {"numpy", "jax", "mlx", "torch"}
    assert by_name["numpy"]["devices"]["cpu"]["dtypes"][0] == "float64"
    for framework in by_name.values():
        kinds = {name.partition(":")[0] for name in framework["devices"]}
        if framework["version"] and "gpu" not in kinds and framework["name"] != "numpy":
            assert any(reason.startswith("no gpu:") for reason in framework["missing"])
    if by_name["numpy"]["devices"]:
        assert "cpu" in data["library_kernels"] or not data["library_kernels"]


def test_a_device_is_named_by_the_same_words_for_prove_and_kernels(capsys):
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["prove", "--device", "cuda"])
    assert exited.value.code == 2
    assert "unknown device 'cuda'; did you mean 'gpu'?" in capsys.readouterr().err
    assert main(["kernels", "--device", "cuda"]) == 2
    assert "unknown device 'cuda'; did you mean 'gpu'?" in capsys.readouterr().err


CONFIGURATIONS = [("numpy", "float64", "cpu", "eager"), ("jax", "float64", "cpu", "jit"),
                  ("jax", "float64", "gpu", "jit")]


def test_the_devices_of_a_run_follow_the_backend_and_device_filters():
    where = run_devices(CONFIGURATIONS)
    assert where.used == {"cpu": ("numpy", "jax"), "gpu": ("jax",)}
    assert where.accelerators == ["gpu"] and where.folder() == "gpu"
    assert run_devices(CONFIGURATIONS, backends=("numpy",)).accelerators == []
    assert list(run_devices(CONFIGURATIONS, devices=("gpu",)).used) == ["gpu"]
    with pytest.raises(DeviceError, match=r"no device tpu here; devices present: cpu \(numpy, "
                                          r"jax\), gpu \(jax\)"):
        run_devices(CONFIGURATIONS, devices=("tpu",))


def test_workers_sharing_an_accelerator_are_bounded_unless_jobs_are_asked_for(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    two = RunDevices({}, {"gpu:0": ("jax",), "gpu:1": ("jax",), "cpu": ("numpy",)})
    assert two.jobs(None) == 2 * WORKERS_PER_ACCELERATOR
    assert two.jobs(3) == 3
    assert RunDevices({}, {"cpu": ("numpy",)}).jobs(None) is None  # one per CPU, as before
    line = two.describe(two.jobs(None))
    assert f"{2 * WORKERS_PER_ACCELERATOR} workers share gpu:0, gpu:1" in line


def test_a_gpu_run_writes_beside_the_cpu_report_and_says_how_many_workers_share_it(
        tmp_path, monkeypatch, capsys):
    fake = FakeNumeric([("numpy", "float64", "cpu", "eager"), ("jax", "float64", "gpu", "jit")])
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    theorems = tmp_path / "theorems"
    theorems.mkdir()
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    monkeypatch.chdir(tmp_path)
    code = main(["prove", "--no-catalog", "--theorems", str(theorems), "--in-process"])
    assert code == 0
    # a run of other directories is partial: the GPU run's partial folder, not the CPU one's
    assert (tmp_path / "reports" / "gpu" / "partial" / "results.json").exists()
    assert not (tmp_path / "reports" / "partial").exists()
    assert "workers share gpu" in capsys.readouterr().err
    assert {call[3] for call in fake.calls} == {"cpu", "gpu"}
