"""Cases aimed at how attention kernels break, and the instances they seed.

Hypothesis draws the structure of a case (sizes, mask or tile pattern, fill, score offset,
scale, bias, garbage in unused K/V, memory layout, soft-capping, seed); a NumPy PRNG seeded
from it fills the arrays, so a case replays from its JSON. Sizes come from the shape ladder
(``_shapes``), one bounded set for the whole run, and shrink towards its small end: a shrunk
counterexample needs more than 17 keys only when the bug does (a block boundary at 128 needs
129).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from hypothesis import strategies as st

from ._frameworks import precision_format, rounded
from ._shapes import PLAIN, Shape, kind, ladder_below, scale_of, shapes
from ._sinks import SINKS, sink_values
from ._truth import Inputs, truth_lse
from ._windows import window_keep

if TYPE_CHECKING:
    from attnproof.symbolic import Format

MASKS = ("none", "random", "first_block", "causal", "padding", "fully_masked")
# masks drawn tile by tile (which tiles of a row are active, then which entries), whose active
# tiles are not contiguous: local plus strided tiles, a set of its own for each query row, and
# random block-sparse; at 1 to 4 tiles of the sizes kernels tile by
# "checkerboard": every other tile; at three or more tiles no row or column of tiles keeps its
# active tiles contiguous, whatever the draw (the random patterns leave that to chance)
TILE_PATTERNS = ("local_strided", "per_row_tiles", "block_sparse", "checkerboard")
TILES = (16, 32, 64, 128)
FILLS = ("gaussian", "low_rank", "spikes")
# V's entries Gaussian times 2^u, u uniform in ±SWAMP_OCTAVES: sums whose terms differ by
# thousands of ulps, so that any other order of summation (another split of the keys, another
# tree) shows in the bits of the result; asked by ``batch_invariance``, never drawn elsewhere
SWAMPING = "swamping"
SWAMP_OCTAVES = 12.0
# offsets added to every score of a row: far beyond exp's range, and just past the overflow of
# the computing format ("overflow" = log(max of that format) + 2)
OFFSETS = ("1e4", "-1e4", "overflow", "-overflow")
# finite stand-ins for -inf that kernels fill masked scores with: "below:S" puts every score of
# a row below S, where a kernel filling with S gives its masked keys the weight
SENTINELS = (-1e4, -5e4, -1e30)
# "range:f" offsets a row by sign(f) * top**|f|: log-uniform up to ``top``, the largest offset
# the input and computing formats can hold (f = ±1: the format's end, its lowest included)
RANGE_MARGIN = 8.0
# garbage written into K and V entries no query keeps (padding, masked-out keys): it must not
# reach any output or gradient. "huge" is the input format's largest finite value; "ordinary"
# values of the inputs' own scale (uniform up to the largest |entry| of the keys in use), such
# as a previous sequence's activations left in a padded buffer.
GARBAGE = ("nan", "inf", "-inf", "huge", "ordinary")
# what each ``masked_inputs`` declaration lets unused K/V entries hold
GARBAGE_ALLOWED = {"any": GARBAGE, "finite": ("huge", "ordinary"), "ordinary": ("ordinary",)}
# finite biases added to the scores: ALiBi's linear distance penalty (per-head slopes),
# Gaussian ones (relative-position-like, sd 4), and large ones of either sign (10^2 to 10^4)
BIASES = ("alibi", "gaussian", "large")
# how q, k and v sit in memory when not fresh packed arrays: a slice of the feature axis of a
# fused QKV projection, or stored with the sequence axis outermost (sbhd) and seen through a
# transposed view
MEMORY = ("fused_qkv", "sequence_first")
# soft-capping values c of c·tanh(s/c): from one that bends every score to ones that bend
# only large scores (Gemma 2 uses 50 on attention scores)
SOFTCAPS = (1.0, 5.0, 30.0, 50.0)
# gaps between the two halves' log-sum-exps in a split-KV merge: "gap:c" adds c (times a
# weight in [1/2, 1] per row) to the scores of the second half's keys only
GAPS = ("gap:30", "gap:-30", "gap:1e4", "gap:-1e4", "gap:overflow", "gap:-overflow")
# the caches a paged kernel's keys are laid in (``_paged``): the pages its keys fill and one
# ("tight"), or about 1,025 pages more ("large": page ids past 255 and 1,024)
CACHES = ("tight", "large")
SPIKE = 40.0  # "a few very large activations": |entry| 40 against Gaussian entries
FULLY_MASKED_ROW_FRACTION = 0.25

_T = TypeVar("_T")


@dataclass(frozen=True)
class Case:
    """The structure of one instance; arrays follow from ``seed``."""

    n_q: int = 4
    n_k: int = 4
    d_k: int = 4
    d_v: int = 4
    batch: int = 1
    heads: int = 1
    kv_heads: int = 1
    mask: str = "none"
    causal_flag: bool = False  # causal masking asked through the kernel's causal argument
    causal_too: bool = False  # causal beside the mask: a kernel that is always causal
    fill: str = "gaussian"
    offset: str | None = None
    scale: float | None = None  # None: the kernel's default, 1/sqrt(d_k)
    mask_dtype: str | None = None  # an additive mask in another dtype than the scores
    garbage: str | None = None  # what fills the K/V entries no query keeps
    tile: int = 16  # the tile of the tile patterns
    bias: str | None = None  # a finite bias added to the scores
    mask_kind: str | None = None  # which of the kernel's mask kinds (None: its first)
    memory: str | None = None  # q, k, v as views of other memory (None: packed arrays)
    softcap: float | None = None  # the soft-capping value c passed to the kernel
    # a batch element whose every key is masked (a sequence of length zero beside the others)
    empty_element: int | None = None
    # per-head sink logits in every row's softmax denominator, drawn as ``SINKS`` names
    sinks: str | None = None
    # a sliding window: query i keeps keys i' - window_left <= j <= i' + window_right
    # (inclusive; i' aligned as the kernel's causal alignment), both given or neither
    window_left: int | None = None
    window_right: int | None = None
    # sequences of a packed call, (n_q, n_k) each ((0, 0): an empty one), end to end, then
    # ``slack`` tokens no sequence owns holding ``garbage`` (``_packed``); batch is their
    # number, n_q and n_k the longest
    packed: tuple[tuple[int, int], ...] | None = None
    slack: int = 0
    # a paged kernel's page size (None: one the kernel declares) and cache, "tight" (the
    # pages its keys fill, and one) or "large" (about 1,025 pages: ids past 255 and 1,024),
    # its unused slots holding ``garbage`` (``_paged``)
    page_size: int | None = None
    cache: str | None = None
    seed: int = 0
    # the calls made before this one on the same kernel object, in order: (dtype, Case) each
    history: tuple[tuple[str, Case], ...] = ()

    def to_json(self) -> str:
        return json.dumps(self._fields(), separators=(",", ":"))

    def _fields(self) -> dict[str, Any]:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                  if getattr(self, f.name) != _DEFAULTS[f.name]}
        if self.history:
            fields["history"] = [[dtype, call._fields()] for dtype, call in self.history]
        return fields

    @classmethod
    def from_json(cls, text: str) -> Case:
        """The case a failure printed; a field no case can hold is a ValueError naming it."""
        fields = _checked(json.loads(text))
        history = tuple((dtype, cls(**_checked(call)))
                        for dtype, call in fields.pop("history", ()))
        return cls(**fields, history=history)

    def sizes(self) -> str:
        heads = f"{self.heads}" if self.kv_heads == self.heads else \
            f"{self.heads}/{self.kv_heads}kv"
        empty = "" if self.empty_element is None else \
            f" (element {self.empty_element} of length zero)"
        if self.packed is not None:
            lengths = ", ".join(f"{a}×{b}" for a, b in self.packed)
            empty = f" (sequences n_q×n_k {lengths} packed, then {self.slack} slack " \
                f"token{'s' * (self.slack != 1)})"
        return (f"b={self.batch}{empty} h={heads} n_q={self.n_q} n_k={self.n_k} "
                f"d_k={self.d_k} d_v={self.d_v}")

    @property
    def used_scale(self) -> float:
        return self.scale if self.scale is not None else 1 / math.sqrt(self.d_k)


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Case)}

# The most entries one array of a case may hold: 2^26 (512 MiB in float64), far above the cases
# the strategies draw (at most 1025 queries and keys, 576 features, 4 batch elements, 14 heads),
# so that a case written by hand is refused, naming its sizes, before anything is allocated.
MAX_CASE_ENTRIES = 2**26
_SIZE_FIELDS = ("n_q", "n_k", "d_k", "d_v", "batch", "heads", "kv_heads", "tile")
# each array of a case, by the size fields of its axes
_ARRAY_AXES = {"q": ("batch", "heads", "n_q", "d_k"), "k": ("batch", "kv_heads", "n_k", "d_k"),
               "v": ("batch", "kv_heads", "n_k", "d_v"),
               "the scores": ("batch", "heads", "n_q", "n_k")}
_NAMED_CHOICES = {"mask": (*MASKS, *TILE_PATTERNS, "half_masked"), "fill": (*FILLS, SWAMPING),
                  "garbage": GARBAGE, "bias": BIASES, "memory": MEMORY, "sinks": SINKS,
                  "cache": CACHES}


def _checked(fields: object) -> dict[str, Any]:
    """``fields`` of a case given as JSON, if a case can hold them; else a ValueError naming
    the field (a case written by hand would otherwise fail inside NumPy, or exhaust memory)."""
    if not isinstance(fields, dict):
        raise ValueError(f"a case is a JSON object of its fields, not a {type(fields).__name__}")
    case = {**_DEFAULTS, **fields}
    _check_sizes(case)
    _check_heads_and_elements(case)
    _check_named(case)
    _check_window(case)
    page_size = case["page_size"]
    if page_size is not None and (not _whole(page_size) or page_size < 1):
        raise ValueError(f"page_size must be a whole number of at least 1, got {page_size!r}")
    pairs = _check_packed(case)
    if "packed" in fields:
        fields = {**fields, "packed": pairs}
    return fields


def _check_sizes(case: dict[str, Any]) -> None:
    """Every size a whole number of at least 1, every array within MAX_CASE_ENTRIES."""
    for name in _SIZE_FIELDS:
        if not _whole(case[name]) or case[name] < 1:
            raise ValueError(f"{name} must be a whole number of at least 1, got {case[name]!r}")
    for array, axes in _ARRAY_AXES.items():
        entries = math.prod(case[axis] for axis in axes)
        if entries > MAX_CASE_ENTRIES:
            raise ValueError(f"{array} would hold {' × '.join(axes)} = "
                             f"{' × '.join(str(case[a]) for a in axes)} = {entries:,} entries, "
                             f"more than the {MAX_CASE_ENTRIES:,} a case may hold")


def _check_heads_and_elements(case: dict[str, Any]) -> None:
    """Query heads in whole groups per K/V head, a seed NumPy takes, the empty element one of
    the batch's."""
    if case["heads"] % case["kv_heads"]:
        raise ValueError(f"heads must be a multiple of kv_heads, got heads {case['heads']} and "
                         f"kv_heads {case['kv_heads']}")
    if not _whole(case["seed"]) or case["seed"] < 0:
        raise ValueError(f"seed must be a whole number of at least 0, got {case['seed']!r}")
    empty = case["empty_element"]
    if empty is not None and not (_whole(empty) and 0 <= empty < case["batch"]):
        raise ValueError(f"empty_element must be one of the batch's elements, 0 to "
                         f"{case['batch'] - 1}, got {empty!r}")


def _check_named(case: dict[str, Any]) -> None:
    """Each named pattern one the cases know (an unknown mask would leave every key kept)."""
    for name, choices in _NAMED_CHOICES.items():
        if case[name] not in (_DEFAULTS[name], *choices):
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {case[name]!r}")


def _check_window(case: dict[str, Any]) -> None:
    """A window's two sides whole numbers of at least 0, given together or not at all."""
    sides = (case["window_left"], case["window_right"])
    if sides.count(None) == 1:
        raise ValueError(f"window_left and window_right are given together, got {sides}")
    if sides[0] is not None and not all(_whole(s) and s >= 0 for s in sides):
        raise ValueError(f"window_left and window_right must be whole numbers of at least 0, "
                         f"got {sides}")


def _check_packed(case: dict[str, Any]) -> tuple[tuple[int, ...], ...] | None:
    """A packed case's sequences as (n_q, n_k) pairs of whole numbers, both 0 (an empty one)
    or both at least 1, one of them not empty; batch their number and n_q, n_k the longest;
    slack a whole number of at least 0. The sequences as a tuple of pairs (JSON reads lists)."""
    sequences, slack = case["packed"], case["slack"]
    if not _whole(slack) or slack < 0:
        raise ValueError(f"slack must be a whole number of at least 0, got {slack!r}")
    if sequences is None:
        if slack:
            raise ValueError("slack tokens follow packed sequences only: packed is not given")
        return None
    pairs = tuple(tuple(pair) for pair in sequences) \
        if isinstance(sequences, list | tuple) else ()
    if not pairs or not all(len(p) == 2 and all(_whole(n) and n >= 0 for n in p)
                            and (p[0] == 0) == (p[1] == 0) for p in pairs) \
            or all(p[0] == 0 for p in pairs):
        raise ValueError(f"packed must list (n_q, n_k) of each sequence, whole numbers both 0 "
                         f"(an empty sequence) or both at least 1, one not empty; got "
                         f"{sequences!r}")
    expected = (len(pairs), max(p[0] for p in pairs), max(p[1] for p in pairs))
    if (case["batch"], case["n_q"], case["n_k"]) != expected:
        raise ValueError(f"a packed case's batch, n_q and n_k are its sequences' number and "
                         f"longest lengths, {expected}; got {case['batch']}, {case['n_q']}, "
                         f"{case['n_k']}")
    return pairs


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- instances -----------------------------------------------------------------------------------


def instance(case: Case, dtype: Format, compute: Format, alignment: str = "upper_left") -> Inputs:
    """The arrays of ``case``, rounded to ``dtype`` (float64 values), with the keep-mask the
    kernel is asked to apply (a causal flag aligned as ``alignment``)."""
    rng = np.random.default_rng(case.seed)
    b, h, hk = case.batch, case.heads, case.kv_heads
    q = rng.standard_normal((b, h, case.n_q, case.d_k))
    k = rng.standard_normal((b, hk, case.n_k, case.d_k))
    v = rng.standard_normal((b, hk, case.n_k, case.d_v))
    g = rng.standard_normal((b, h, case.n_q, case.d_v))
    q, k = _filled(case.fill, q, k, rng)
    if case.fill == SWAMPING:
        v = v * 2.0 ** rng.uniform(-SWAMP_OCTAVES, SWAMP_OCTAVES, size=v.shape)
    if case.offset is not None:
        q, k = _offset(q, k, _row_offsets(case, q, k, dtype, compute, rng), case.used_scale,
                       _offset_keys(case))
    asked = keep_mask(case, rng, alignment)
    # a window's two sides are given together (``Case``; ``_check_window`` for JSON)
    keep = asked if case.window_left is None else \
        asked & window_keep(case.n_q, case.n_k, case.window_left, cast(int, case.window_right),
                            alignment)
    # a fully masked row passes no upstream gradient, so its convention stays out of dK, dV
    g = np.where(fully_masked_rows(keep)[..., None], 0.0, g)
    q, k, v, g = (rounded(a, dtype) for a in (q, k, v, g))
    x = Inputs(q, k, v, keep, g, float(rounded(np.asarray(case.used_scale), dtype)))
    if case.window_left is not None:  # the kernel's mask says the rest; its window, the band
        x = dataclasses.replace(x, given={"mask": asked})
    if case.bias is not None:  # as drawn: the kernel's dtype and scale rule are applied later
        x = dataclasses.replace(x, given={**(x.given or {}),
                                          "bias": _bias(case.bias, keep.shape, rng)})
    x = _with_garbage(x, case.garbage, dtype, rng) if case.garbage else x
    if case.sinks is not None:  # drawn last, so a case without sinks keeps its arrays
        top = dtype.largest  # a sink past the format's range would be ±inf, not a logit
        sinks = np.clip(sink_values(case.sinks, truth_lse(x)[0], rng), -top, top)
        x = dataclasses.replace(x, sinks=rounded(sinks, dtype))
    return x


def _bias(kind: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    b, h, n_q, n_k = shape
    if kind == "alibi":  # -m_h |i - j|, queries aligned to the last keys, m_h = 2^(-8(h+1)/H)
        slopes = 2.0 ** (-8.0 * np.arange(1, h + 1) / h)
        distance = np.abs(np.arange(n_k)[None, :] - np.arange(n_q)[:, None] - (n_k - n_q))
        return np.broadcast_to(-slopes[:, None, None] * distance, shape).copy()
    if kind == "gaussian":
        return 4.0 * rng.standard_normal(shape)
    return rng.choice([-1.0, 1.0], size=shape) * 10.0 ** rng.uniform(2, 4, size=shape)


def unused_keys(keep: np.ndarray, group: int) -> np.ndarray:
    """(b, h_kv, n_k): the keys no query of any head sharing that K/V head keeps."""
    b, h, _, n_k = keep.shape
    return ~np.any(keep.reshape(b, h // group, group * keep.shape[2], n_k), axis=2)


def _with_garbage(x: Inputs, garbage: str, dtype: Format, rng: np.random.Generator) -> Inputs:
    """``x`` whose kernel receives ``garbage`` in some features of every unused key's K and V
    (the truth keeps the Gaussian values: no output depends on them)."""
    value = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "ordinary": None,
             "huge": dtype.largest}[garbage]
    unused = unused_keys(x.keep, x.group)[..., None]

    def spoiled(array: np.ndarray) -> np.ndarray:
        features = rng.random(array.shape) < 0.5
        features[..., 0] = True
        filled = value if value is not None else _ordinary(array, unused, dtype, rng)
        return np.where(unused & features, filled, array)

    return dataclasses.replace(x, given={**(x.given or {}), "k": spoiled(x.k),
                                         "v": spoiled(x.v)})


def _ordinary(array: np.ndarray, unused: np.ndarray, dtype: Format,
              rng: np.random.Generator) -> np.ndarray:
    """Values of ``array``'s own scale: uniform in [-m, m], m the largest |entry| of the keys
    in use (of the whole array when no key is), rounded to ``dtype``."""
    used = np.broadcast_to(~unused, array.shape)
    top = float(np.max(np.abs(array[used]), initial=0.0)) or \
        float(np.max(np.abs(array), initial=0.0)) or 1.0
    return rounded(rng.uniform(-top, top, size=array.shape), dtype)


def split_point(case: Case) -> int:
    """Where a split-KV check cuts the keys: the first half is keys [0, split), split a length
    of the ladder below n_k (so the halves' shapes stay few)."""
    return int(np.random.default_rng(case.seed).choice(ladder_below(case.n_k)))


def _offset_keys(case: Case) -> np.ndarray:
    """Which keys a row's offset reaches: all, or the second half's for a gap."""
    keys = np.ones(case.n_k)
    assert case.offset is not None  # ``instance`` asks only where the case has an offset
    if case.offset.startswith("gap:"):
        keys[: split_point(case)] = 0.0
    return keys


def fully_masked_rows(keep: np.ndarray) -> np.ndarray:
    return ~np.any(keep, axis=-1)


def padding_lengths(keep: np.ndarray) -> np.ndarray:
    """(b,) int32: each batch element's key length under a padding mask, the keys its first
    row keeps (a padding mask keeps the same first keys in every row and head)."""
    return keep[:, 0, 0, :].sum(axis=-1).astype(np.int32)


def causal_keep(n_q: int, n_k: int, alignment: str) -> np.ndarray:
    shift = n_k - n_q if alignment == "lower_right" else 0
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + shift


def keep_mask(case: Case, rng: np.random.Generator, alignment: str) -> np.ndarray:
    shape = (case.batch, case.heads, case.n_q, case.n_k)
    keep = np.ones(shape, dtype=bool)
    if case.mask == "causal":
        keep &= causal_keep(case.n_q, case.n_k, alignment)
    elif case.mask in ("random", "first_block", "fully_masked"):
        keep = rng.random(shape) < rng.uniform(0.3, 0.9)
        keep[..., rng.integers(case.n_k)] = True  # no row fully masked by chance
        if case.mask == "first_block" and case.n_k > 1:  # the first keys masked in every row:
            # a random count, or half the time all but the last key, so that every key block
            # before the last is fully masked whatever the block size (a running maximum
            # begins such rows at −∞)
            first = rng.integers(1, case.n_k) if rng.random() < 0.5 else case.n_k - 1
            keep[..., :first] = False
            keep[..., -1] = True
    elif case.mask == "padding":  # keys past each batch element's length
        lengths = rng.integers(1, case.n_k + 1, size=case.batch)
        lengths[0] = rng.integers(1, case.n_k) if case.n_k > 1 else 1  # one really padded
        keep &= np.arange(case.n_k) < lengths[:, None, None, None]
    elif case.mask in TILE_PATTERNS:
        keep = _tile_keep(case.mask, case.tile, shape, rng)
    elif case.mask == "half_masked":  # rows that keep no key of one half of a split-KV check
        keep = rng.random(shape) < 0.8
        rows, first_half = rng.random(shape[:-1]) < 0.5, rng.random(shape[:-1]) < 0.5
        before = np.arange(case.n_k) < split_point(case)
        keep &= ~(rows[..., None] & (first_half[..., None] == before))
    if case.causal_too:
        keep &= causal_keep(case.n_q, case.n_k, alignment)
    if case.mask == "fully_masked":
        rows = rng.random(shape[:-1]) < FULLY_MASKED_ROW_FRACTION
        rows[..., 0] = True
        keep &= ~rows[..., None]
    if case.empty_element is not None:  # every key of one element masked: a length of zero
        keep[case.empty_element] = False
    return keep


def _tile_keep(pattern: str, tile: int, shape: tuple[int, ...],
               rng: np.random.Generator) -> np.ndarray:
    """Which tiles of each query row are active, by ``pattern``; inside the active tiles every
    entry, or (half the time) most of them."""
    n_q, n_k = shape[-2:]
    tiles_q, tiles_k = -(-n_q // tile), -(-n_k // tile)
    i, j = np.arange(tiles_q)[:, None], np.arange(tiles_k)[None, :]
    if pattern in ("local_strided", "checkerboard"):
        # local: the tile on the diagonal, the one before, every stride-th
        blocks = ((i + j) % 2 == 0 if pattern == "checkerboard"
                  else ((j <= i) & (j >= i - 1)) | (j % rng.integers(2, 4) == 0))
        rows = np.broadcast_to(np.repeat(blocks, tile, axis=0)[:n_q], (*shape[:-1], tiles_k))
    elif pattern == "per_row_tiles":
        rows = rng.random((*shape[:-1], tiles_k)) < 0.5
    else:
        blocks = rng.random((*shape[:-2], tiles_q, tiles_k)) < rng.uniform(0.3, 0.7)
        rows = np.repeat(blocks, tile, axis=-2)[..., :n_q, :]
    keep = np.repeat(rows, tile, axis=-1)[..., :n_k]
    if rng.random() < 0.5:
        keep = keep & (rng.random(shape) < 0.8)
    return keep


def _filled(fill: str, q: np.ndarray, k: np.ndarray,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if fill == "low_rank":  # every query and key along one direction: scores of rank 1
        u = rng.standard_normal(q.shape[-1])
        return q[..., :1] * u, k[..., :1] * u
    if fill == "spikes":
        for array in (q, k):
            flat = array.reshape(-1)
            where = rng.choice(flat.size, size=min(3, flat.size), replace=False)
            flat[where] = SPIKE * rng.choice([-1.0, 1.0], size=where.size)
    return q, k



def largest_offset(dtype: Format, compute: Format, scale: float) -> float:
    """The largest row offset both formats hold with room to spare: the scores and the
    unscaled products q·k fit the computing format, q's and k's entries the input's."""
    entry = min(dtype.largest, math.sqrt(compute.largest))
    room = min(compute.largest * min(1.0, scale), entry * entry * scale)
    return room / RANGE_MARGIN


def _row_offsets(case: Case, q: np.ndarray, k: np.ndarray, dtype: Format, compute: Format,
                 rng: np.random.Generator) -> np.ndarray:
    """Per query row, the constant added to its scores."""
    top = largest_offset(dtype, compute, case.used_scale)
    assert case.offset is not None  # ``instance`` asks only where the case has an offset
    name = case.offset.removeprefix("gap:")
    if name.startswith("below:"):
        return _below(float(name.split(":")[1]), q, k, case.used_scale, top, rng)
    if name.startswith("range:"):
        fraction = float(name.split(":")[1])
        value = math.copysign(top ** abs(fraction), fraction)
    elif name.endswith("overflow"):
        value = math.copysign(math.log(compute.largest) + 2, -1.0 if name[0] == "-" else 1.0)
    else:
        value = float(name)
    # a named offset as large as the formats hold at most: 1e4 at a scale of 1/8 asks for an
    # unscaled q·k of 8e4, past float16's largest, which no kernel computing in it can form
    value = math.copysign(min(abs(value), top), value)
    return value * rng.uniform(0.5, 1.0, size=q.shape[:-1])


def _below(sentinel: float, q: np.ndarray, k: np.ndarray, scale: float, top: float,
           rng: np.random.Generator) -> np.ndarray:
    """Offsets that put every score of each row below ``sentinel`` (by 1/64 to 1/2 of it), or
    at the end of the range where the formats cannot go below it."""
    group = q.shape[1] // k.shape[1]
    rest = scale * np.einsum("bhqd,bhkd->bhqk", q[..., :-1], np.repeat(k[..., :-1], group, 1))
    highest = np.max(rest, axis=-1)
    offsets = sentinel * (1 + rng.uniform(1 / 64, 1 / 2, size=q.shape[:-1])) - np.abs(highest)
    return np.maximum(offsets, -top)


def _offset(q: np.ndarray, k: np.ndarray, offsets: np.ndarray, scale: float,
            keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Add ``offsets`` (one per query row) to the scores of its row's ``keys`` (1 or 0 per
    key), through the last feature: k_last = sqrt(C / scale) (or 0) and
    q_last = c / sqrt(C scale), C the largest |c|, so no entry is larger than sqrt(C / scale)."""
    largest = max(float(np.max(np.abs(offsets))), precision_format("float64").smallest_normal)
    q, k = q.copy(), k.copy()
    q[..., -1] = offsets / math.sqrt(largest * scale)
    k[..., -1] = keys * math.sqrt(largest / scale)
    return q, k


# -- strategies ----------------------------------------------------------------------------------


def offsets() -> st.SearchStrategy[str]:
    """The named offsets, whole rows below each sentinel, and log-uniform offsets across the
    formats' range (its ends included). Rows below a sentinel come most often: far along the
    range a format's rounding blurs the scores' differences, and only non-finite values are
    told apart from rounding there."""
    below = [f"below:{s:g}" for s in SENTINELS]
    fractions = st.one_of(st.sampled_from((-1.0, 1.0)),
                          st.floats(-1, 1).map(lambda f: round(f, 3)))
    return st.one_of(st.sampled_from(below), st.sampled_from(OFFSETS + tuple(below)),
                     fractions.map(lambda f: f"range:{f:g}"))


@st.composite
def tiled_cases(draw: st.DrawFn, patterns: tuple[str, ...] = TILE_PATTERNS) -> Case:
    """A case whose mask follows a tile pattern, at shapes of the ladder up to 4 tiles of
    queries and of keys (the last tile often ragged: a block multiple plus one)."""
    tile = draw(st.sampled_from(TILES))
    case = draw(cases(where=kind(lengths="any", batch=(1, 1), kv_heads=(1, 1), n=(1, 4 * tile),
                                 d=(1, 8)),
                      mask=st.sampled_from(patterns)))
    return dataclasses.replace(case, tile=tile)


@st.composite
def cases(draw: st.DrawFn, *, where: Callable[[Shape], bool] | None = None,
          mask: st.SearchStrategy[str] | None = None,
          causal_flag: st.SearchStrategy[bool] | None = None,
          fill: st.SearchStrategy[str] | None = None,
          offset: st.SearchStrategy[str | None] | None = None,
          scale: st.SearchStrategy[float | None] | None = None,
          mask_dtype: st.SearchStrategy[str | None] | None = None,
          garbage: st.SearchStrategy[str | None] | None = None,
          bias: st.SearchStrategy[str | None] | None = None,
          mask_kind: st.SearchStrategy[str | None] | None = None,
          memory: st.SearchStrategy[str | None] | None = None,
          softcap: st.SearchStrategy[float | None] | None = None,
          sinks: st.SearchStrategy[str | None] | None = None) -> Case:
    """A :class:`Case` whose sizes are a rung of the shape ladder that ``where`` accepts
    (``_shapes.kind``; default: the common properties' shapes); each other argument, when
    given, is the strategy of that field."""
    def pick(strategy: st.SearchStrategy[_T] | None, default: st.SearchStrategy[_T]) -> _T:
        return draw(default if strategy is None else strategy)

    shape = draw(shapes(where or PLAIN))
    mask_ = pick(mask, st.just("none"))
    return Case(
        n_q=shape.n_q, n_k=shape.n_k, d_k=shape.d_k, d_v=shape.d_v, batch=shape.batch,
        heads=shape.kv_heads * shape.group, kv_heads=shape.kv_heads, mask=mask_,
        # a kernel that takes only a causal flag is asked for causal masks through it
        causal_flag=pick(causal_flag, st.just(False)) and mask_ == "causal",
        fill=pick(fill, st.sampled_from(FILLS)), offset=pick(offset, st.none()),
        scale=pick(scale, st.just(scale_of(shape))),
        mask_dtype=pick(mask_dtype, st.none()), garbage=pick(garbage, st.none()),
        bias=pick(bias, st.none()), mask_kind=pick(mask_kind, st.none()),
        memory=pick(memory, st.none()), softcap=pick(softcap, st.none()),
        sinks=pick(sinks, st.none()), seed=draw(st.integers(0, 2**32 - 1)),
    )
