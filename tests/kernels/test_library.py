"""The library kernels run through the check on their own framework (each skipped cleanly when
its framework is not installed). The full matrix is `attnproof kernels`; these stay small."""

from __future__ import annotations

import pytest

from attnproof.kernels import check_kernel
from attnproof.kernels._check import cell_devices
from attnproof.kernels.library import FRAMEWORK_OF, LIBRARY
from attnproof.symbolic import FLOAT32

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

MODULES = {"jax": "jax", "mlx": "mlx.core", "torch": "torch"}


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_library_kernel_conforms_forward_in_float32_and_shows_its_convention(name):
    pytest.importorskip(MODULES[FRAMEWORK_OF[name]])
    kernel = LIBRARY[name]()
    if not cell_devices(kernel) or "float32" not in kernel.dtypes:
        pytest.skip(f"{kernel.name} runs on {', '.join(kernel.devices)} in "
                    f"{', '.join(kernel.dtypes)}; not here in float32")
    result = check_kernel(kernel, properties=["forward", "fully_masked_rows"],
                          dtypes=["float32"], examples=4)
    assert result.cell("forward", "float32").status == "conforms"
    masked = result.cell("fully_masked_rows", "float32")
    assert masked.status == "conforms"  # none of them declares a convention: a finding only
    assert masked.conventions["fully_masked"] in ("zeros", "mean_v", "nan", "other")


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_library_kernel_output_is_within_its_proved_tolerance(name):
    """The tolerance a user's own test would hold the kernel to, in place of a hand-tuned one:
    65 keys (one past a block of 64), its declared precision, its own layout."""
    import numpy as np

    from attnproof.kernels import Refused, assert_attention_close
    from attnproof.kernels._declaration import normalized_layout, to_layout
    from attnproof.kernels._frameworks import framework

    pytest.importorskip(MODULES[FRAMEWORK_OF[name]])
    kernel = LIBRARY[name]()
    if not cell_devices(kernel) or "float32" not in kernel.dtypes:
        pytest.skip(f"{kernel.name} does not run here in float32")
    fw = framework(kernel.framework)
    letters = normalized_layout(kernel.layout_of("q"))
    q, k, v = (to_layout(a, letters) for a in
               np.random.default_rng(7).standard_normal((3, 2, 4, 65, 32)))
    try:
        out = kernel.fn(*(fw.put(a, "float32", "cpu") for a in (q, k, v)), **kernel.keywords)
    except Refused as refusal:
        pytest.skip(str(refusal))
    assert_attention_close(fw.get(out), *(a.astype(np.float32) for a in (q, k, v)),
                           compute=kernel.compute_for(FLOAT32).name, framework=kernel.framework,
                           layout=letters)
