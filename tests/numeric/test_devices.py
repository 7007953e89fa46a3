"""The one device vocabulary (cpu, gpu, gpu:N), the devices each backend has here, and the
environment that lets worker processes share an accelerator. GPUs are simulated: several JAX
host devices stand in for several devices of a kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from attnproof.numeric._devices import (
    Device,
    DeviceError,
    missing,
    named,
    out_of_memory,
    out_of_memory_reason,
    selected,
    share_accelerators,
)


@pytest.mark.parametrize(("word", "kind", "index"), [
    ("cpu", "cpu", None), ("gpu", "gpu", None), ("gpu:1", "gpu", 1), ("tpu:0", "tpu", 0)])
def test_a_device_word_parses_and_prints_back(word, kind, index):
    device = Device.parse(word)
    assert (device.kind, device.index) == (kind, index)
    assert str(device) == word


@pytest.mark.parametrize(("word", "hint"), [
    ("cuda", "did you mean 'gpu'?"), ("cuda:0", "did you mean 'gpu'?"),
    ("mps", "did you mean 'gpu'?"), ("gpo", "did you mean 'gpu'?"), ("gpu:", "KIND:N"),
    ("gpu:x", "KIND:N"), ("", "choose from cpu, gpu, tpu")])
def test_another_framework_s_word_or_a_typo_is_refused_with_ours(word, hint):
    with pytest.raises(DeviceError, match="unknown device") as refused:
        Device.parse(word)
    assert hint in str(refused.value)


def test_a_kind_covers_each_of_its_devices_and_a_number_one_of_them():
    assert Device.parse("gpu").covers("gpu:0") and Device.parse("gpu").covers("gpu:3")
    assert Device.parse("gpu:1").covers("gpu:1") and not Device.parse("gpu:1").covers("gpu:0")
    assert Device.parse("gpu:0").covers("gpu")  # the only GPU of a machine is named gpu
    assert not Device.parse("gpu").covers("cpu")
    assert selected(["cpu", "gpu:0", "gpu:1"], ["gpu"]) == ["gpu:0", "gpu:1"]
    assert selected(["cpu", "gpu:0", "gpu:1"], None) == ["cpu", "gpu:0", "gpu:1"]
    assert missing(["gpu", "cpu"], ["cpu"]) == ["gpu"]


def test_present_devices_are_named_by_kind_and_numbered_only_when_several():
    devices = [("cpu", 0), ("gpu", 0), ("gpu", 1)]
    found = named(devices, lambda d: d[0], lambda d: d[1])
    assert list(found) == ["cpu", "gpu:0", "gpu:1"]


def test_sharing_an_accelerator_turns_preallocation_off_but_keeps_the_user_s_choice():
    environ: dict[str, str] = {}
    share_accelerators(environ)
    assert environ == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    chosen = {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
    share_accelerators(chosen)
    assert chosen["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"


def _child(code: str, **environment) -> str:
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    env.update(environment)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, text=True,
                          capture_output=True, timeout=300, check=True)
    return done.stdout.strip()


def test_importing_attnproof_sets_the_allocator_before_any_backend():
    printed = _child("""
        import os, sys, attnproof
        print(os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"), "jax" in sys.modules)""")
    assert printed == "false False"


@pytest.mark.slow
def test_each_jax_device_is_its_own_configuration_and_a_kind_selects_all_of_them():
    pytest.importorskip("jax")
    printed = _child("""
        import json
        from attnproof._runner import Options
        from attnproof._machine import run_devices
        from attnproof.numeric import available_configurations
        found = available_configurations()
        jax = sorted({c.device for c in found if c.backend == "jax"})
        print(json.dumps({"present": run_devices(found).present, "jax": jax,
            "kind": sorted({c.device for c in found if Options(devices=("cpu",)).wants(*c)}),
            "one": sorted({c.device for c in found if Options(devices=("cpu:1",)).wants(*c)})}))
        """, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    seen = json.loads(printed)
    assert seen["jax"] == ["cpu:0", "cpu:1"]
    assert seen["present"]["cpu:1"] == ["jax"]
    assert {"cpu:0", "cpu:1"} <= set(seen["kind"])
    assert seen["one"] == ["cpu:1"]


def test_a_device_out_of_memory_is_an_error_naming_the_device_and_the_fix():
    error = RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2.0GiB")
    assert out_of_memory(error)
    assert not out_of_memory(ValueError("shapes do not match"))
    reason = out_of_memory_reason("gpu", error)
    assert reason.startswith("device gpu ran out of memory") and "--jobs" in reason


@pytest.mark.slow
def test_a_worker_process_has_the_shared_allocator_set(tmp_path):
    """The variable reaches the workers that check theorems: a theorem file records the
    environment of the process that loads it."""
    theorems = tmp_path / "theorems"
    theorems.mkdir()
    seen = tmp_path / "seen.txt"
    (theorems / "probe.py").write_text(textwrap.dedent(f"""
        import os
        import multiprocessing
        if multiprocessing.parent_process() is not None:
            with open({str(seen)!r}, "a") as sink:
                sink.write(str(os.getpid()) + " "
                           + os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "unset") + "\\n")
        from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
        n = Dim("n")
        i = n.index("i")
        x = Tensor("x", (n,))
        probe = Theorem("probe", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,))
        """))
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    subprocess.run([sys.executable, "-m", "attnproof.cli", "prove", "--no-catalog",
                    "--theorems", str(theorems), "--symbolic-only", "--out",
                    str(tmp_path / "out")], env=env, check=True, capture_output=True,
                   timeout=600)
    lines = seen.read_text().split()
    assert lines and set(lines[1::2]) == {"false"}
