"""Planted packed (varlen) kernels in NumPy, shaped like flash-attention's
``flash_attn_varlen_func``: q, k, v of layout thd (tokens, heads, features), the sequences told
apart by ``cu_seqlens_q`` and ``cu_seqlens_k``, the longest lengths passed as ``max_seqlen_q``
and ``max_seqlen_k``, a causal flag aligned lower-right within each sequence; the lse (h, t).

``correct`` runs each sequence through the planted dense kernel (``planted.attention``) and
leaves the slack tokens' outputs and gradients 0. Each variant has one defect of a class the
trackers report on varlen paths:

- ``bleeds_across``: a fallback path that ignores the offsets, every query attending every
  key up to the last offset (attention bleeding across sequences);
- ``slack_gradient_nan``: the slack tokens' dq, dk, dv left as the NaN of an uninitialised
  buffer (tokens past ``cu_seqlens[-1]`` get NaN gradients);
- ``last_to_end``: the last sequence's keys run to the buffer's end, the slack included;
- ``keys_by_query_offsets``: the keys cut by ``cu_seqlens_q`` (right wherever each sequence
  has as many queries as keys);
- ``stops_at_empty``: a sequence of length 0 read as the batch's end, the sequences after it
  left at 0.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnproof.kernels import Kernel

from . import planted

DEFECTS = ("bleeds_across", "slack_gradient_nan", "last_to_end", "keys_by_query_offsets",
           "stops_at_empty")


def _spans(cu_seqlens_q, cu_seqlens_k, total_k: int, defect: str | None):
    """(query span, key span) of each sequence the kernel visits."""
    cu_q, cu_k = np.asarray(cu_seqlens_q), np.asarray(cu_seqlens_k)
    if defect == "keys_by_query_offsets":
        cu_k = cu_q
    spans = []
    for i in range(len(cu_q) - 1):
        q0, q1, k0, k1 = int(cu_q[i]), int(cu_q[i + 1]), int(cu_k[i]), int(cu_k[i + 1])
        if defect == "stops_at_empty" and q1 == q0:
            break
        if defect == "bleeds_across":
            k0, k1 = 0, int(cu_k[-1])
        if defect == "last_to_end" and i == len(cu_q) - 2:
            k1 = total_k
        if q1 > q0:
            spans.append(((q0, q1), (k0, k1)))
    return spans


def _dense(array, span):
    """Tokens [start, end) of a thd array as a bhsd batch of one."""
    return np.transpose(array[span[0]:span[1]], (1, 0, 2))[None]


def _thd(array):
    return np.transpose(array[0], (1, 0, 2))


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None, max_seqlen_k=None,
                     scale=None, causal=False, *, defect: str | None = None):
    """(out (t, h, d_v), lse (h, t)) of each sequence's attention; 0 at the slack tokens."""
    out = np.zeros((q.shape[0], q.shape[1], v.shape[2]), dtype=q.dtype)
    lse = np.zeros((q.shape[1], q.shape[0]), dtype=q.dtype)
    for span_q, span_k in _spans(cu_seqlens_q, cu_seqlens_k, k.shape[0], defect):
        o, m = planted.attention(_dense(q, span_q), _dense(k, span_k), _dense(v, span_k),
                                 causal=causal, scale=scale)
        out[span_q[0]:span_q[1]] = _thd(o)
        lse[:, span_q[0]:span_q[1]] = m[0]
    return out, lse


def varlen_attention_vjp(q, k, v, g, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None,
                         max_seqlen_k=None, scale=None, causal=False, *,
                         defect: str | None = None):
    """(dq, dk, dv) of sum(g · out), sequence by sequence."""
    fill = np.nan if defect == "slack_gradient_nan" else 0.0
    grads = [np.full(a.shape, fill, dtype=a.dtype) for a in (q, k, v)]
    for grad, cu in zip(grads, (cu_seqlens_q, cu_seqlens_k, cu_seqlens_k), strict=True):
        grad[:int(np.asarray(cu)[-1])] = 0.0  # the sequences' tokens start at 0
    for span_q, span_k in _spans(cu_seqlens_q, cu_seqlens_k, k.shape[0], defect):
        parts = planted.attention_vjp(_dense(q, span_q), _dense(k, span_k), _dense(v, span_k),
                                      _dense(g, span_q), causal=causal, scale=scale)
        for grad, part, span in zip(grads, parts, (span_q, span_k, span_k), strict=True):
            grad[span[0]:span[1]] += _thd(part)
    return tuple(grads)


def kernel(name: str, defect: str | None = None) -> Kernel:
    def forward(q, k, v, **keywords):
        return varlen_attention(q, k, v, defect=defect, **keywords)

    def vjp(q, k, v, g, **keywords):
        return varlen_attention_vjp(q, k, v, g, defect=defect, **keywords)

    return Kernel(name=name, fn=forward, framework="numpy", layout="thd", lse_layout="ht",
                  returns_lse=True, packed="cu_seqlens",
                  max_seqlen_arguments=("max_seqlen_q", "max_seqlen_k"),
                  causal_argument="causal", causal_alignment="lower_right",
                  fully_masked="zeros", fully_masked_lse="-inf", gradients=vjp, gqa=True,
                  dtypes=("float32",), compute_dtype="float32")


correct = kernel("varlen_correct")
PLANTED = {name: kernel(f"varlen_{name}", name) for name in DEFECTS}


def with_declaration(**changes) -> Kernel:
    return dataclasses.replace(correct, **changes)


# -- in JAX, jitted: the block-diagonal mask built from the offsets -------------------------------


def segment_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, causal=False, *,
                      zero_unowned: bool = True):
    """Varlen attention as one masked attention over the packed tokens, jittable (the offsets
    are traced, the shapes static): token t of q lies in sequence searchsorted(cu_q, t) − 1,
    and query i keeps key j iff both lie in one sequence below the batch's count. The correct
    form zeroes the tokens no sequence owns before the products; without it, NaN in the slack
    reaches every gradient through 0 × NaN (a masked score's zero cotangent times a NaN key)."""
    import jax.numpy as jnp

    def owner(cu, tokens):
        return jnp.searchsorted(cu, jnp.arange(tokens), side="right") - 1

    count = cu_seqlens_q.shape[0] - 1
    seq_q, seq_k = owner(cu_seqlens_q, q.shape[0]), owner(cu_seqlens_k, k.shape[0])
    owned_q, owned_k = seq_q < count, seq_k < count
    if zero_unowned:
        q = jnp.where(owned_q[:, None, None], q, 0)
        k, v = (jnp.where(owned_k[:, None, None], a, 0) for a in (k, v))
    keep = (seq_q[:, None] == seq_k[None, :]) & owned_q[:, None]
    if causal:  # lower-right within each sequence: i − start_q ≤ j − start_k + n_k − n_q
        end_q, end_k = cu_seqlens_q[jnp.minimum(seq_q, count - 1) + 1], \
            cu_seqlens_k[jnp.minimum(seq_k, count - 1) + 1]
        keep = keep & ((end_q[:, None] - jnp.arange(q.shape[0])[:, None])
                       <= (end_k[None, :] - jnp.arange(k.shape[0])[None, :]))
    s = jnp.einsum("qhd,khd->hqk", q, k) * q.shape[-1] ** -0.5
    s = jnp.where(keep[None], s, -jnp.inf)
    top = jnp.max(s, axis=-1, keepdims=True)
    top = jnp.where(jnp.isfinite(top), top, 0)
    e = jnp.where(keep[None], jnp.exp(s - top), 0)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / jnp.where(total > 0, total, 1)
    return jnp.einsum("hqk,khd->qhd", weights, v)


def jax_kernel(name: str, zero_unowned: bool) -> Kernel:
    def forward(q, k, v, **keywords):
        return segment_attention(q, k, v, zero_unowned=zero_unowned, **keywords)

    return Kernel(name=name, fn=forward, framework="jax", layout="thd", packed="cu_seqlens",
                  scale_argument=None, causal_argument="causal",
                  causal_alignment="lower_right", fully_masked="zeros", gradients="autodiff",
                  dtypes=("float32",), compute_dtype="float32")


jax_segments = jax_kernel("jax_segments", zero_unowned=True)
jax_segments_unzeroed = jax_kernel("jax_segments_unzeroed", zero_unowned=False)
