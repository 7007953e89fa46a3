"""Every field a kernel declares binds every property's cases: explicit ones, drawn ones and the
earlier calls of a history. Walked here over every property × every declaration field (the
sinks and window keywords and the window's form included), each declared the restrictive way,
and the constraint each must impose checked on the cases themselves (not on how the checker
builds them).

Measured before: a kernel declared with ``scale_argument=None`` ("the kernel always uses
1/√d_k") was still judged at drawn scales 0.5, 1 and 2, and a correct fixed-scale kernel failed
forward, row_offset and block_lengths at 46,029× its reference's error."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from attnproof.kernels import PROPERTIES, check_kernel

from . import planted

# (field changed from the correct kernel's declaration, what every case must then satisfy)
DECLARATIONS = {
    "scale_argument=None": (dict(scale_argument=None),
                            lambda case, dtype: case.scale is None),
    "equal_head_dims": (dict(equal_head_dims=True), lambda case, dtype: case.d_v == case.d_k),
    "no gqa or mqa": (dict(gqa=False, mqa=False),
                      lambda case, dtype: case.kv_heads == case.heads),
    "mqa only": (dict(gqa=False, mqa=True),
                 lambda case, dtype: case.kv_heads in (1, case.heads)),
    "no mask, no causal flag": (dict(mask="none", causal_argument=None),
                                lambda case, dtype: case.mask == "none"
                                and not case.causal_flag),
    "causal flag only": (dict(mask="none", causal_argument="causal"),
                         lambda case, dtype: case.mask in ("none", "causal")
                         and case.causal_flag == (case.mask == "causal")),
    "always causal": (dict(always_causal=True, causal_argument=None),
                      lambda case, dtype: case.causal_too and not case.causal_flag
                      and case.mask != "causal"),
    "no softcap keyword": (dict(softcap_argument=None),
                           lambda case, dtype: case.softcap is None),
    "no bias": (dict(bias_argument=None, mask="bool"),
                lambda case, dtype: case.bias is None),
    "float32 only": (dict(dtypes=("float32",)), lambda case, dtype: dtype == "float32"),
    "no sinks keyword": (dict(sinks_argument=None), lambda case, dtype: case.sinks is None),
    "no window keyword": (dict(window_argument=None),
                          lambda case, dtype: case.window_left is None
                          and case.window_right is None),
    "symmetric window": (dict(window_form="symmetric"),
                         lambda case, dtype: case.window_left == case.window_right),
    "dense, not packed": (dict(packed=None),
                          lambda case, dtype: case.packed is None and case.slack == 0),
    "window by its size": (dict(window_form="size"),
                           lambda case, dtype: case.window_left is None
                           or case.window_right == 0),
}


def _calls(case):
    """The case and each call of its history, with the dtype each is made in (None: the
    cell's)."""
    return [(case, None), *((call, dtype) for dtype, call in case.history)]


def _kernel(changes: dict):
    return dataclasses.replace(planted.correct, name="declared", **changes)


@pytest.mark.slow  # 60 draws of every property × every field: minutes on two cores
@pytest.mark.parametrize("declaration", sorted(DECLARATIONS))
@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.name)
def test_every_case_of_every_property_respects_the_declaration(prop, declaration):
    changes, holds = DECLARATIONS[declaration]
    kernel = _kernel(changes)
    if prop.unsupported(kernel) is not None:
        pytest.skip(f"{prop.name} is n/a for this kernel: {prop.unsupported(kernel)}")
    for case in prop.explicit_cases(kernel):
        for call, dtype in _calls(case):
            assert holds(call, dtype or "float32"), (prop.name, declaration, "explicit", call)

    @settings(max_examples=60, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(prop.strategy(kernel))
    def drawn(case):
        for call, dtype in _calls(case):
            assert holds(call, dtype or "float32"), (prop.name, declaration, call)

    drawn()


def test_the_walk_names_declaration_fields_that_exist():
    fields = {f.name for f in dataclasses.fields(planted.correct)}
    named = {name for changes, _ in DECLARATIONS.values() for name in changes}
    assert named <= fields


@pytest.mark.slow
def test_a_correct_kernel_that_always_uses_one_over_root_d_conforms_in_every_cell():
    # softmax(QKᵀ/√d)V with no scale keyword: judged against the scale it always uses (it read
    # 46,029× its reference's error at scale 0.5 in forward, row_offset and block_lengths)
    def fixed_scale(q, k, v, scale=None, **keywords):
        assert scale is None, "a kernel with no scale keyword is never passed one"
        return planted.attention(q, k, v, **keywords)

    kernel = dataclasses.replace(planted.correct, name="fixed_scale", fn=fixed_scale,
                                 scale_argument=None)
    result = check_kernel(kernel, examples=10)
    failing = [(c.property, c.status, c.reason) for c in result.cells
               if c.status not in ("conforms", "n/a")]
    assert not failing
