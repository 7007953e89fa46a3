"""Planted kernels that return (out, lse) and are differentiated by their framework, in JAX and in
PyTorch: correct ones, whose gradients flow through both outputs, and ones whose lse is cut off
from the backward (``stop_gradient``, ``detach``: a custom backward that ignores the lse's
cotangent, as upstream kernels have shipped), right in every gradient of a loss that reads O
alone and wrong (dQ, dK short of a_ij g_lse_i) in one that reads the lse too.
"""

from __future__ import annotations

from attnproof.kernels import Kernel


def jax_attention(q, k, v, mask=None, scale=None, *, cut: bool = False):
    """(out, lse) in layout bhsd, mask bool; the lse through ``stop_gradient`` where ``cut``."""
    import jax
    import jax.numpy as jnp

    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) * scale
    keep = jnp.ones(s.shape, dtype=bool) if mask is None else mask
    s = jnp.where(keep, s, -jnp.inf)
    top = jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, 0)
    e = jnp.where(keep, jnp.exp(s - top), 0)
    total = e.sum(axis=-1, keepdims=True)
    out = jnp.einsum("bhqk,bhkd->bhqd", e / jnp.where(total > 0, total, 1), v)
    lse = (jnp.log(total) + top)[..., 0]
    return out, jax.lax.stop_gradient(lse) if cut else lse


def torch_attention(q, k, v, mask=None, scale=None, *, cut: bool = False):
    """The same in PyTorch; the lse detached where ``cut``."""
    import torch

    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
    keep = torch.ones_like(s, dtype=torch.bool) if mask is None else mask
    s = s.masked_fill(~keep, float("-inf"))
    top = torch.amax(s, dim=-1, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.where(keep, torch.exp(s - top), torch.zeros_like(s))
    total = e.sum(dim=-1, keepdim=True)
    out = torch.einsum("bhqk,bhkd->bhqd", e / torch.where(total > 0, total, 1), v)
    lse = (torch.log(total) + top)[..., 0]
    return out, lse.detach() if cut else lse


def kernel(framework: str, cut: bool) -> Kernel:
    attention = jax_attention if framework == "jax" else torch_attention

    def forward(q, k, v, **keywords):
        return attention(q, k, v, cut=cut, **keywords)

    name = f"{framework}_lse_{'cut' if cut else 'through'}"
    return Kernel(name=name, fn=forward, framework=framework, mask="bool", returns_lse=True,
                  fully_masked="zeros", fully_masked_lse="-inf", gradients="autodiff",
                  dtypes=("float32",), compute_dtype="float32")
