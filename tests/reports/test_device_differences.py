"""A run over several devices says which device gave which result where they differ."""

from __future__ import annotations

from attnproof.numeric import NumericRecord, NumericStatus
from attnproof.report import view


def _record(backend, dtype, device, status):
    return NumericRecord(backend, dtype, device, "jit", status)


def test_a_dtype_whose_records_differ_across_devices_names_each_device():
    records = [_record("numpy", "float16", "cpu", NumericStatus.FAILED),
               _record("jax", "float16", "cpu", NumericStatus.PASSED),
               _record("jax", "float16", "gpu", NumericStatus.PASSED),
               _record("jax", "float32", "gpu", NumericStatus.PASSED),
               _record("numpy", "float32", "cpu", NumericStatus.PASSED)]
    assert view.device_differences(records) == [
        "float16: failed on numpy/cpu; passed on jax/cpu, jax/gpu"]


def test_one_device_says_nothing_even_where_backends_differ():
    records = [_record("numpy", "float16", "cpu", NumericStatus.FAILED),
               _record("jax", "float16", "cpu", NumericStatus.PASSED)]
    assert view.device_differences(records) == []
