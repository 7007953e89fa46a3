"""Attention sinks and sliding windows, two declaration fields each checked by a property of
its own: correct kernels conform, and the planted kernels that drop the sink under a mask,
read another head's sink, bound the window exclusively or ignore either knob fail at that
property. The truth with sinks is held to an independent float64 computation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, KernelError, check_kernel, replay
from attnproof.kernels._cases import causal_keep, instance
from attnproof.kernels._matrix import write
from attnproof.kernels._properties import as_declared
from attnproof.kernels._sinks import with_sink_key, without_sink_key
from attnproof.kernels._truth import sink_gradient, truth, truth_lse
from attnproof.kernels._windows import keyword, window_keep
from attnproof.symbolic import FLOAT32, FLOAT64

from . import planted

EXAMPLES = 12


def _cell(kernel, prop: str):
    return check_kernel(kernel, properties=[prop], examples=EXAMPLES).cells[0]


# -- the truth -----------------------------------------------------------------------------------


def _sink_attention(x):
    """Out, lse, dQ, dK, dV of attention with sinks, written out in float64 (no GQA, no bias):
    a_ij = e^{s_ij} / (e^{σ_h} + Σ_k e^{s_ik}) over the kept keys."""
    s = x.scale * np.einsum("bhqd,bhkd->bhqk", x.q, x.k)
    sink = x.sinks[None, :, None, None]
    top = np.maximum(np.max(np.where(x.keep, s, -np.inf), axis=-1, keepdims=True), sink)
    e = np.where(x.keep, np.exp(s - top), 0.0)
    z = np.sum(e, axis=-1, keepdims=True) + np.exp(sink - top)
    a = e / z
    da = np.einsum("bhqd,bhkd->bhqk", x.g, x.v)
    ds = a * (da - np.sum(a * da, axis=-1, keepdims=True))
    out = np.einsum("bhqk,bhkd->bhqd", a, x.v)
    p_sink = np.exp(sink - top) / z  # the catalog's sink_gradient: -Σ_rows p_sink Σ_b G_b o_b
    dsinks = -np.sum(p_sink[..., 0] * np.sum(x.g * out, axis=-1), axis=(0, 2))
    return {"out": out, "lse": (np.log(z) + top)[..., 0],
            "dq": x.scale * np.einsum("bhqk,bhkd->bhqd", ds, x.k),
            "dk": x.scale * np.einsum("bhqk,bhqd->bhkd", ds, x.q),
            "dv": np.einsum("bhqk,bhqd->bhkd", a, x.g), "dsinks": dsinks}


@pytest.mark.parametrize("sinks", ["comparable", "dominant", "negligible", "mixed"])
@pytest.mark.parametrize("mask", ["none", "random", "fully_masked"])
def test_the_truth_with_sinks_is_attention_with_the_sink_in_the_denominator(sinks, mask):
    case = Case(n_q=4, n_k=6, d_k=3, d_v=2, batch=2, heads=2, kv_heads=2, mask=mask,
                sinks=sinks, seed=7)
    x = instance(case, FLOAT64, FLOAT64)
    appended = with_sink_key(x)
    exact = without_sink_key(truth(appended), x.k.shape[2])
    written = _sink_attention(x)
    for name in ("out", "dq", "dk", "dv"):
        np.testing.assert_allclose(exact[name][0], written[name], rtol=1e-10, atol=1e-12,
                                   err_msg=name)
    np.testing.assert_allclose(truth_lse(appended)[0], written["lse"], rtol=1e-12)
    np.testing.assert_allclose(sink_gradient(appended)[0][0, :, 0, 0], written["dsinks"],
                               rtol=1e-10, atol=1e-300)


def test_a_sink_gradient_lost_fails_sinks_at_dsinks(tmp_path):
    # the forward and dQ, dK, dV right, dL/ds returned as 0 (a sink trained by nothing)
    result = check_kernel(planted.sink_gradient_zero, properties=["sinks"], examples=EXAMPLES)
    write([result], tmp_path)  # of the schema's shape, its failing output dsinks included
    cell = result.cells[0]
    assert cell.status == "fails"
    assert cell.counterexample["mechanism"]["output"] == "dsinks"
    assert cell.counterexample["message"].startswith("dsinks: error")
    assert "at head" in cell.counterexample["message"]


def test_a_backward_of_three_gradients_is_not_asked_for_dsinks_and_says_so(tmp_path):
    def three(q, k, v, g, **keywords):
        return planted.correct.gradients(q, k, v, g, **keywords)[:3]

    kernel = dataclasses.replace(planted.correct, name="three", gradients=three)
    result = check_kernel(kernel, properties=["sinks"], dtypes=["float32"], examples=EXAMPLES)
    cell = result.cells[0]
    assert cell.status == "conforms"
    # every decided case left dsinks unjudged, and the cell and its matrix say so
    assert cell.unchecked == {"dsinks": {"cases": cell.decided, "why": (
        "the kernel's own backward returns dQ, dK, dV only: no sink gradient to judge")}}
    assert f"dsinks not judged in {cell.decided} of {cell.decided} decided cases" in cell.reason
    write([result], tmp_path)
    written = (tmp_path / "conformance.md").read_text()
    assert "dsinks not judged: the kernel's own backward returns dQ, dK, dV only" in written
    # the correct kernel, whose backward gives dsinks, leaves nothing unjudged
    assert _cell(planted.correct, "sinks").unchecked == {}


def test_sink_kinds_bind_or_not_as_named():
    x = instance(Case(n_q=4, n_k=6, heads=2, kv_heads=2, sinks="comparable", seed=3),
                 FLOAT64, FLOAT64)
    lse = truth_lse(x)[0]
    taken = np.exp(x.sinks[None, :, None] - np.logaddexp(lse, x.sinks[None, :, None]))
    assert np.all((taken > 0.01) & (taken < 0.99))  # a share of every row
    x = instance(dataclasses.replace(Case(n_q=4, n_k=6, seed=3), sinks="negligible"),
                 FLOAT64, FLOAT64)
    assert np.all(x.sinks[None, :, None] < truth_lse(x)[0] - 30)


def test_a_case_without_sinks_or_a_window_keeps_its_arrays():
    # sinks are drawn after every other array, and the band takes nothing from the generator
    plain = Case(n_q=5, n_k=7, mask="random", seed=11)
    x = instance(plain, FLOAT32, FLOAT32)
    for changed in (dataclasses.replace(plain, sinks="comparable"),
                    dataclasses.replace(plain, window_left=2, window_right=1)):
        y = instance(changed, FLOAT32, FLOAT32)
        for name in ("q", "k", "v"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name))
        np.testing.assert_array_equal(y.passed("mask"), x.keep)


# -- windows -------------------------------------------------------------------------------------


def test_a_window_keeps_the_keys_between_its_bounds_inclusive():
    # JAX's documented example: (3, 2) at position 6 of ten keeps keys 3 to 8
    band = window_keep(10, 10, 3, 2, "upper_left")
    assert np.nonzero(band[6])[0].tolist() == [3, 4, 5, 6, 7, 8]
    assert np.nonzero(window_keep(3, 5, 0, 0, "lower_right")[0])[0].tolist() == [2]


@pytest.mark.parametrize("alignment", ["upper_left", "lower_right"])
@pytest.mark.parametrize("n_q,n_k", [(4, 4), (3, 6), (6, 3)])
def test_a_window_looking_back_over_every_key_is_the_causal_mask(alignment, n_q, n_k):
    # far enough back for every query's aligned position i' (up to max(n_q, n_k) - 1)
    np.testing.assert_array_equal(window_keep(n_q, n_k, max(n_q, n_k) - 1, 0, alignment),
                                  causal_keep(n_q, n_k, alignment))
    if alignment == "upper_left" and n_q > n_k:  # n_k - 1 back is not far enough there
        assert not np.array_equal(window_keep(n_q, n_k, n_k - 1, 0, alignment),
                                  causal_keep(n_q, n_k, alignment))


def test_each_window_form_is_asked_and_passed_as_declared():
    case = Case(n_q=8, n_k=8, window_left=3, window_right=2)
    symmetric = dataclasses.replace(planted.correct, window_form="symmetric")
    size = dataclasses.replace(planted.correct, window_form="size")
    none = dataclasses.replace(planted.correct, window_argument=None, sinks_argument=None)
    assert as_declared(symmetric, case).window_right == 3
    assert as_declared(size, case).window_right == 0
    assert as_declared(none, dataclasses.replace(case, sinks="dominant")).window_left is None
    assert as_declared(none, dataclasses.replace(case, sinks="dominant")).sinks is None
    assert (keyword("pair", 3, 2), keyword("symmetric", 3, 3), keyword("size", 3, 0)) == \
        ((3, 2), 3, 4)


def test_a_correct_kernel_taking_its_window_by_size_conforms():
    def by_size(q, k, v, sliding_window=None, **keywords):
        window = None if sliding_window is None else (sliding_window - 1, 0)
        return planted.attention(q, k, v, window=window, **keywords)

    def by_size_vjp(q, k, v, g, sliding_window=None, **keywords):
        window = None if sliding_window is None else (sliding_window - 1, 0)
        return planted.attention_vjp(q, k, v, g, window=window, **keywords)

    kernel = dataclasses.replace(planted.correct, name="by_size", fn=by_size,
                                 gradients=by_size_vjp, window_argument="sliding_window",
                                 window_form="size")
    assert _cell(kernel, "sliding_window").status == "conforms"


# -- declarations and cases ----------------------------------------------------------------------


@pytest.mark.parametrize("changes,field", [(dict(window_form="tuple"), "window_form"),
                                           (dict(sinks_argument="not a name"), "sinks_argument"),
                                           (dict(window_argument=3), "window_argument")])
def test_a_misdeclared_sink_or_window_names_its_field(changes, field):
    with pytest.raises(KernelError, match=field):
        dataclasses.replace(planted.correct, **changes)


def test_cases_with_sinks_and_windows_replay_from_their_json():
    case = Case(n_q=3, n_k=5, sinks="mixed", window_left=2, window_right=0, seed=4)
    assert Case.from_json(case.to_json()) == case
    with pytest.raises(ValueError, match="window_left and window_right"):
        Case.from_json('{"window_left": 2}')
    with pytest.raises(ValueError, match="sinks"):
        Case.from_json('{"sinks": "huge"}')


def test_properties_without_the_feature_are_not_applicable():
    plain = dataclasses.replace(planted.correct, sinks_argument=None, window_argument=None)
    cells = check_kernel(plain, properties=["sinks", "sliding_window"], examples=2).cells
    assert [(c.status, c.reason) for c in cells] == [("n/a", "takes no sinks"),
                                                     ("n/a", "takes no sliding window")]


# -- verdicts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("prop", ["sinks", "sliding_window"])
def test_the_correct_kernel_conforms(prop):
    cell = _cell(planted.correct, prop)
    assert cell.status == "conforms", cell
    assert cell.decided >= 3 and cell.ratio <= 2


@pytest.mark.parametrize("name", sorted(planted.SINKS_WINDOWS))
def test_a_planted_sink_or_window_bug_fails_its_property(name):
    prop = planted.SINKS_WINDOWS[name]
    cell = _cell(getattr(planted, name), prop)
    assert cell.status == "fails", cell
    assert Case.from_json(cell.counterexample["case"]).n_k <= 16


@pytest.mark.parametrize("name,prop", [("sinks_ignored", "sinks"),
                                       ("window_ignored", "sliding_window")])
def test_a_kernel_that_ignores_the_knob_fails(name, prop):
    assert _cell(getattr(planted, name), prop).status == "fails"


def test_a_sink_ignored_is_caught_where_it_binds_only():
    # knob sensitivity: the sink that takes no weight cannot tell the kernel that drops it
    # from the one that keeps it; the one comparable to the rows' mass does
    case = Case(n_q=3, n_k=5, batch=2, heads=2, kv_heads=2, seed=5)
    for kind, status in (("negligible", "pass"), ("comparable", "fail"), ("dominant", "fail")):
        result = replay(planted.sinks_ignored, "sinks", "float32",
                        dataclasses.replace(case, sinks=kind))
        assert result.status == status, (kind, result.message)
        assert replay(planted.correct, "sinks", "float32",
                      dataclasses.replace(case, sinks=kind)).status == "pass"


def test_the_sink_dropped_under_a_mask_is_right_without_one():
    case = Case(n_q=3, n_k=5, batch=2, heads=2, kv_heads=2, sinks="comparable", seed=2)
    kernel = planted.sink_dropped_with_mask
    assert replay(kernel, "sinks", "float32", case).status == "pass"
    assert replay(kernel, "sinks", "float32",
                  dataclasses.replace(case, mask="random")).status == "fail"


def test_a_fully_masked_row_with_a_sink_gives_its_weight_to_the_sink():
    # no key kept: the output is 0 and the lse the sink's logit, not a convention
    case = Case(n_q=4, n_k=4, mask="fully_masked", sinks="comparable", seed=1)
    assert replay(planted.correct, "sinks", "float32", case).status == "pass"
    x = instance(case, FLOAT64, FLOAT64)
    rows = ~np.any(x.keep, axis=-1)
    exact = truth(with_sink_key(x), ("out",))["out"][0]
    assert rows.any() and np.all(exact[rows] == 0)


# -- the library kernels' knobs ------------------------------------------------------------------

KNOBS = {"mlx": ("mlx.core", "sinks", "sinks"), "jax": ("jax", "sliding_window",
                                                        "local_window_size")}


def _knob_dropped(kernel, keyword: str):
    def dropped(q, k, v, **keywords):
        keywords.pop(keyword, None)
        return kernel.fn(q, k, v, **keywords)

    return dataclasses.replace(kernel, name=f"{kernel.name} without {keyword}", fn=dropped)


@pytest.mark.slow  # JAX compiles each drawn shape
@pytest.mark.parametrize("name", sorted(KNOBS))
def test_a_library_kernel_honours_the_knob_its_documentation_states(name):
    from attnproof.kernels.library import LIBRARY

    module, prop, keyword = KNOBS[name]
    pytest.importorskip(module)
    kernel = LIBRARY[name]()
    for checked, status in ((kernel, "conforms"), (_knob_dropped(kernel, keyword), "fails")):
        cell = check_kernel(checked, properties=[prop], dtypes=["float32"],
                            examples=EXAMPLES).cells[0]
        assert cell.status == status, cell


def _softcap_ignored(q, k, v, softcap=None, **keywords):
    return planted.correct.fn(q, k, v, **keywords)


def _softcap_ignored_vjp(q, k, v, g, softcap=None, **keywords):
    return planted.correct.gradients(q, k, v, g, **keywords)


@pytest.mark.parametrize(("name", "prop", "knob"), [
    ("sinks_ignored", "sinks", "sinks"), ("sink_dropped_with_mask", "sinks", "sinks"),
    ("window_ignored", "sliding_window", "sliding window"),
    ("softcap_ignored", "softcap", "soft-capping")])
def test_a_knob_taken_and_ignored_is_named_as_ignored(name, prop, knob):
    kernel = getattr(planted, name, None) or dataclasses.replace(
        planted.correct, name=name, fn=_softcap_ignored, gradients=_softcap_ignored_vjp)
    cell = check_kernel(kernel, properties=[prop], examples=EXAMPLES).cells[0]
    assert cell.status == "fails"
    assert f"the kernel ignored its {knob} here" in cell.counterexample["message"]


@pytest.mark.parametrize(("name", "prop"), [("sink_wrong_head", "sinks"),
                                            ("window_exclusive", "sliding_window")])
def test_a_knob_used_wrongly_is_not_called_ignored(name, prop):
    cell = check_kernel(getattr(planted, name), properties=[prop], examples=EXAMPLES).cells[0]
    assert cell.status == "fails" and "ignored" not in cell.counterexample["message"]
