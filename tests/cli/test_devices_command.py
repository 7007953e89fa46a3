"""``attnproof devices`` and the devices of a ``prove`` run: the same device words for every
command, a device the machine lacks refused before any work, a GPU run written beside the CPU
one, and the workers that share an accelerator bounded and said."""

from __future__ import annotations

import dataclasses
import glob
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from attnproof import _runner
from attnproof._machine import WORKERS_PER_ACCELERATOR, RunDevices, run_devices
from attnproof.cli import main
from attnproof.numeric import DeviceError, backend, start_failure, unavailable_reason

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


# -- a backend installed but unable to start (JAX_PLATFORMS=cuda carried over to a CPU machine) --


def test_a_backend_that_cannot_start_is_reported_with_its_reason_never_raised():
    def no_platform():
        raise AssertionError  # what JAX raises for JAX_PLATFORMS=cuda without a GPU

    row = dataclasses.replace(backend("numpy"), name="stalled", devices=no_platform)
    assert start_failure(row) == "stalled cannot start here: AssertionError"
    assert unavailable_reason(row) == start_failure(row)
    assert start_failure(backend("numpy")) is None


def test_jax_names_the_jax_platforms_setting_it_cannot_start_on(monkeypatch):
    jax = backend("jax")
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    assert jax.explain_failed_start(AssertionError()) == (
        "JAX_PLATFORMS='cuda' names no platform JAX can start on this machine (unset it, or "
        "set JAX_PLATFORMS=cpu)")
    said = jax.explain_failed_start(RuntimeError("Unable to initialize backend 'cuda'"))
    assert said.endswith("JAX said RuntimeError: Unable to initialize backend 'cuda')")
    monkeypatch.delenv("JAX_PLATFORMS")
    assert jax.explain_failed_start(RuntimeError("a plugin failed")) == \
        "RuntimeError: a plugin failed"


CANNOT_START = {"jax": "jax cannot start here: JAX_PLATFORMS='cuda' names no platform"}


def test_prove_says_which_backend_cannot_start_and_checks_on_the_others(
        tmp_path, monkeypatch, capsys):
    fake = FakeNumeric([("numpy", "float64", "cpu", "eager")], cannot_start=CANNOT_START)
    monkeypatch.setattr(_runner, "numeric_api", lambda: fake)
    theorems = tmp_path / "theorems"
    theorems.mkdir()
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    argv = ["prove", "--no-catalog", "--theorems", str(theorems), "--in-process",
            "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    assert ("attnproof: jax cannot start here: JAX_PLATFORMS='cuda' names no platform; its "
            "numeric checks are left out of this run") in capsys.readouterr().err
    assert {call[1] for call in fake.calls} == {"numpy"}
    assert main([*argv, "--backend", "jax"]) == 2  # nothing asked for can start
    # where JAX is not installed at all (the minimal tier), that is said first, as the reason
    said = ("jax cannot start here" if importlib.util.find_spec("jax") is not None
            else "backend jax is not installed here")
    assert f"attnproof: nothing to check: {said}" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["cuda", "no_such_platform"])
def test_an_unusable_jax_platforms_is_one_line_and_the_other_backends_still_run(
        tmp_path, setting):
    pytest.importorskip("jax")
    if setting == "cuda" and glob.glob("/dev/nvidia[0-9]*"):
        pytest.skip("this machine has an NVIDIA GPU: JAX_PLATFORMS=cuda may start")
    environment = {**os.environ, "JAX_PLATFORMS": setting}
    listed = subprocess.run([sys.executable, "-m", "attnproof", "devices"], env=environment,
                            capture_output=True, text=True, timeout=600)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    said = (f"jax cannot start here: JAX_PLATFORMS={setting!r} names no platform JAX can "
            "start on this machine")
    assert said in listed.stdout and "  cpu  float64" in listed.stdout  # NumPy's still listed
    theorems = tmp_path / "theorems"
    theorems.mkdir()
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    proved = subprocess.run(
        [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems",
         str(theorems), "--out", str(tmp_path / "out"), "--dtype", "float64", "--jobs", "1"],
        env=environment, capture_output=True, text=True, timeout=600)
    assert proved.returncode == 0 and "Traceback" not in proved.stderr, proved.stderr
    assert f"attnproof: {said}" in proved.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    backends = {record["backend"] for record in data["theorems"][0]["numeric"]}
    assert "numpy" in backends and "jax" not in backends
    replayed = subprocess.run(
        [sys.executable, "-m", "attnproof", "replay", "doubling", "--theorems", str(theorems),
         "--backend", "jax", "--seed", "0", "--batch", "4", "--sizes", "n=2"],
        env=environment, capture_output=True, text=True, timeout=600)
    assert replayed.returncode == 2 and len(replayed.stderr.strip().splitlines()) == 1
    assert replayed.stderr.startswith(f"attnproof: cannot replay doubling: {said}")
