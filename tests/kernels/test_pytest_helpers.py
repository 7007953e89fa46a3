"""The pytest helpers: one test per cell with readable ids; a planted bug fails its cell with
the counterexample and replay command, the correct kernel's cell passes."""

from __future__ import annotations

import pytest

from attnproof.kernels import assert_conforms, conformance_cells

from . import planted


def test_cells_have_readable_ids_one_per_property_dtype_and_device():
    kernel = planted.correct
    params = conformance_cells(kernel, properties=["forward", "fully_masked_rows"])
    assert len(params) == 2 * len(kernel.dtypes) * len(kernel.devices)
    assert params[0].id == f"{kernel.name}-forward-{kernel.dtypes[0]}-{kernel.devices[0]}"


def test_a_planted_bug_fails_its_cell_with_a_counterexample_and_replay():
    name = next(iter(sorted(planted.PLANTED)))
    prop, _ = planted.PLANTED[name]
    kernel = getattr(planted, name)
    (param, *_) = conformance_cells(kernel, properties=[prop], examples=20,
                                    spec=f"tests.kernels.planted:{name}")
    with pytest.raises(pytest.fail.Exception, match="(?s)counterexample.*replay: attnproof"):
        assert_conforms(param.values[0])


@pytest.mark.parametrize("cell", conformance_cells(planted.correct, properties=["forward"],
                                                   examples=5))
def test_the_correct_kernel_conforms(cell):
    assert_conforms(cell)


def test_a_misspelt_property_is_named_when_the_cells_are_made():
    with pytest.raises(ValueError, match=r"unknown property 'softcapp' \(did you mean 'softcap'"):
        conformance_cells(planted.correct, properties=["softcapp"])
