"""Gradients through the returned lse: where the loss reads a kernel's lse as well as O (a
split-KV merge, ring attention), dQ and dK gain Σ_j a_ij g_lse_i k_j and Σ_i a_ij g_lse_i q_i
(the catalog's lse_gradient_is_the_softmax). ``backward_lse`` takes the kernel's gradients
through both outputs. Planted (``planted_lse``): kernels whose lse is cut off from the backward
(JAX's stop_gradient, torch's detach) are right in every gradient of O alone and fail
``backward_lse``; their twins conform."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnproof.kernels import Case, check_kernel
from attnproof.kernels._cases import instance
from attnproof.kernels._run import with_lse_cotangent
from attnproof.kernels._truth import reference, truth
from attnproof.symbolic import FLOAT64

from . import planted, planted_lse
from ._cells import not_conforming

PROPERTIES = ["backward_dq", "backward_dk", "backward_dv", "backward_lse"]


@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_an_lse_cut_off_from_the_backward_fails_backward_lse_alone(framework):
    pytest.importorskip(framework)
    cut = check_kernel(planted_lse.kernel(framework, cut=True), examples=8,
                       properties=PROPERTIES)
    assert [c.property for c in cut.cells if c.status != "conforms"] == ["backward_lse"]
    through = check_kernel(planted_lse.kernel(framework, cut=False), examples=8,
                           properties=PROPERTIES)
    assert not not_conforming(through)


def test_the_truth_through_the_lse_is_its_derivative_written_out():
    case = Case(n_q=3, n_k=5, d_k=4, d_v=2, batch=2, heads=2, kv_heads=1, mask="random", seed=3)
    x = with_lse_cotangent(instance(case, FLOAT64, FLOAT64), case, FLOAT64)
    k = np.repeat(x.k, x.group, axis=1)
    s = np.where(x.keep, x.scale * np.einsum("bhqd,bhkd->bhqk", x.q, k), -np.inf)
    a = np.exp(s - s.max(-1, keepdims=True))
    a = a / a.sum(-1, keepdims=True)
    ds = a * x.g_lse[..., None]  # d lse_i / d s_ij = a_ij
    without = truth(dataclasses.replace(x, g_lse=None), ("dq", "dk", "dv"))
    exact = truth(x, ("dq", "dk", "dv"))
    np.testing.assert_allclose(exact["dq"][0] - without["dq"][0],
                               x.scale * np.einsum("bhqk,bhkd->bhqd", ds, k), atol=1e-12)
    dk = x.scale * np.einsum("bhqk,bhqd->bhkd", ds, x.q).reshape(2, 1, 2, 5, 4).sum(2)
    np.testing.assert_allclose(exact["dk"][0] - without["dk"][0], dk, atol=1e-12)
    np.testing.assert_allclose(exact["dv"][0], without["dv"][0])
    plain = reference(x, FLOAT64, FLOAT64, ("dq", "dk"))  # the plain reference agrees
    np.testing.assert_allclose(plain["dq"], exact["dq"][0], atol=1e-12)
    np.testing.assert_allclose(plain["dk"], exact["dk"][0], atol=1e-12)


def test_a_kernel_with_its_own_backward_is_not_asked_through_its_lse():
    cell = check_kernel(planted.correct, properties=["backward_lse"], examples=4).cells[0]
    assert cell.status == "n/a" and "lse cotangent" in cell.reason
