"""Planted kernels packed by segment ids, in NumPy, shaped like MaxText's and splash attention's
``segment_ids``: q, k, v a dense batch of one (bhsd), each token's sequence id in
``q_segment_ids`` and ``kv_segment_ids`` (int32, (1, tokens)), query i keeping key j iff their
ids are equal; the lse (b, h, s).

``correct`` builds that mask and runs the planted dense kernel (``planted.attention``) under
it. Each variant has one defect of a class reported on segment-id paths:

- ``segments_ignored``: a fallback path that drops the ids, every query attending every key
  (attention bleeding across documents);
- ``padding_attended``: keys of id 0 kept by every query (0 read as "no segment given");
- ``ids_in_8_bits``: the ids compared as 8-bit integers, so that sequences whose ids differ
  by a multiple of 256 attend each other;
- ``keys_by_query_ids``: the keys' ids read from the queries' array (right wherever every
  sequence has as many queries as keys).

``jax_segments`` is the correct form in JAX, jittable (the ids traced), and
``jax_segments_int8`` the same with its ids cast to int8.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnproof.kernels import Kernel

from . import planted

DEFECTS = ("segments_ignored", "padding_attended", "ids_in_8_bits", "keys_by_query_ids")


def _keep(q_segment_ids, kv_segment_ids, defect: str | None) -> np.ndarray:
    """(1, 1, t_q, t_k): which keys each query keeps, as the kernel reads its ids."""
    q_ids, kv_ids = np.asarray(q_segment_ids)[0], np.asarray(kv_segment_ids)[0]
    if defect == "keys_by_query_ids":
        kv_ids = np.resize(q_ids, kv_ids.shape)
    if defect == "ids_in_8_bits":
        q_ids, kv_ids = q_ids.astype(np.uint8), kv_ids.astype(np.uint8)
    keep = q_ids[:, None] == kv_ids[None, :]
    if defect == "segments_ignored":
        keep = np.ones_like(keep)
    if defect == "padding_attended":
        keep = keep | (kv_ids == 0)[None, :]
    return keep[None, None]


def segment_attention(q, k, v, q_segment_ids, kv_segment_ids, scale=None, *,
                      defect: str | None = None):
    """(out, lse) of attention under the segments' mask."""
    keep = np.broadcast_to(_keep(q_segment_ids, kv_segment_ids, defect),
                           (*q.shape[:2], q.shape[2], k.shape[2]))
    return planted.attention(q, k, v, mask=keep, scale=scale)


def segment_attention_vjp(q, k, v, g, q_segment_ids, kv_segment_ids, scale=None, *,
                          defect: str | None = None):
    keep = np.broadcast_to(_keep(q_segment_ids, kv_segment_ids, defect),
                           (*q.shape[:2], q.shape[2], k.shape[2]))
    return planted.attention_vjp(q, k, v, g, mask=keep, scale=scale)


def kernel(name: str, defect: str | None = None) -> Kernel:
    def forward(q, k, v, **keywords):
        return segment_attention(q, k, v, defect=defect, **keywords)

    def vjp(q, k, v, g, **keywords):
        return segment_attention_vjp(q, k, v, g, defect=defect, **keywords)

    return Kernel(name=name, fn=forward, framework="numpy", layout="bhsd", returns_lse=True,
                  packed="segment_ids", fully_masked="zeros", fully_masked_lse="-inf",
                  gradients=vjp, gqa=True, dtypes=("float32",), compute_dtype="float32")


correct = kernel("segments_correct")
PLANTED = {name: kernel(f"segments_{name}", name) for name in DEFECTS}


def with_declaration(**changes) -> Kernel:
    return dataclasses.replace(correct, **changes)


# -- in JAX, jitted: the mask built from the ids under the checker's jit ------------------------


def jax_segment_attention(q, k, v, q_segment_ids, kv_segment_ids, *, id_dtype=None):
    """Attention under the segments' mask, jittable (the ids are traced, the shapes static), as
    MaxText's dot-product path builds it: ``q_ids[:, None] == kv_ids[None, :]``, the scores of
    other segments −∞ and their weights 0. ``id_dtype`` casts the ids first (int8: ids that
    differ by a multiple of 256 collide)."""
    import jax.numpy as jnp

    q_ids, kv_ids = q_segment_ids[0], kv_segment_ids[0]
    if id_dtype is not None:
        q_ids, kv_ids = q_ids.astype(id_dtype), kv_ids.astype(id_dtype)
    keep = (q_ids[:, None] == kv_ids[None, :])[None, None]
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) * q.shape[-1] ** -0.5
    s = jnp.where(keep, s, -jnp.inf)
    top = jnp.max(s, axis=-1, keepdims=True)
    e = jnp.where(keep, jnp.exp(s - jnp.where(jnp.isfinite(top), top, 0)), 0)
    return jnp.einsum("bhqk,bhkd->bhqd", e / e.sum(axis=-1, keepdims=True), v)


def jax_kernel(name: str, id_dtype=None) -> Kernel:
    def forward(q, k, v, **keywords):
        return jax_segment_attention(q, k, v, id_dtype=id_dtype, **keywords)

    return Kernel(name=name, fn=forward, framework="jax", layout="bhsd", packed="segment_ids",
                  scale_argument=None, fully_masked="zeros", gradients="autodiff",
                  dtypes=("float32",), compute_dtype="float32")


jax_segments = jax_kernel("jax_segment_ids")
jax_segments_int8 = jax_kernel("jax_segment_ids_int8", id_dtype="int8")
