"""The backend table is the one place a backend is declared: the compiler's targets, the
reference backends, the versions results record and the kernel frameworks all follow its rows.
Nothing here loads a backend, so these run in the fast tier."""

import pytest

from attnproof.kernels._declaration import Kernel, KernelError
from attnproof.kernels._frameworks import ADAPTERS, FRAMEWORKS, has_autodiff
from attnproof.numeric import BACKENDS, NumericRecord, NumericStatus
from attnproof.numeric._backends import reference_names
from attnproof.report.results import VERSIONED_PACKAGES, environment
from attnproof.report.view import environment_rows


@pytest.mark.parametrize("row", BACKENDS, ids=lambda b: b.name)
def test_a_float64_record_decides_truth_exactly_on_a_reference_row(row):
    record = NumericRecord(row.name, "float64", "cpu", row.default_mode, NumericStatus.PASSED)
    lower = NumericRecord(row.name, "float32", "cpu", row.default_mode, NumericStatus.PASSED)
    assert record.decides_truth == row.reference == (row.name in reference_names())
    assert not lower.decides_truth


def test_a_record_of_a_backend_not_in_the_table_decides_nothing():
    record = NumericRecord("elsewhere", "float64", "cpu", "eager", NumericStatus.PASSED)
    assert not record.decides_truth


def test_results_record_and_show_the_version_of_every_row():
    packages = {row.package for row in BACKENDS}
    assert packages <= set(VERSIONED_PACKAGES)
    assert packages <= set(environment([]))

    class Shown:
        environment = {"python": "3", "devices": []}

    assert {name for name, _ in environment_rows(Shown)} >= packages


def test_every_framework_has_one_adapter():
    """A backend's is its row (the kernel checker builds its view from it); a framework that is
    no backend has one in the kernel checker, and a backend never has a second there."""
    backends = {row.name for row in BACKENDS}
    assert backends <= set(FRAMEWORKS)
    assert set(ADAPTERS) == set(FRAMEWORKS) - backends


@pytest.mark.parametrize("row", BACKENDS, ids=lambda b: b.name)
def test_a_kernel_asks_for_autodiff_only_where_its_row_has_it(row):
    assert has_autodiff(row.name) == row.autodiff
    kernel = dict(name="k", fn=lambda q, k, v: q, framework=row.name, layout="bhsd",
                  dtypes=("float32",), gradients="autodiff")
    if row.autodiff:
        assert Kernel(**kernel).framework == row.name
    else:
        with pytest.raises(KernelError, match=f"{row.name} has no autodiff"):
            Kernel(**kernel)


def test_a_configuration_is_checked_where_it_is_made():
    from attnproof.numeric import Configuration, check

    made = Configuration("jax", "float16", "gpu:0", "eager")
    assert tuple(made) == ("jax", "float16", "gpu:0", "eager") and made.row.name == "jax"
    assert Configuration("numpy", "float32", "cpu").mode == "eager"  # the backend's default
    for wrong, says in ((("nmupy", "float32", "cpu", "eager"), "unknown backend 'nmupy'"),
                        (("numpy", "float17", "cpu", "eager"), "unknown dtype 'float17'"),
                        (("numpy", "float32", "cuda", "eager"), "cuda"),
                        (("numpy", "float32", "cpu", "jit"), "numpy has no mode 'jit'")):
        with pytest.raises(ValueError, match=says):
            Configuration(*wrong)
    # a check given such a name skips its record, saying what is known
    record = check(None, "numpy", "float17")
    assert record.status == "skipped" and record.reason.startswith("unknown dtype 'float17'")
    assert "float64, float32, float16, bfloat16" in record.reason
