"""Cases aimed at how attention kernels break, and the instances they seed.

Hypothesis draws the structure of a case (sizes, mask pattern, fill, score offset, scale, seed);
a NumPy PRNG seeded from it fills the arrays, so a case replays from its JSON. Sizes shrink
towards the small end: a shrunk counterexample needs more than 16 keys only when the bug does
(a block boundary at 128 needs 129).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ._frameworks import rounded
from ._truth import Inputs

# lengths just below, at and above block multiples (kernels tile keys by 16 to 256)
BLOCK_EDGES = (63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025)
HEAD_DIMS = (1, 2, 3, 4, 5, 8, 16, 32, 64, 128, 256)
MASKS = ("none", "random", "first_block", "causal", "padding", "fully_masked")
FILLS = ("gaussian", "low_rank", "spikes")
# offsets added to every score of a row: far beyond exp's range, and just past the overflow of
# the computing format ("overflow" = log(max of that format) + 2)
OFFSETS = ("1e4", "-1e4", "overflow", "-overflow")
SPIKE = 40.0  # "a few very large activations": |entry| 40 against Gaussian entries
FULLY_MASKED_ROW_FRACTION = 0.25


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
    fill: str = "gaussian"
    offset: str | None = None
    scale: float | None = None  # None: the kernel's default, 1/sqrt(d_k)
    mask_dtype: str | None = None  # an additive mask in another dtype than the scores
    seed: int = 0

    def to_json(self) -> str:
        fields = {k: v for k, v in dataclasses.asdict(self).items() if v != _DEFAULTS[k]}
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Case:
        return cls(**json.loads(text))

    def sizes(self) -> str:
        heads = f"{self.heads}" if self.kv_heads == self.heads else \
            f"{self.heads}/{self.kv_heads}kv"
        return (f"b={self.batch} h={heads} n_q={self.n_q} n_k={self.n_k} d_k={self.d_k} "
                f"d_v={self.d_v}")

    @property
    def used_scale(self) -> float:
        return self.scale if self.scale is not None else 1 / math.sqrt(self.d_k)


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Case)}


# -- instances -----------------------------------------------------------------------------------


def instance(case: Case, dtype: str, compute: str, alignment: str = "upper_left") -> Inputs:
    """The arrays of ``case``, rounded to ``dtype`` (float64 values), with the keep-mask the
    kernel is asked to apply (a causal flag aligned as ``alignment``)."""
    rng = np.random.default_rng(case.seed)
    b, h, hk = case.batch, case.heads, case.kv_heads
    q = rng.standard_normal((b, h, case.n_q, case.d_k))
    k = rng.standard_normal((b, hk, case.n_k, case.d_k))
    v = rng.standard_normal((b, hk, case.n_k, case.d_v))
    g = rng.standard_normal((b, h, case.n_q, case.d_v))
    q, k = _filled(case.fill, q, k, rng)
    if case.offset is not None:
        q, k = _offset(q, k, _offset_value(case.offset, compute), case.used_scale, rng)
    keep = keep_mask(case, rng, alignment)
    # a fully masked row passes no upstream gradient, so its convention stays out of dK, dV
    g = np.where(fully_masked_rows(keep)[..., None], 0.0, g)
    q, k, v, g = (rounded(a, dtype) for a in (q, k, v, g))
    return Inputs(q, k, v, keep, g, float(rounded(np.asarray(case.used_scale), dtype)))


def fully_masked_rows(keep: np.ndarray) -> np.ndarray:
    return ~np.any(keep, axis=-1)


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
        if case.mask == "first_block" and case.n_k > 1:  # the first keys masked in every row
            keep[..., : rng.integers(1, case.n_k)] = False
            keep[..., -1] = True
    elif case.mask == "padding":  # keys past each batch element's length
        lengths = rng.integers(1, case.n_k + 1, size=case.batch)
        lengths[0] = rng.integers(1, case.n_k) if case.n_k > 1 else 1  # one really padded
        keep &= np.arange(case.n_k) < lengths[:, None, None, None]
    if case.mask == "fully_masked":
        rows = rng.random(shape[:-1]) < FULLY_MASKED_ROW_FRACTION
        rows[..., 0] = True
        keep &= ~rows[..., None]
    return keep


def _filled(fill: str, q, k, rng):
    if fill == "low_rank":  # every query and key along one direction: scores of rank 1
        u = rng.standard_normal(q.shape[-1])
        return q[..., :1] * u, k[..., :1] * u
    if fill == "spikes":
        for array in (q, k):
            flat = array.reshape(-1)
            where = rng.choice(flat.size, size=min(3, flat.size), replace=False)
            flat[where] = SPIKE * rng.choice([-1.0, 1.0], size=where.size)
    return q, k


def _offset_value(name: str, compute: str) -> float:
    from ._frameworks import numpy_dtype

    if name.endswith("overflow"):
        import ml_dtypes

        top = float(ml_dtypes.finfo(numpy_dtype(compute)).max)
        return math.copysign(math.log(top) + 2, -1.0 if name.startswith("-") else 1.0)
    return float(name)


def _offset(q, k, offset: float, scale: float, rng):
    """Add ``offset`` times a weight in [1/2, 1] to every score of each query row, through the
    last feature: q_last = ±sqrt(|c| w / scale), k_last = sqrt(|c| / scale), so the product
    needs no entry larger than sqrt(|c| / scale)."""
    w = rng.uniform(0.5, 1.0, size=q.shape[:-1])
    q, k = q.copy(), k.copy()
    q[..., -1] = math.copysign(1.0, offset) * np.sqrt(abs(offset) * w / scale)
    k[..., -1] = math.sqrt(abs(offset) / scale)
    return q, k


# -- strategies ----------------------------------------------------------------------------------


def small_lengths(top: int = 16):
    return st.integers(1, top)


def lengths():
    """Mostly small, sometimes just below, at or above a block multiple."""
    return st.one_of(small_lengths(), st.sampled_from(BLOCK_EDGES))


def head_dims():
    return st.one_of(st.integers(1, 8), st.sampled_from(HEAD_DIMS))


@st.composite
def cases(draw, *, n_q=None, n_k=None, d_k=None, d_v=None, batch=None, heads=None,
          group=None, mask=None, causal_flag=None, fill=None, offset=None, scale=None,
          mask_dtype=None, same_lengths=False, same_dims=True):
    """A :class:`Case`; each argument, when given, is the strategy of that field."""
    def pick(strategy, default):
        return draw(default if strategy is None else strategy)

    n_q_ = pick(n_q, small_lengths())
    n_k_ = n_q_ if same_lengths else pick(n_k, small_lengths())
    d_k_ = pick(d_k, head_dims())
    d_v_ = d_k_ if same_dims else pick(d_v, head_dims())
    kv = pick(heads, st.integers(1, 2))  # key/value heads; query heads are group times more
    h = kv * pick(group, st.just(1))
    return Case(
        n_q=n_q_, n_k=n_k_, d_k=d_k_, d_v=d_v_, batch=pick(batch, st.integers(1, 2)),
        heads=h, kv_heads=kv, mask=pick(mask, st.just("none")),
        causal_flag=pick(causal_flag, st.just(False)),
        fill=pick(fill, st.sampled_from(FILLS)), offset=pick(offset, st.none()),
        scale=pick(scale, st.one_of(st.none(), st.sampled_from([0.5, 1.0, 2.0]))),
        mask_dtype=pick(mask_dtype, st.none()),
        seed=draw(st.integers(0, 2**32 - 1)),
    )
