"""Planted split-KV kernels in NumPy: the keys of each row cut into splits, each split's
maximum, sum and weighted V computed on its own, then merged by their log-sum-exps, as decode
kernels do on a GPU. Both are right within the rule; they differ in how many splits they run.

``fixed_splits`` runs the same number whatever the batch (4, or fewer where there are fewer
keys): each element's bits do not depend on its batch-mates, and it declares so.
``splits_by_batch`` runs more splits the smaller the batch, to fill a device of 8 units
(``max(1, 8 // (batch × heads))``, the heuristic of split-KV decode paths): an element alone
is summed in another order than beside others, a difference of an ulp or so that only a
declared batch invariance makes a defect. ``long_splits_by_batch`` does so only past
``LONG`` keys (short rows in one split), where no drawn batch of the shape ladder reaches (its
batches have at most 17 keys): only the property's decode cases find it. The kernels differ in
nothing else.
"""

from __future__ import annotations

import numpy as np

from attnproof.kernels import Kernel

FIXED_SPLITS = 4
DEVICE_UNITS = 8  # what the batch-dependent variant divides among the batch's rows of heads
LONG = 128  # the keys past which the long-row variant splits by the batch size


def _fixed(batch: int, heads: int, n_k: int) -> int:
    return min(FIXED_SPLITS, n_k)


def _by_batch(batch: int, heads: int, n_k: int) -> int:
    return min(max(1, DEVICE_UNITS // (batch * heads)), n_k)


def _by_batch_when_long(batch: int, heads: int, n_k: int) -> int:
    return _by_batch(batch, heads, n_k) if n_k > LONG else 1


def split_kv_attention(q, k, v, scale=None, *, splits_for):
    """softmax(scale QKᵀ) V in the inputs' dtype, the keys cut into ``splits_for(batch,
    heads, n_k)`` contiguous splits and merged by their maxima and sums, one batch element at
    a time: NumPy's own reductions and products over a stacked batch are not the same to the
    bit as over one element (its sum over the last axis of a (4, 1, 1, 65) array differs from
    that of one of its rows), so a kernel vectorised over the batch is not batch-invariant
    whatever its splits."""
    dtype = q.dtype
    batch, heads, _, d_k = q.shape
    scale = dtype.type(1.0 / np.sqrt(d_k) if scale is None else scale)
    splits = splits_for(batch, heads, k.shape[2])
    return np.stack([_one_element(q[b], k[b], v[b], scale, splits) for b in range(batch)])


def _one_element(q, k, v, scale, splits: int):
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    maxima, sums, outs = [], [], []
    for keys in np.array_split(np.arange(k.shape[1]), splits):
        part = scores[..., keys]
        top = part.max(axis=-1, keepdims=True)
        weights = np.exp(part - top)
        maxima.append(top)
        sums.append(weights.sum(axis=-1, keepdims=True))
        outs.append(weights @ v[:, keys, :])
    top = np.max(np.stack(maxima), axis=0)
    total = np.zeros_like(sums[0])
    out = np.zeros(q.shape[:2] + (v.shape[-1],), q.dtype)
    for m, s, o in zip(maxima, sums, outs, strict=True):
        factor = np.exp(m - top)
        total = total + factor * s
        out = out + factor * o
    return (out / total).astype(q.dtype)


def _kernel(name: str, splits_for, batch_invariant: bool) -> Kernel:
    def forward(q, k, v, scale=None):
        return split_kv_attention(q, k, v, scale, splits_for=splits_for)

    return Kernel(name=name, fn=forward, framework="numpy", layout="bhsd", mask="none",
                  scale_argument="scale", batch_invariant=batch_invariant,
                  dtypes=("float32", "float64"))


fixed_splits = _kernel("fixed_splits", _fixed, batch_invariant=True)
splits_by_batch = _kernel("splits_by_batch", _by_batch, batch_invariant=True)
long_splits_by_batch = _kernel("long_splits_by_batch", _by_batch_when_long,
                               batch_invariant=True)
