"""A JAX kernel written for JAX's default configuration (``jax_enable_x64`` off), correct there,
which raises once x64 is switched on, as JAX libraries written that way do: flash-attention-jax's
float32 backward, whose accumulators take JAX's default dtype, and Pallas's causal path, which
divides an int64 index by an int32 block size with ``lax.div``.

With x64 off, ``jnp.arange`` gives int32 and ``jnp.zeros(shape)`` float32; with it on, int64
and float64, and both constructions below raise a TypeError: ``lax.div`` takes operands of one
dtype, and a ``lax.fori_loop`` carry must keep its type (float64 in, float32 out).
"""

from __future__ import annotations

import dataclasses

from attnproof.kernels import Kernel

BLOCK = 4  # keys per block of the online softmax


def attention(q, k, v, mask=None, is_causal=False, scale=None):
    """Attention in layout bhsd, float32, by an online softmax over blocks of BLOCK keys."""
    import jax.numpy as jnp
    from jax import lax

    n_q, n_k = q.shape[2], k.shape[2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) * jnp.asarray(scale, q.dtype)
    keep = jnp.ones(s.shape, dtype=bool)
    if mask is not None and mask.dtype == bool:
        keep = keep & mask
    elif mask is not None:  # a float mask: a finite bias added to the scores, −inf drops a key
        keep = keep & jnp.isfinite(mask)
        s = s + jnp.where(keep, mask, 0).astype(s.dtype)
    if is_causal:  # upper-left: query i keeps keys j <= i
        keep = keep & (jnp.arange(n_k)[None, :] <= jnp.arange(n_q)[:, None])
    # which block each key falls in: jnp.arange is int32 under JAX's default, int64 under x64,
    # where lax.div of it by an int32 raises
    key_block = lax.div(jnp.arange(n_k), jnp.int32(BLOCK))
    blocks = -(-n_k // BLOCK)

    def step(t, carry):
        top, total, acc = carry
        in_block = keep & (key_block == t)
        block_top = jnp.max(jnp.where(in_block, s, -jnp.inf), axis=-1)
        new_top = jnp.maximum(top, block_top)
        safe = jnp.where(jnp.isfinite(new_top), new_top, 0.0)
        # exp of finite arguments only, so that no gradient meets −∞ − −∞
        alpha = jnp.where(jnp.isfinite(top), jnp.exp(jnp.where(jnp.isfinite(top), top, safe)
                                                     - safe), 0.0)
        p = jnp.where(in_block, jnp.exp(jnp.where(in_block, s, safe[..., None])
                                        - safe[..., None]), 0.0)
        # the carry keeps the inputs' dtype, as the loop's first iteration saw it
        acc = (alpha[..., None] * acc + jnp.einsum("bhqk,bhkd->bhqd", p, v)).astype(q.dtype)
        return new_top, (alpha * total + jnp.sum(p, axis=-1)).astype(q.dtype), acc

    top = jnp.full(s.shape[:-1], -jnp.inf, dtype=q.dtype)
    total = jnp.zeros(s.shape[:-1], dtype=q.dtype)
    # the accumulator in JAX's default dtype: float32 with x64 off, float64 with it on, where
    # the loop's carry changes type and lax.fori_loop raises
    acc = jnp.zeros((*s.shape[:-1], v.shape[-1]))
    _, total, acc = lax.fori_loop(0, blocks, step, (top, total, acc))
    return acc / jnp.where(total > 0, total, 1.0)[..., None]


default_dtypes_only = Kernel(
    name="default dtypes only (planted JAX)", fn=attention, framework="jax", layout="bhsd",
    mask="bool", causal_argument="is_causal", scale_argument="scale", gradients="autodiff",
    fully_masked="zeros", causal_alignment="upper_left", masked_inputs="finite",
    dtypes=("float32",), compute_dtype="float32", mode="jit")

# the same, taking float masks of any dtype too: a float64 one needs x64, which JAX otherwise
# turns into float32 without a word
float_masks = dataclasses.replace(default_dtypes_only, name="default dtypes only, float masks",
                                  mask=("bool", "bias"))
