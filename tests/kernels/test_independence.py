"""Batch independence and history independence: each element of a batch against itself run
alone, each call of one kernel object against the same call made on a fresh copy, and the
fresh copies themselves."""

from __future__ import annotations

import dataclasses

import numpy as np

from attnproof.kernels import Case, Kernel, check_kernel, replay
from attnproof.kernels._cases import instance
from attnproof.symbolic import FLOAT32

from . import planted


def _variant(**changes) -> Kernel:
    return dataclasses.replace(planted.correct, **changes)


# -- batch independence --------------------------------------------------------------------------


def test_an_element_of_length_zero_has_every_key_masked_and_the_others_keep_theirs():
    case = Case(n_q=3, n_k=5, batch=3, heads=2, kv_heads=2, mask="padding", empty_element=1,
                seed=4)
    keep = instance(case, FLOAT32, FLOAT32).keep
    assert not keep[1].any() and keep[0].any() and keep[2].any()
    assert "b=3 (element 1 of length zero)" in case.sizes()


def _mean_of_v_when_run_alone(q, k, v, mask=None, **keywords):
    """Right for every element, but an element with no kept key returns the mean of V when
    it is the whole batch and zeros beside others: what it returns depends on its neighbours."""
    out, lse = planted.attention(q, k, v, mask=mask, **keywords)
    if mask is not None and q.shape[0] == 1:
        rows = ~np.any(mask, axis=-1)
        out = np.where(rows[..., None], np.mean(v, axis=2, keepdims=True), out)
    return out.astype(q.dtype), lse


def test_an_element_that_differs_from_itself_run_alone_fails_though_each_run_is_right():
    kernel = _variant(fn=_mean_of_v_when_run_alone, fully_masked=None, gradients=None)
    cell = check_kernel(kernel, properties=["batch_independence"], examples=10).cells[0]
    assert cell.status == "fails", cell
    message = cell.counterexample["message"]
    assert "differs from the same element run alone" in message
    assert cell.counterexample["batched"] != cell.counterexample["alone"]


def test_a_kernel_that_takes_no_mask_is_checked_at_batches_without_an_empty_element():
    kernel = _variant(mask="none", causal_argument=None)
    seen = []
    cell = check_kernel(kernel, properties=["batch_independence"], examples=10,
                        on_case=lambda case, dtype: seen.append(case)).cells[0]
    assert cell.status == "conforms", cell
    assert all(c.batch >= 2 and c.empty_element is None and c.mask == "none" for c in seen)


# -- history independence -------------------------------------------------------------------------


def test_a_case_with_its_history_replays_from_its_json():
    case = Case(n_q=2, scale=2.0, history=(("float16", Case(n_q=2, scale=0.5)),
                                           ("float32", Case(n_k=7))))
    assert Case.from_json(case.to_json()) == case
    assert case.to_json().startswith('{"n_q":2,"scale":2.0,"history":[["float16",')


def test_each_call_of_a_stateful_kernel_is_compared_with_a_fresh_call():
    kernel = planted.fresh("cache_without_scale")
    first, second = Case(n_q=2, n_k=3, scale=0.5), Case(n_q=2, n_k=3, scale=2.0)
    after = dataclasses.replace(second, history=(("float32", first),))
    assert replay(kernel, "history_independence", "float32", after).status == "fail"
    other_shape = dataclasses.replace(second, n_k=4, history=(("float32", first),))
    assert replay(kernel, "history_independence", "float32", other_shape).status == "pass"
    # every other property runs each case on the kernel as declared: no call sees another
    assert replay(kernel, "forward", "float32", first).status == "pass"
    assert replay(kernel, "forward", "float32", second).status == "pass"


def test_fresh_copies_start_from_the_state_as_declared_and_share_it_between_callables():
    kernel = planted.fresh("cache_without_scale")
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 1, 3, 2)).astype(np.float32) for _ in range(3))
    kernel.fn(q, k, v, scale=0.5)  # the kernel's own cache now holds scale 0.5
    stale = kernel.fn(q, k, v, scale=2.0)[0]
    copy = kernel.fresh()
    fresh = copy.fn(q, k, v, scale=2.0)[0]
    assert not np.allclose(stale, fresh)
    np.testing.assert_allclose(fresh, planted.attention(q, k, v, scale=2.0)[0], rtol=1e-6)
    forward_state = _closure_dicts(copy.fn)
    assert forward_state and forward_state == _closure_dicts(copy.gradients)  # one cache


def _closure_dicts(function) -> list[int]:
    """The ids of the dicts reachable through ``function``'s closures."""
    found, stack = [], [function]
    while stack:
        item = stack.pop()
        for cell in getattr(item, "__closure__", None) or ():
            value = cell.cell_contents
            if isinstance(value, dict):
                found.append(id(value))
            elif callable(value):
                stack.append(value)
    return sorted(set(found))


def test_a_kernel_whose_callables_keep_no_state_is_its_own_fresh_copy():
    assert planted.correct.fresh() is planted.correct
    assert planted.no_max_shift.fresh() is planted.no_max_shift


def test_a_framework_s_objects_are_shared_and_a_buffer_of_one_s_own_is_copied():
    import pytest

    from attnproof.kernels._fresh import copied, holds_state

    jax = pytest.importorskip("jax")
    jitted = jax.jit(lambda q: q)  # its cache is compilation: a copy would compile again

    def through_jit(q, k, v):
        return jitted(q)

    assert not holds_state(jitted) and not holds_state(through_jit)
    buffer = np.zeros(3)

    def scratch(q, k, v):
        buffer[:] += 1
        return buffer

    assert holds_state(scratch)
    again = copied(scratch, {})
    again(None, None, None)
    assert buffer.sum() == 0 and again.__closure__[0].cell_contents.sum() == 3
