"""Planted attention kernels in NumPy: ``correct`` and twenty-nine variants, each correct on
Gaussian inputs at a fixed shape and wrong in exactly one property of the kernel check.

The table ``PLANTED`` names, for each, the property that must catch it and the fewest keys a
counterexample needs (more than 16 only for the block-boundary bug, which needs 129). Beyond
it: kernels computing in less precision than declared (``PRECISION``), one with two defects in
one cell (``two_defects``), one of them alone (``nan_rows_past_chunk``), and one whose fully
masked rows change convention with the dtype (``fully_masked_by_dtype``).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from attnproof.kernels import Kernel
from attnproof.kernels._frameworks import precision_format

BLOCK = 128  # the key block of the tiled variants
TILE = 16  # the tile of the backward variant that visits query tiles by count
SENTINEL = -1e4  # the finite stand-in for -inf of the sentinel-filling variant
CHUNK = 64  # the key and query chunk of the variants with two defects in one cell
# the finite start of the running maximum of the variant that starts it there instead of at -inf,
# and the rows below which the constant-returning variant returns CONSTANT
FINITE_START = -1e6
CONSTANT = 1000.0


@dataclasses.dataclass(frozen=True)
class Bugs:
    """Which defect a variant has; all False is the correct kernel."""

    no_max_shift: bool = False
    nan_fully_masked: bool = False
    masked_block_nan: bool = False
    block_tail_dropped: bool = False
    dq_missing_scale: bool = False
    dk_no_rowsum: bool = False
    dv_ignores_mask: bool = False
    causal_upper_left: bool = False
    scale_by_dv: bool = False
    padding_trimmed: bool = False
    gqa_modulo: bool = False
    gqa_any_count: bool = False
    lse_unscaled: bool = False
    sentinel_fill: bool = False
    garbage_leak: bool = False
    lse_ignores_mask: bool = False
    lse_fully_masked_zero: bool = False
    mqa_dkv_first_head: bool = False
    tiles_by_count: bool = False
    bias_scaled_too: bool = False
    merge_no_max_shift: bool = False
    packed_batch_stride: bool = False
    softcap_no_slope: bool = False
    softcap_after_mask: bool = False
    empty_fill_wrong_layout: bool = False
    shift_across_batch: bool = False
    # beyond the table: two defects of one cell, and a convention that changes with the dtype
    keys_twice_past_chunk: bool = False
    nan_rows_past_chunk: bool = False
    nan_fully_masked_float64: bool = False
    running_max_finite_start: bool = False
    far_rows_constant: bool = False
    # of the kernels that take sinks and a sliding window (``SINKS_WINDOWS``)
    sink_dropped_with_mask: bool = False
    sink_wrong_head: bool = False
    sink_by_kv_head: bool = False
    sink_gradient_zero: bool = False
    window_exclusive: bool = False


# the defects of sinks and windows: only kernels with no other defect take either (so each of
# the table's kernels is wrong in its own property only)
FEATURE_BUGS = frozenset({"sink_dropped_with_mask", "sink_wrong_head", "sink_by_kv_head",
                          "sink_gradient_zero", "window_exclusive"})


def _repeat_heads(q, k, bugs: Bugs):
    group = q.shape[1] // k.shape[1]
    if bugs.gqa_modulo:  # query head h reads key head h mod H_kv instead of h // group
        return k[:, np.arange(q.shape[1]) % k.shape[1]]
    if bugs.gqa_any_count:  # query head h reads K/V head h * H_kv // H: h // group at whole
        # groups, and an answer at any other count, where it must refuse
        return k[:, np.arange(q.shape[1]) * k.shape[1] // q.shape[1]]
    return np.repeat(k, group, axis=1)


def _keep(q, k, mask, causal, bugs: Bugs, window=None):
    n_q, n_k = q.shape[2], k.shape[2]
    keep = np.ones((q.shape[0], q.shape[1], n_q, n_k), dtype=bool)
    if mask is not None:
        keep = keep & mask
    if causal:
        shift = 0 if bugs.causal_upper_left else n_k - n_q  # declared lower-right
        keep = keep & (np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + shift)
    if window is not None:
        keep = keep & _band(n_q, n_k, *window, bugs)
    if bugs.padding_trimmed:  # keys past the last one batch element 0 keeps are dropped
        last = np.max(np.nonzero(np.any(keep[0], axis=(0, 1)))[0], initial=0)
        keep = keep & (np.arange(n_k) <= last)
    if bugs.block_tail_dropped and n_k > BLOCK and n_k % BLOCK:
        keep = keep & (np.arange(n_k) < n_k - n_k % BLOCK)
    return keep


def _band(n_q: int, n_k: int, left: int, right: int, bugs: Bugs):
    """Query i keeps keys i' - left <= j <= i' + right, i' = i + n_k - n_q (lower-right, as
    declared); the exclusive variant drops the key at i' - left."""
    i = np.arange(n_q)[:, None] + n_k - n_q
    j = np.arange(n_k)[None, :]
    after_start = (i - left < j) if bugs.window_exclusive else (i - left <= j)
    return after_start & (j <= i + right)


def _sink_logits(sinks, shape, bugs: Bugs):
    """(b, h, 1, 1): each row's sink in float32, None without sinks. The wrong-head variant
    flattens (b, h) head-major, r = h B + b, and reads sinks[r % H] as if rows lay batch-major:
    right at one batch element or one head only."""
    if sinks is None:
        return None
    b, h = shape[:2]
    heads = np.broadcast_to(np.arange(h), (b, h))
    if bugs.sink_wrong_head:
        heads = (np.arange(h)[None, :] * b + np.arange(b)[:, None]) % h
    return np.asarray(sinks, dtype=np.float32)[heads][..., None, None]


def _sinks_taken(sinks, mask, bugs: Bugs, group: int):
    """The sinks the kernel uses: none where a mask is given, in the variant that drops them;
    query head h's read at its K/V head, h // group, in the variant that indexes them so (right
    wherever every K/V head has one query head)."""
    if sinks is not None and bugs.sink_by_kv_head:
        sinks = np.asarray(sinks)[np.arange(len(sinks)) // group]
    return None if bugs.sink_dropped_with_mask and mask is not None else sinks


def _unused_zeroed(k, v, keep):
    """K and V with the keys no query keeps set to 0: whatever they hold (uninitialised
    padding) then cannot reach the output through a zero weight (0 * NaN is NaN)."""
    group = keep.shape[1] // k.shape[1]
    b, h, n_q, n_k = keep.shape
    used = np.any(keep.reshape(b, h // group, group * n_q, n_k), axis=2)[..., None]
    return np.where(used, k, 0).astype(k.dtype), np.where(used, v, 0).astype(v.dtype)


def _split_mask(mask):
    """A boolean mask as it is; a float one as (its finite entries, its finite values)."""
    if mask is None or mask.dtype == bool:
        return mask, None
    keep = np.isfinite(mask)
    return keep, np.where(keep, mask, 0).astype(np.float32)


def _scores(q, k, scale, bias, bugs: Bugs, softcap=None):
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.einsum("bhqd,bhkd->bhqk", q, k)
        if bias is None:
            s = scale * s
        elif bugs.bias_scaled_too:  # the bias added before the scale instead of after it
            s = scale * (s + bias)
        else:
            s = scale * s + bias
    return s if softcap is None else (softcap * np.tanh(s / softcap)).astype(np.float32)


def _weights(q, k, keep, scale, bugs: Bugs, bias=None, softcap=None, sinks=None):
    """Softmax weights and log-sum-exp, in float32; a sink joins the normaliser only."""
    s = _scores(q, k, scale, bias, bugs, softcap)
    sink = _sink_logits(sinks, s.shape, bugs)
    if bugs.masked_block_nan:  # a running max over blocks of 4 keys, started at -inf
        return _online(s, keep, bugs)
    if bugs.sentinel_fill:
        return _filled_softmax(s, keep, SENTINEL)
    if bugs.softcap_after_mask and softcap is not None:  # c·tanh(-inf / c) = -c: a finite fill
        return _filled_softmax(s, keep, -softcap)
    top = np.max(np.where(keep, s, -np.inf), axis=-1, keepdims=True)
    if sink is not None:
        top = np.maximum(top, sink)
    if bugs.shift_across_batch and _has_empty_element(keep):
        # an element of length zero has no finite max of its own: the batch's largest is taken
        # instead, reduced across the batch axis, and given to every element
        top = np.max(top, axis=0, keepdims=True)
    if bugs.no_max_shift:
        top = np.zeros_like(top)
    elif bugs.running_max_finite_start:  # the running max starts at -1e6 instead of -inf: a
        # row whose scores all lie far below gets no weight (zeros), and a clamped lse
        top = np.maximum(top, np.float32(FINITE_START))
    elif not bugs.nan_fully_masked:
        top = np.where(np.isfinite(top), top, 0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        e = np.where(keep, np.exp(s - top), 0).astype(np.float32)
        z = np.sum(e, axis=-1, keepdims=True)
        if sink is not None:
            z = z + np.exp(sink - top)
        a = e / (z if bugs.nan_fully_masked else np.where(z > 0, z, 1))
        lse = (np.log(z) + top)[..., 0]
    if bugs.running_max_finite_start:  # log of the empty sum clamped, for rows keeping a key
        tiny = np.finfo(np.float32).tiny
        lse = np.where(np.any(keep, axis=-1), (np.log(np.maximum(z, tiny)) + top)[..., 0],
                       -np.inf)
    if bugs.lse_unscaled:
        lse = lse / scale
    if bugs.lse_ignores_mask:  # the normaliser's log taken before the mask was applied
        lse = np.log(np.sum(np.exp(s - np.max(s, -1, keepdims=True)), -1)) + np.max(s, -1)
    if bugs.lse_fully_masked_zero:  # an empty sum clamped to 1 before its log
        lse = np.where(np.any(keep, axis=-1), lse, 0.0)
    return a.astype(np.float32), lse


def _has_empty_element(keep) -> bool:
    """Whether some batch element keeps no key at all (a sequence of length zero)."""
    return bool(np.any(~np.any(keep, axis=(1, 2, 3))))


def _empty_elements_filled(out, lse, keep):
    """Zeros and -inf written over the rows of each element of length zero, through one flat
    buffer of rows indexed head-major, (h, b, i), where the rows lie batch-major, (b, h, i):
    with two heads and two elements, another element's rows are overwritten."""
    b, h, n_q = out.shape[:3]
    rows, row_lse = out.reshape(b * h * n_q, -1).copy(), lse.reshape(-1).copy()
    for empty in np.nonzero(~np.any(keep, axis=(1, 2, 3)))[0]:
        for head in range(h):
            start = (head * b + empty) * n_q
            rows[start:start + n_q], row_lse[start:start + n_q] = 0, -np.inf
    return rows.reshape(out.shape), row_lse.reshape(lse.shape)


def _filled_softmax(s, keep, fill: float):
    """Masked scores replaced by ``fill`` and the softmax taken over every key; rows with no
    kept key are zeroed afterwards."""
    filled = np.where(keep, s, np.float32(fill))
    top = np.max(filled, axis=-1, keepdims=True)
    e = np.exp(filled - top)
    z = np.sum(e, axis=-1, keepdims=True)
    rows = np.any(keep, axis=-1)
    a = np.where(rows[..., None], e / z, 0)
    return a.astype(np.float32), np.where(rows, np.log(z[..., 0]) + top[..., 0], -np.inf)


def _online(s, keep, bugs: Bugs, block: int = 4):
    running = np.full(s.shape[:-1] + (1,), -np.inf, dtype=np.float32)
    total = np.zeros_like(running)
    for start in range(0, s.shape[-1], block):
        part = np.where(keep[..., start:start + block], s[..., start:start + block], -np.inf)
        new = np.maximum(running, np.max(part, axis=-1, keepdims=True))
        with np.errstate(invalid="ignore"):
            total = total * np.exp(running - new) + np.sum(np.exp(part - new), -1, keepdims=True)
        running = new
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(keep, np.exp(s - running), 0) / np.where(total > 0, total, 1)
        return a.astype(np.float32), (np.log(total) + running)[..., 0]


def _packed_batch(array):
    """``array`` as read by a loop that steps from one batch element to the next by the
    packed size of one (heads x sequence x features), whatever its real stride."""
    step = int(np.prod(array.shape[1:])) * array.itemsize
    if array.shape[0] == 1 or array.strides[0] == step:
        return array
    base = array if array.base is None else array.base
    start = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    reach = start + (array.shape[0] - 1) * step + array.itemsize + sum(
        (n - 1) * s for n, s in zip(array.shape[1:], array.strides[1:], strict=True))
    if reach > base.nbytes:
        raise IndexError("the packed batch stride reads past the end of the buffer")
    return np.lib.stride_tricks.as_strided(array, array.shape, (step, *array.strides[1:]),
                                           writeable=False)


def attention(q, k, v, mask=None, causal=False, scale=None, softcap=None, sinks=None,
              window=None, *, bugs: Bugs = Bugs()):
    """Attention in layout bhsd, float32 inside; returns (out, lse) in the inputs' dtype."""
    dtype = q.dtype
    bugs = _for_dtype(bugs, dtype)
    if bugs.packed_batch_stride:
        q, k, v = (_packed_batch(a) for a in (q, k, v))
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (q, k, v))
    scale = _scale(q, v, scale, bugs)
    sinks = _sinks_taken(sinks, mask, bugs, q.shape[1] // k.shape[1])
    k, v = _repeat_heads(q, k, bugs), _repeat_heads(q, v, bugs)
    mask, bias = _split_mask(mask)
    keep = _keep(q, k, mask, causal, bugs, window)
    if not bugs.garbage_leak:
        k, v = _unused_zeroed(k, v, keep)
    a, lse = _weights(q, k, keep, scale, bugs, bias, softcap, sinks)
    if bugs.keys_twice_past_chunk:
        a = _last_chunk_counted_twice(a)
    out = np.einsum("bhqk,bhkd->bhqd", a, v)
    if bugs.nan_rows_past_chunk:
        out = _last_chunk_rows_nan(out)
    if bugs.far_rows_constant:  # rows whose kept scores all lie below -1e6 return 1000
        s = _scores(q, k, scale, bias, bugs, softcap)
        far = np.all(np.where(keep, s, -np.inf) < FINITE_START, axis=-1) & np.any(keep, -1)
        out = np.where(far[..., None], np.float32(CONSTANT), out)
    if bugs.empty_fill_wrong_layout:
        out, lse = _empty_elements_filled(out, lse, keep)
    return out.astype(dtype), lse.astype(dtype)


def _for_dtype(bugs: Bugs, dtype) -> Bugs:
    """The defects of a call in ``dtype``: NaN fully masked rows in float64 only (a float64
    path of its own, written apart from the float32 one)."""
    if bugs.nan_fully_masked_float64 and dtype == np.float64:
        return dataclasses.replace(bugs, nan_fully_masked=True)
    return bugs


def _ragged_tail(length: int) -> int:
    """The length of the last chunk, where it is partial and not the first; else 0."""
    return length % CHUNK if length > CHUNK else 0


def _last_chunk_counted_twice(a):
    """Weights as a loop over key chunks gives them that visits the last partial chunk twice:
    its keys counted twice in the numerator and the normaliser."""
    tail = _ragged_tail(a.shape[-1])
    if not tail:
        return a
    weights = a.copy()
    weights[..., -tail:] *= 2
    total = np.sum(weights, axis=-1, keepdims=True)
    return (weights / np.where(total > 0, total, 1)).astype(a.dtype)


def _last_chunk_rows_nan(out):
    """The rows of a last partial query chunk left as the NaN an output buffer was filled with
    (a loop over query chunks that stops at the last whole one)."""
    tail = _ragged_tail(out.shape[-2])
    if not tail:
        return out
    out = out.copy()
    out[..., -tail:, :] = np.nan
    return out


def _scale(q, v, scale, bugs: Bugs):
    if scale is not None:
        return np.float32(scale)
    return np.float32((v if bugs.scale_by_dv else q).shape[-1] ** -0.5)


def attention_vjp(q, k, v, g, mask=None, causal=False, scale=None, softcap=None, sinks=None,
                  window=None, *, bugs: Bugs = Bugs()):
    """(dq, dk, dv) of sum(g * out), and dsinks where sinks are given."""
    dtype, group = q.dtype, q.shape[1] // k.shape[1]
    given_sinks = sinks
    bugs = _for_dtype(bugs, dtype)
    q, k, v, g = (np.asarray(x, dtype=np.float32) for x in (q, k, v, g))
    scale = _scale(q, v, scale, bugs)
    k_, v_ = _repeat_heads(q, k, bugs), _repeat_heads(q, v, bugs)
    sinks = _sinks_taken(sinks, mask, bugs, group)
    mask, bias = _split_mask(mask)
    keep = _keep(q, k_, mask, causal, bugs, window)
    if not bugs.garbage_leak:
        k_, v_ = _unused_zeroed(k_, v_, keep)
    # the sink's value is 0, so dS keeps its form with the sink in the weights' normaliser
    a, lse = _weights(q, k_, keep, scale, bugs, bias, softcap, sinks)
    da = np.einsum("bhqd,bhkd->bhqk", g, v_)
    dsinks = None if given_sinks is None else \
        _sink_gradient(a, da, lse, given_sinks, sinks, bugs, group)
    ds = a * (da - np.sum(a * da, axis=-1, keepdims=True))
    if softcap is not None and not bugs.softcap_no_slope:  # through c·tanh(s/c): 1 - tanh²
        capped = _scores(q, k_, scale, bias, bugs, softcap) / softcap
        ds = ds * (1 - capped * capped)
    dq = (1 if bugs.dq_missing_scale else scale) * np.einsum("bhqk,bhkd->bhqd", ds, k_)
    if bugs.tiles_by_count:  # dK, dV only see the query tiles their key tile visits
        visited = _visited_by_count(keep)
        a, ds = a * visited, ds * visited
    dk = scale * np.einsum("bhqk,bhqd->bhkd", a * da if bugs.dk_no_rowsum else ds, q)
    a_v = _weights(q, k_, np.ones_like(keep), scale, bugs, bias, softcap, sinks)[0] \
        if bugs.dv_ignores_mask else a
    dv = np.einsum("bhqk,bhqd->bhkd", a_v, g)
    b, h = dk.shape[:2]
    if bugs.mqa_dkv_first_head and k.shape[1] == 1:  # the one K/V head's gradient: head 0's
        dk, dv = dk[:, :1], dv[:, :1]
    else:
        dk, dv = (x.reshape(b, h // group, group, *x.shape[2:]).sum(2) for x in (dk, dv))
    grads = (dq, dk, dv) if dsinks is None else (dq, dk, dv, dsinks)
    return tuple(x.astype(dtype) for x in grads)


def _sink_gradient(a, da, lse, given, taken, bugs: Bugs, group: int):
    """dL/ds of the sinks as given, (h,): each row's sink takes p_sink = e^{s − lse} of its
    weight (not 1 − Σ_j a_j, which cancels to an ulp of 1 where the sink takes almost none),
    and dL/ds_row = −p_sink Σ_j a_j da_j (its value is 0); each row's gradient goes to the
    entry of the given sinks it read (the wrong-head and K/V-head variants read others; the
    variant that drops its sinks beside a mask reads none). The zero-gradient variant returns
    0 (a sink whose gradient is lost)."""
    heads = len(given)
    if taken is None or bugs.sink_gradient_zero:
        return np.zeros(heads, dtype=np.float32)
    read = np.arange(heads) // group if bugs.sink_by_kv_head else np.arange(heads)
    index = _sink_logits(read.astype(np.float32), a.shape, bugs)[..., 0, 0].astype(int)
    with np.errstate(over="ignore", invalid="ignore"):
        p_sink = np.exp(_sink_logits(taken, a.shape, bugs)[..., 0, 0][..., None] - lse)
    per_row = -p_sink * np.sum(a * da, axis=-1)  # (b, h, n_q)
    found = np.zeros(heads, dtype=np.float64)
    np.add.at(found, np.broadcast_to(index[..., None], per_row.shape), per_row)
    return found.astype(np.float32)


def _visited_by_count(keep):
    """For each key tile, the query tiles a loop visits that starts at the first active one
    and runs for as many tiles as are active: all of them only when they are contiguous."""
    n_q, n_k = keep.shape[-2:]
    tiles_q, tiles_k = -(-n_q // TILE), -(-n_k // TILE)
    padded = np.zeros((*keep.shape[:-2], tiles_q * TILE, tiles_k * TILE), dtype=bool)
    padded[..., :n_q, :n_k] = keep
    active = padded.reshape(*keep.shape[:-2], tiles_q, TILE, tiles_k, TILE).any(axis=(-3, -1))
    first = np.argmax(active, axis=-2)[..., None, :]
    count = np.sum(active, axis=-2, keepdims=True)
    tile = np.arange(tiles_q)[:, None]
    visited = (tile >= first) & (tile < first + count)
    return np.repeat(np.repeat(visited, TILE, axis=-2), TILE, axis=-1)[..., :n_q, :n_k]


def merge(o1, lse1, o2, lse2, *, bugs: Bugs = Bugs()):
    """Two halves' (out, lse) merged into the whole's, in float32: each weighted by
    exp(lse - the larger lse), a row both halves leave empty kept at zeros and -inf."""
    dtype = o1.dtype
    o1, o2, l1, l2 = (np.asarray(a, dtype=np.float32) for a in (o1, o2, lse1, lse2))
    top = np.maximum(l1, l2)
    empty = np.isneginf(top)
    shift = np.zeros_like(top) if bugs.merge_no_max_shift else np.where(empty, 0, top)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        w1, w2 = np.exp(l1 - shift), np.exp(l2 - shift)
        total = w1 + w2
        out = (w1[..., None] * o1 + w2[..., None] * o2) / np.where(empty, 1, total)[..., None]
        lse = np.log(total) + shift
    return out.astype(dtype), lse.astype(dtype)


def kernel(name: str, **bugs) -> Kernel:
    flaws = Bugs(**bugs)
    # sinks and a window only where no defect but theirs is planted
    features = {flaw for flaw, on in bugs.items() if on} <= FEATURE_BUGS

    def forward(q, k, v, **keywords):
        return attention(q, k, v, bugs=flaws, **keywords)

    def vjp(q, k, v, g, **keywords):
        return attention_vjp(q, k, v, g, bugs=flaws, **keywords)

    def merged(o1, lse1, o2, lse2):
        return merge(o1, lse1, o2, lse2, bugs=flaws)

    return Kernel(name=name, fn=forward, framework="numpy", layout="bhsd", mask=("bool", "bias"),
                  causal_argument="causal", scale_argument="scale", softcap_argument="softcap",
                  fully_masked="zeros", fully_masked_lse="-inf", causal_alignment="lower_right",
                  gradients=vjp, returns_lse=True, merge=merged, gqa=True,
                  sinks_argument="sinks" if features else None,
                  window_argument="window" if features else None,
                  dtypes=("float32",), compute_dtype="float32")


def low_precision(q, k, v, mask=None, causal=False, scale=None, softcap=None, *,
                  products: str, steps: str):
    """The correct forward pass whose matrix products take operands rounded to ``products``
    and whose every other step is rounded to ``steps`` (products accumulate in float32)."""
    from attnproof.kernels._frameworks import rounded

    def operand(a):
        return rounded(a, precision_format(products)).astype(np.float32)

    def step(a):
        return rounded(a, precision_format(steps)).astype(np.float32)

    flaws, dtype = Bugs(), q.dtype
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (q, k, v))
    scale = _scale(q, v, scale, flaws)
    k, v = _repeat_heads(q, k, flaws), _repeat_heads(q, v, flaws)
    mask, bias = _split_mask(mask)
    keep = _keep(q, k, mask, causal, flaws)
    k, v = _unused_zeroed(k, v, keep)
    with np.errstate(all="ignore"):
        s = step(step(scale) * step(np.einsum("bhqd,bhkd->bhqk", operand(q), operand(k))))
        if bias is not None:
            s = step(s + step(bias))
        if softcap is not None:
            s = step(softcap * step(np.tanh(step(s / softcap))))
        top = np.max(np.where(keep, s, -np.inf), axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0)
        e = np.where(keep, step(np.exp(step(s - top))), 0)
        z = step(np.sum(e, axis=-1, keepdims=True))
        a = step(e / np.where(z > 0, z, 1))
        out = step(np.einsum("bhqk,bhkd->bhqd", operand(a), operand(v)))
        lse = step(step(np.log(z)) + top)[..., 0]
    return out.astype(dtype), np.where(np.any(keep, axis=-1), lse, -np.inf).astype(dtype)


def precision_kernel(name: str, products: str, steps: str, dtype: str) -> Kernel:
    """A forward-only kernel computing in lower precision than its declaration says: its
    inputs' own (``dtype``)."""
    def forward(q, k, v, **keywords):
        return low_precision(q, k, v, products=products, steps=steps, **keywords)

    return dataclasses.replace(correct, name=name, fn=forward, gradients=None, merge=None,
                               dtypes=(dtype,), compute_dtype=None, sinks_argument=None,
                               window_argument=None)


def cached_kernel(name: str) -> Kernel:
    """The correct kernel behind a cache of "compiled" functions, one per signature: the
    shapes and dtypes of the arrays and the other keywords, but not the scale, which is baked
    into the function compiled for the first call of each signature."""
    compiled: dict = {}

    def cached(which, q, k, v, *rest, scale=None, **keywords):
        arrays = tuple(sorted((n, a.shape, a.dtype.str) for n, a in keywords.items()
                              if isinstance(a, np.ndarray)))
        others = tuple(sorted((n, a) for n, a in keywords.items()
                              if not isinstance(a, np.ndarray)))
        key = (which, q.shape, k.shape, v.shape, q.dtype.str, arrays, others)
        if key not in compiled:
            compiled[key] = _compiled(which, scale)
        return compiled[key](q, k, v, *rest, **keywords)

    def forward(q, k, v, **keywords):
        return cached("forward", q, k, v, **keywords)

    def vjp(q, k, v, g, **keywords):
        return cached("vjp", q, k, v, g, **keywords)

    return dataclasses.replace(correct, name=name, fn=forward, gradients=vjp)


def _compiled(which: str, scale):
    function = attention if which == "forward" else attention_vjp
    return lambda *arrays, **keywords: function(*arrays, scale=scale, **keywords)


correct = kernel("correct")

# name -> (the property that must catch it, the keys a counterexample needs at most)
PLANTED = {
    "no_max_shift": ("row_offset", 16),
    "nan_fully_masked": ("fully_masked_rows", 16),
    "masked_block_nan": ("mask", 16),
    "block_tail_dropped": ("block_lengths", 129),  # a partial block exists only past 128 keys
    "dq_missing_scale": ("backward_dq", 16),
    "dk_no_rowsum": ("backward_dk", 16),
    "dv_ignores_mask": ("mask", 16),
    "causal_upper_left": ("causal_nq_ne_nk", 16),
    "scale_by_dv": ("dv_ne_dk", 16),
    "padding_trimmed": ("padding", 16),
    "gqa_modulo": ("gqa", 16),
    "gqa_any_count": ("gqa_indivisible", 16),
    "lse_unscaled": ("split_kv", 16),
    "sentinel_fill": ("row_offset", 16),
    "garbage_leak": ("masked_garbage", 16),
    "lse_ignores_mask": ("mask", 16),
    "lse_fully_masked_zero": ("fully_masked_rows", 16),
    "mqa_dkv_first_head": ("mqa", 16),
    "tiles_by_count": ("tile_masks", 4 * 128),  # three query tiles, one of them skipped
    "bias_scaled_too": ("bias", 16),
    "merge_no_max_shift": ("merge", 16),
    "packed_batch_stride": ("memory_layout", 16),
    "softcap_no_slope": ("softcap", 16),
    "softcap_after_mask": ("softcap", 16),
    "empty_fill_wrong_layout": ("batch_independence", 16),
    "shift_across_batch": ("batch_independence", 16),
    # rows whose scores all lie far below -1e6, where the format does not resolve the scores
    "running_max_finite_start": ("row_offset", 16),
    "far_rows_constant": ("row_offset", 16),
}

# kernels whose bug is a state they keep between calls, each made by its function
STATEFUL = {"cache_without_scale": ("history_independence", 16)}
PLANTED.update(STATEFUL)


def fresh(name: str) -> Kernel:
    """A new kernel object of the planted ``name``: a stateful one starts with no state."""
    if name in STATEFUL:
        return cached_kernel(name)
    return kernel(name, **{name: True})


for _name in PLANTED:
    globals()[_name] = fresh(_name)

# kernels declared in their inputs' precision that compute in a lower one: name -> (dtype, the
# unit roundoff they compute with)
PRECISION = {"tf32_products": ("float32", 2.0 ** -11),  # products on TF32 operands
             "bfloat16_inside": ("float16", 2.0 ** -8)}  # float16 inputs, bfloat16 inside
tf32_products = precision_kernel("tf32_products", "tensorfloat32", "float32", "float32")
bfloat16_inside = precision_kernel("bfloat16_inside", "bfloat16", "bfloat16", "float16")


def precision_by_length(name: str, coarse: str, where) -> Kernel:
    """A forward-only float32 kernel that takes another path where ``where(n_k)``: its
    products on ``coarse`` operands, every step of it rounded to ``coarse`` too (a path chosen
    by the sequence's length, each path otherwise correct)."""
    def forward(q, k, v, **keywords):
        inside = coarse if where(k.shape[2]) else "float32"
        # TF32 rounds a product's operands only; bfloat16 every step as well
        steps = "float32" if coarse == "tensorfloat32" else inside
        return low_precision(q, k, v, products=inside, steps=steps, **keywords)

    return dataclasses.replace(precision_kernel(name, "float32", "float32", "float32"),
                               fn=forward)


# float32 kernels whose precision changes with the keys' length, each correct on its other
# path: TF32 products from 512 keys on (a GPU kernel's fast path for long rows), and bfloat16
# throughout up to 64 keys (a short-sequence path)
LENGTH_PRECISION = {"tf32_past_512": "precision_across_lengths",
                    "bfloat16_up_to_64": "precision_across_lengths"}
tf32_past_512 = precision_by_length("tf32_past_512", "tensorfloat32", lambda n: n >= 512)
bfloat16_up_to_64 = precision_by_length("bfloat16_up_to_64", "bfloat16", lambda n: n <= 64)

# two defects in the one cell ``block_lengths`` (its first cases: 3 queries x 65 keys, then
# 65 x 3): the keys of a last partial chunk of 64 counted twice (finite errors in out), and
# the rows of a last partial chunk of 64 queries left NaN
two_defects = kernel("two_defects", keys_twice_past_chunk=True, nan_rows_past_chunk=True)
nan_rows_past_chunk = kernel("nan_rows_past_chunk", nan_rows_past_chunk=True)
# fully masked rows: zeros in float32, NaN in float64, declaring neither
fully_masked_by_dtype = dataclasses.replace(
    kernel("fully_masked_by_dtype", nan_fully_masked_float64=True), fully_masked=None,
    dtypes=("float32", "float64"))


def _noisy(q, k, v, **keywords):
    # what a kernel's own NumPy code raises on every call: exp overflowing where a score is
    # large, before the kernel masks it away (the result is right)
    with np.errstate(over="warn"):
        np.exp(np.float32(100.0))
    return correct.fn(q, k, v, **keywords)


# a correct kernel that raises a RuntimeWarning on every call
noisy = dataclasses.replace(correct, name="noisy", fn=_noisy)


def _deprecating(q, k, v, **keywords):
    # a library's deprecation as libraries issue it: at stacklevel 2, naming the caller's line,
    # which is the checker's own code that calls the kernel
    warnings.warn("calling attention without is_causal is deprecated", FutureWarning,
                  stacklevel=2)
    return correct.fn(q, k, v, **keywords)


# a correct kernel whose every call warns in the name of its caller
deprecating = dataclasses.replace(correct, name="deprecating", fn=_deprecating)


def _noisy_merge(o1, lse1, o2, lse2):
    # a merge in a kernel's own NumPy: exp overflowing on a large lse gap it then discards
    with np.errstate(over="warn"):
        np.exp(np.float32(100.0))
    return correct.merge(o1, lse1, o2, lse2)


# a correct kernel whose own split-KV merge raises a RuntimeWarning on every call
noisy_merge = dataclasses.replace(correct, name="noisy_merge", merge=_noisy_merge)


# kernels taking sinks and a sliding window: name -> (the property that must catch it, or None
# for a correct one that must conform there)
SINKS_WINDOWS = {"sink_dropped_with_mask": "sinks", "sink_wrong_head": "sinks",
                 "sink_by_kv_head": "sinks", "sink_gradient_zero": "sinks",
                 "window_exclusive": "sliding_window"}
for _name in SINKS_WINDOWS:
    globals()[_name] = kernel(_name, **{_name: True})


def _sinks_ignored(q, k, v, sinks=None, **keywords):
    return correct.fn(q, k, v, **keywords)


def _sinks_ignored_vjp(q, k, v, g, sinks=None, **keywords):
    return correct.gradients(q, k, v, g, **keywords)


def _window_ignored(q, k, v, window=None, **keywords):
    return correct.fn(q, k, v, **keywords)


def _window_ignored_vjp(q, k, v, g, window=None, **keywords):
    return correct.gradients(q, k, v, g, **keywords)


# correct kernels that take the keyword and ignore it: a knob dropped
sinks_ignored = dataclasses.replace(correct, name="sinks_ignored", fn=_sinks_ignored,
                                    gradients=_sinks_ignored_vjp)
window_ignored = dataclasses.replace(correct, name="window_ignored", fn=_window_ignored,
                                     gradients=_window_ignored_vjp)
