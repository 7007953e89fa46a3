"""Proved tolerances for a user's own tests: how far an attention kernel's output may lie from
the exact one, for given inputs, a dtype and the precision the kernel computes in, with the
derivation; in place of an ``assert_close`` whose ``atol`` was tuned by hand.

Per entry of O, the tolerance is the smaller of

* the proved error bound of the block-wise algorithm at the compute precision, any block size
  (``_proved``: the catalog's ``online_softmax_blockwise_error_bound`` with the kernel's own
  rounding of the scores, of inputs narrowed into the compute precision and of the output
  rounded back to its dtype), times the entry's abs-scale A = Σ_j a_ij |v_je|; where the
  framework has a rounding model (``numeric/_rounding.ROUNDING_MODEL``) and no bias
  enters the scores;
* the conformance rule's allowance: 2× the worst error of a plain reference computed at that
  precision on the same inputs, plus 4 ulps of the row's magnitude (``_run``);

and every entry lies within the values of its feature over the row's kept keys, widened only
by what rounding the average itself allows (:func:`value_hull`, below): a necessary condition
that holds whatever rounding the scores suffer, where the two above stop meaning anything.

The exact output is the float64 truth of the catalog's proved masking statements. Rows that
keep no key are left out: what a kernel returns there is a convention, not an error.

What holds whatever the scores' rounding
----------------------------------------

The 2× rule's floor is 4 ulps of the row's magnitude times the softmax's condition, 1 + the
largest |score|: a first-order estimate of what rounding a score by ε relative moves its
weight. Where the scores are so large that rounding swamps their spread, that estimate says
nothing: for rows whose scores all lie near −10³⁰ (``row_offset``, ``below:-1e+30``) the
float32 floor is about 10²³ times the output's magnitude, and any finite output passed (a
kernel whose running maximum starts at −10⁶, which returns 0 there, conformed at 6.4·10⁻²⁵;
one returning 1,000 where V is O(1) conformed too). Two facts hold whatever the rounded scores
are, because they hold for every finite score:

* the output of a softmax-weighted average lies in the convex hull of the kept value rows:
  per feature e, min_j v_je ≤ o_ie ≤ max_j v_je over the keys j the row keeps (the catalog's
  ``masking_output_below_largest_kept_value`` and ``masking_output_above_smallest_kept_value``,
  for any scores S and any mask);
* the log-sum-exp of the kept scores lies in [max_j s_j, max_j s_j + log n] for n kept keys
  (``lse_at_least_max``, ``lse_at_most_max_plus_log_n``, at n_k = n).

A row is *unresolved* by the format when its floor from the scores' scale is at least the
output's own magnitude, ``FLOOR_ULPS`` · ε_compute · (1 + max|s|) ≥ 1 (a largest |score| of
2²¹ computing in float32, 256 in float16, 32 in bfloat16): the rule then allows an error as
large as the output itself and resolves none of its digits, and the hull and the lse interval
are what judge it. They are applied to every other row too, as extra necessary conditions:
every honest kernel meets them.

Rounding of the average itself. A kernel computes o = fl(Σ_j p_j v_j / Σ_j p_j) with some
p_j ≥ 0 (its exponentials of its rounded, shifted scores: anything, as far as the hull is
concerned), the same p_j in the sum and in the normaliser, as every softmax-then-matmul and
block-wise (flash) evaluation does. With every rounding of unit u, the coarser of the input
format's and the compute precision's, each term of the numerator carries at most A = 2n + 3
roundings (v narrowed into the compute precision, the division where the weights are
normalised before the product, p rounded to the product's operand format, the product, and at
most 2n − 1 additions and rescalings: a block of b keys costs b − 1
additions, then ⌈n/b⌉ additions into the accumulator and ⌈n/b⌉ − 1 rescalings, at most 2n − 1
at any b), each of the normaliser's B = 2n, and the result R = 6 more (the division, the
rounding to the output's dtype, and one split-KV merge of two halves: product, sum, its
normaliser and the division). So o = Σ_j w_j v_j (1 + α_j)(1 + ρ)/(1 + β) with w_j = p_j / Σ p
convex, |α_j| ≤ γ_A, |β| ≤ γ_B, |ρ| ≤ γ_R (γ_k = ku/(1 − ku)), and

    |o_e − Σ_j w_j v_je| ≤ φ_n · max_j |v_je|,   φ_n = (1 + γ_R)(1 + γ_A)/(1 − γ_B) − 1,

the max over the kept keys: the hull of each feature, widened by φ_n times the largest |v| of
that feature over those keys, the allowance (``HULL_*`` below; about (4n + 9)u, 2n + 4.5 ulps).
Where k·u ≥ 1 the analysis gives no bound and the row's hull is not checked. Underflow is
outside it (the standard model without subnormals): the values drawn are O(1).
The lse: a kernel's rounded scores lie within δ = γ_(d_k+8)·C of the exact ones, C = 1 + the
row's largest kept score magnitude (d_k products and additions, the scale, a bias, √scale on
both sides, a score modification's own rounding, narrowing of q and k), so their maximum lies
within δ of the exact one; its normaliser Σ exp(ŝ_j − max ŝ) lies in [1 − γ, n(1 + c_exp u)
(1 + γ)] with γ = γ_(2n) (exp(0) = 1 is exact), its log is off by c_log·u relative, and the
sums with the maximum (the kernel's, the output's rounding, one merge's) by 3u·|lse|: the lse
lies in [max s − e, max s + log n + e], e = δ + γ_(2n + c_exp + c_log + 2)(1 + log n) +
3u(|max s| + δ + log n + 1), with the framework's c_exp and c_log where it has a rounding model
(``numeric/_rounding``), else 2⁷ each (above the largest measured, MLX's exp at 72u).

Measured over every property at 10 examples a cell (JAX at 6), as the excess over the
allowance: the planted correct kernel at most 0.13 (float64 cells, 3.9·10⁻⁸ beyond the range
of two kept keys; 0.10 in float32; never outside in float16 and bfloat16), kernels computing
every step in float16 or bfloat16 as declared 0.10 and 0.08 (an ulp of the values beyond, at 2
and 3 kept keys), MLX's fast SDPA 0.09 (float32; never outside in its other dtypes), JAX's
jitted attention 0.07 (float32) and 0.04 (float64). A kernel computing in less than it
declares can leave it: TF32 products declared float32 return tf32(v) for a row of one key, off
by 2⁻¹¹ relative, some 800 allowances. Both planted kernels above fail ``row_offset`` in
float32 (``tests/kernels/test_hull.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

# the conformance rule's limits, as the checker applies them (``_run``)
from attnproof.numeric import KERNEL_FLOOR_ULPS as FLOOR_ULPS
from attnproof.numeric import KERNEL_LIMIT as LIMIT
from attnproof.numeric import to_numpy
from attnproof.report.view import format_number

from . import _proved as proved
from ._declaration import from_layout, layout_shape, normalized_layout
from ._frameworks import precision_format, reference_unit, rounded
from ._truth import Inputs, _scores, condition, reference, truth

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._frameworks import Array

_FLOAT_NAMES = {"float64": "float64", "float32": "float32", "float16": "float16",
                "bfloat16": "bfloat16"}


@dataclass(frozen=True)
class Tolerance:
    """The tolerance attention's output O may be held to, per entry, with its derivation
    (``str(tolerance)``); arrays are canonical (b, h, n_q, d_v) unless read through
    :meth:`check` and :meth:`assert_close`, which take the inputs' layout."""

    expected: np.ndarray  # the exact O, float64 (b, h, n_q, d_v)
    atol: np.ndarray  # the tolerance of each entry (NaN in rows that keep no key)
    proved: np.ndarray | None  # the proved bound's share of it, per entry (None: no bound)
    rule: np.ndarray  # the conformance rule's allowance, per row (b, h, n_q)
    rows: np.ndarray  # the rows held to it: those that keep a key (b, h, n_q)
    dtype: Format
    compute: Format
    framework: str
    sizes: str
    layout: str = "bhsd"
    reference_error: float = 0.0
    # the kept values' range of each row and feature, and its allowance (``value_hull``): an
    # entry outside it by more is off whatever its distance to O
    hull: Hull | None = None

    def check(self, out: Array) -> tuple[bool, float, tuple[int, ...] | None]:
        """(within?, the largest |out − O| / tolerance or excess over the kept values' range
        / its allowance, the entry where it is, canonical)."""
        ratio = self._ratios(_canonical(out, self.layout, self.expected.shape))
        worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        return bool(ratio[worst] <= 1.0), float(ratio[worst]), tuple(int(i) for i in worst)

    def _ratios(self, got: np.ndarray, which: str = "both") -> np.ndarray:
        """Per entry, |got − O| over its tolerance ("distance"), the excess over the kept
        values' range over its allowance ("hull"), or the larger ("both")."""
        with np.errstate(all="ignore"):
            ratio = np.abs(got - self.expected) / self.atol
        ratio = np.nan_to_num(np.where(np.isfinite(got) | ~self.rows[..., None], ratio,
                                       np.inf), nan=np.inf, posinf=np.inf)
        if self.hull is not None and which != "distance":
            outside = self.hull.ratio(got)
            ratio = outside if which == "hull" else np.maximum(ratio, outside)
        return np.where(self.rows[..., None], ratio, 0.0)

    def assert_close(self, out: Array) -> None:
        """Raise AssertionError, with the derivation and the worst entry, where ``out`` lies
        farther from the exact output than its tolerance."""
        message = self.failure(out)
        if message:
            raise AssertionError(message)

    def failure(self, out: Array) -> str:
        """Why ``out`` is not within its tolerance, with the derivation; "" when it is."""
        ok, ratio, where = self.check(out)
        if ok:
            return ""
        got = _canonical(out, self.layout, self.expected.shape)
        entry = f"(kernel {got[where]:.6g}, exact {self.expected[where]:.6g})\n{self}"
        if self._ratios(got, "distance")[where] < ratio:  # the range decides
            assert self.hull is not None  # without one the ratio is the distance's
            return (f"attention output at (b, h, i, e) = {where} lies outside "
                    f"[{self.hull.low[where]:.6g}, {self.hull.high[where]:.6g}], the values of "
                    f"its feature over the row's kept keys, by {self.hull.excess(got)[where]:.3g}"
                    f", {format_number(ratio)}x the {self.hull.allowance[where]:.3g} rounding "
                    "allows "
                    f"{entry}")
        return (f"attention output off by {abs(got[where] - self.expected[where]):.3g} at "
                f"(b, h, i, e) = {where}, {format_number(ratio)}x its tolerance "
                f"{self.atol[where]:.3g} "
                f"{entry}")

    @property
    def proved_tighter(self) -> int:
        """How many rows' tolerance the proved bound sets (the rule sets the others')."""
        if self.proved is None:
            return 0
        held = self.atol[self.rows]
        return int(np.sum(np.any(held == self.proved[self.rows], axis=-1)))

    def __str__(self) -> str:
        u = self.compute.unit_roundoff
        rows = int(self.rows.sum())
        lines = [f"Tolerance of attention's output O ({self.sizes}), {self.dtype} inputs "
                 f"computed in {self.compute} (u = 2^{np.log2(u):.0f} = {u:.3g}), per entry "
                 "the smaller of:"]
        if self.proved is None:
            lines.append(f"- proved bound: none ({_no_bound(self.framework, self.compute)})")
        else:
            shares = self.proved[self.rows]
            shares = shares[np.isfinite(shares)]
            lines.append(
                "- proved bound B·A: the block-wise algorithm's error bound at any block size "
                "(theorems/rounding.py, online_softmax_blockwise_error_bound: "
                "((1 + γ_K)e^X − 1), K the count of roundings at b = 1 with "
                f"{self.framework}'s exp, X = 2u(spread + 2δ) + 2δ with δ the scores' own "
                "rounding), plus the inputs' narrowing and the output's rounding into "
                f"{self.dtype}; A = Σ_j a_ij |v_je| the entry's abs-scale; here "
                f"{np.min(shares, initial=np.inf):.3g} to {np.max(shares, initial=0.0):.3g}")
        lines.append(
            f"- the 2x rule: {LIMIT:g} × the worst error of a plain reference computed in "
            f"{self.compute} ({self.reference_error:.3g}) + {FLOOR_ULPS:g} ulps of each "
            f"row's magnitude; here {np.min(self.rule[self.rows]):.3g} to "
            f"{np.max(self.rule[self.rows]):.3g}")
        held = self.atol[self.rows]
        if self.hull is not None:
            allowance = self.hull.allowance[self.rows]
            allowance = allowance[np.isfinite(allowance)]
            lines.append(
                "- and, whatever rounding the scores suffer, within the values of its feature "
                "over the row's kept keys, widened by φ·max|v| with φ ≈ γ_(4n+9)(u), u = "
                f"2^{np.log2(self.hull.u):.0f} ({', '.join(HULL_THEOREMS)}); here "
                f"{np.min(allowance, initial=np.inf):.3g} to "
                f"{np.max(allowance, initial=0.0):.3g}")
        lines.append(f"Held to: the proved bound in {self.proved_tighter} of {rows} rows"
                     f"{', the rule in the others' if self.proved_tighter < rows else ''}; "
                     f"tolerances {np.min(held):.3g} to "
                     f"{np.max(held):.3g}, against the float64 truth of the proved masking "
                     "statements" + (f"; {self.rows.size - rows} rows keep no key and are "
                                     "left out" if rows < self.rows.size else "") + ".")
        return "\n".join(lines)


def proved_tolerance(q: Array, k: Array, v: Array, *, mask: Array | None = None,
                     causal: bool = False, scale: float | None = None,
                     dtype: str | None = None, compute: str | None = None,
                     framework: str = "numpy", layout: str = "bhsd") -> Tolerance:
    """The tolerance an attention kernel's output may be held to on these inputs.

    Args:
        q, k, v: the kernel's inputs (NumPy, JAX, MLX or PyTorch arrays) in ``layout``;
            k and v may have fewer heads than q (grouped-query heads).
        mask: a boolean keep-mask broadcastable to (batch, heads, n_q, n_k) (True keeps a
            key), or None.
        causal: query i keeps keys j ≤ i (upper-left) besides the mask.
        scale: the score scale (None: 1/sqrt(d_k)).
        dtype: the inputs' and output's dtype (None: q's).
        compute: the precision the kernel computes in (None: ``dtype``), e.g. "float32" for
            half-precision inputs accumulated in float32, or "tensorfloat32".
        framework: whose rounding model the proved bound uses (numpy, jax, mlx); one without
            a model for ``compute`` (PyTorch) gets the rule's allowance only.
        layout: the axis order of q, k, v and of the output ("bhsd", "bshd", ...).
    """
    letters = normalized_layout(layout)
    arrays = [_numpy(a) for a in (q, k, v)]
    # the names are parsed here, where they come in
    inputs_format = precision_format(dtype or _dtype_name(q))
    compute_format = precision_format(compute) if compute else inputs_format
    b, h, n_q, d_k = _shape(arrays[0].shape, letters)
    _, h_kv, n_k, _ = _shape(arrays[1].shape, letters)
    canonical = [from_layout(a, letters, _shape(a.shape, letters)) for a in arrays]
    keep = np.ones((b, h, n_q, n_k), dtype=bool)
    if mask is not None:
        keep = keep & np.broadcast_to(_numpy(mask).astype(bool), keep.shape)
    if causal:
        keep = keep & (np.arange(n_k)[None, :] <= np.arange(n_q)[:, None])
    x = Inputs(canonical[0], canonical[1], canonical[2], keep,
               np.zeros((b, h, n_q, canonical[2].shape[-1])),
               d_k ** -0.5 if scale is None else float(scale))
    exact, size = truth(x, ("out",))["out"]
    plain = reference(x, compute_format, inputs_format, ("out",))["out"]
    rows = np.any(keep, axis=-1)
    with np.errstate(all="ignore"):
        reference_error = float(np.max(np.where(rows[..., None], np.abs(plain - exact), 0.0),
                                       initial=0.0))
        magnitude = np.max(size, axis=-1)
        floor = floor_ulps(x, inputs_format, compute_format)["out"] * magnitude
        rule = LIMIT * reference_error + floor
        bound = proved.row_bounds(x, inputs_format, compute_format, framework)
        allowed = np.broadcast_to(rule[..., None], exact.shape)
        proved_share = None
        if bound is not None:
            proved_share = np.where(np.isfinite(bound)[..., None], bound[..., None] * size,
                                    np.inf)
            allowed = np.minimum(allowed, proved_share)
    allowed = np.where(rows[..., None], allowed, np.nan)
    sizes = f"b={b} h={h}{'' if h_kv == h else f'/{h_kv}kv'} n_q={n_q} n_k={n_k} d_k={d_k} " \
            f"d_v={canonical[2].shape[-1]}"
    return Tolerance(exact, allowed, proved_share, rule, rows, inputs_format, compute_format,
                     framework, sizes, letters, reference_error,
                     value_hull(x, inputs_format, compute_format))


def _no_bound(framework: str, compute: Format) -> str:
    return f"{framework} has no rounding model for {compute}"


def _shape(shape: Sequence[int], letters: str) -> tuple[int, int, int, int]:
    """(b, h, s, d) of an array of axis order ``letters`` (absent axes: 1)."""
    found = dict(zip(letters, shape, strict=True))
    return found.get("b", 1), found.get("h", 1), found["s"], found["d"]


def _canonical(out: Array, letters: str, shape: Sequence[int]) -> np.ndarray:
    array = _numpy(out)
    expected = layout_shape(tuple(shape), letters)
    if array.shape != expected:
        raise ValueError(f"the output has shape {array.shape}; expected {expected} "
                         f"(layout {letters})")
    return from_layout(array, letters, tuple(shape))


def _numpy(array: Array) -> np.ndarray:
    """A float64 (or bool) NumPy copy of a NumPy, JAX, MLX or PyTorch array."""
    if hasattr(array, "detach"):  # torch: bfloat16 has no NumPy dtype, go through float64
        import torch

        if array.dtype == torch.bool:
            return array.detach().cpu().numpy()
        return array.detach().to(device="cpu", dtype=torch.float64).numpy()
    if str(getattr(array, "dtype", "")).rsplit(".", 1)[-1] in ("bool", "bool_"):
        return np.asarray(array).astype(bool)
    return to_numpy(array)  # NumPy, JAX and MLX arrays, as the numeric backends read theirs


def _dtype_name(array: Array) -> str:
    name = str(getattr(array, "dtype", "float32")).rsplit(".", 1)[-1]
    if name not in _FLOAT_NAMES:
        raise ValueError(f"dtype {name!r} is none of {', '.join(_FLOAT_NAMES)}: pass dtype=")
    return name



# -- what holds whatever the scores' rounding (the module docstring derives each count) --------

# the catalog's statements of the two facts, named in every failure they decide
HULL_THEOREMS = ("masking_output_below_largest_kept_value",
                 "masking_output_above_smallest_kept_value")
LSE_THEOREMS = ("lse_at_least_max", "lse_at_most_max_plus_log_n")
# roundings of one term of the average's numerator: 2 per kept key and 3 more; of its
# normaliser, 2 per kept key; of the result, 6 (division, output, one split-KV merge)
HULL_NUMERATOR = (2, 3)
HULL_DENOMINATOR = (2, 0)
HULL_RESULT = 6
# roundings of a score beyond its d_k products and additions
SCORE_ROUNDINGS = 8
# roundings of the lse's final sums (the kernel's, the output's, one merge's), each relative
LSE_FINAL_ROUNDINGS = 3
# exp's and log's accuracy in units of u for a framework without a rounding model
UNMODELLED_ACCURACY = 2 ** 7


def _gamma(count: npt.ArrayLike, u: float) -> np.ndarray:
    """γ_k = ku / (1 − ku), infinite where ku ≥ 1 (no bound)."""
    k = np.asarray(count, dtype=np.float64) * u
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k < 1, k / (1 - k), np.inf)


def hull_factor(kept: npt.ArrayLike, u: float) -> np.ndarray:
    """φ_n, the allowance relative to the largest |v| of a feature, for ``kept`` keys."""
    a = _gamma(HULL_NUMERATOR[0] * np.asarray(kept) + HULL_NUMERATOR[1], u)
    b = _gamma(HULL_DENOMINATOR[0] * np.asarray(kept) + HULL_DENOMINATOR[1], u)
    r = _gamma(HULL_RESULT, u)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        factor = (1 + r) * (1 + a) / (1 - b) - 1
    return np.where(np.isfinite(factor) & (b < 1), factor, np.inf)


@dataclass(frozen=True)
class Hull:
    """Per row (b, h, n_q) and feature (d_v): the smallest and the largest v over the keys
    the row keeps, and the allowance of rounding beyond them (inf: no bound)."""

    low: np.ndarray
    high: np.ndarray
    allowance: np.ndarray
    kept: np.ndarray  # (b, h, n_q)
    u: float

    def excess(self, out: np.ndarray) -> np.ndarray:
        """How far each entry of ``out`` lies outside its feature's [low, high] (0 inside;
        inf where it is not finite)."""
        with np.errstate(invalid="ignore"):
            beyond = np.maximum(np.maximum(self.low - out, out - self.high), 0.0)
        return np.where(np.isfinite(out), beyond, np.inf)

    def ratio(self, out: np.ndarray) -> np.ndarray:
        """The excess over the allowance, per entry: at most 1 within what rounding allows."""
        excess = self.excess(out)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = excess / self.allowance
        return np.where(excess == 0, 0.0, np.nan_to_num(ratio, nan=np.inf, posinf=np.inf))

    def rounding(self, kept: int) -> str:
        """How the allowance of a row of ``kept`` keys is made, in words."""
        count = HULL_NUMERATOR[1] + HULL_DENOMINATOR[1] + HULL_RESULT
        per_key = HULL_NUMERATOR[0] + HULL_DENOMINATOR[0]
        return (f"φ·max|v_e| over the kept keys, φ ≈ γ_K, K = {per_key}n + {count} = "
                f"{per_key * kept + count} roundings of u = 2^{np.log2(self.u):.0f}")


def value_hull(x: Inputs, dtype: Format, compute: Format) -> Hull:
    """The hull of the kept value rows of every query row, with its allowance."""
    v = np.repeat(x.v, x.group, axis=1)[:, :, None, :, :]  # (b, h, 1, n_k, d_v)
    keep = x.keep[..., None]  # (b, h, n_q, n_k, 1)
    low = np.min(np.where(keep, v, np.inf), axis=3)
    high = np.max(np.where(keep, v, -np.inf), axis=3)
    largest = np.max(np.where(keep, np.abs(v), 0.0), axis=3)
    kept = x.keep.sum(axis=-1)
    u = reference_unit(dtype, compute)
    allowance = hull_factor(kept, u)[..., None] * largest
    allowance = np.where(np.isnan(allowance), np.inf, allowance)  # inf · 0: no bound either
    return Hull(low, high, allowance, kept, u)


def floor_ulps(x: Inputs, dtype: Format, compute: Format) -> dict[str, np.ndarray]:
    """Per output, per row: the floor in units of the row's magnitude,
    ``FLOOR_ULPS`` · (ε_dtype + ε_compute · the row's condition)."""
    return {name: FLOOR_ULPS * (dtype.epsilon
                                 + compute.epsilon * rows)
            for name, rows in condition(x).items()}


def unresolved_rows(x: Inputs, compute: Format) -> np.ndarray:
    """The query rows whose floor from the scores' scale is at least the output's magnitude
    (``FLOOR_ULPS`` · ε_compute · (1 + max|s|) ≥ 1): the 2× rule resolves none of their
    digits, and the hull and the lse interval are what judge them."""
    return FLOOR_ULPS * compute.epsilon * condition(x)["out"] >= 1


@dataclass(frozen=True)
class LseInterval:
    """Per row (b, h, n_q): where the log-sum-exp of the kept scores may lie once rounded."""

    low: np.ndarray
    high: np.ndarray
    top: np.ndarray  # the largest kept score
    margin: np.ndarray  # e
    kept: np.ndarray

    def ratio(self, lse: np.ndarray) -> np.ndarray:
        """How far each row's lse lies outside [low, high], over the margin e (0 inside)."""
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            inside = (lse >= self.low) & (lse <= self.high)  # the ends may be ±inf
            beyond = np.where(lse < self.low, self.low - lse, lse - self.high)
            ratio = np.where(inside, 0.0, beyond / self.margin)
        return np.nan_to_num(ratio, nan=np.inf, posinf=np.inf)  # NaN is never inside


def lse_interval(x: Inputs, dtype: Format, compute: Format, framework: str) -> LseInterval:
    """[max s − e, max s + log n + e] of each row's kept scores (the module docstring)."""
    from attnproof.numeric import ROUNDING_MODEL

    u = reference_unit(dtype, compute)
    model = ROUNDING_MODEL.get((framework, compute.name))
    c_exp, c_log = (model.c_exp, model.c_log) if model is not None else \
        (UNMODELLED_ACCURACY, UNMODELLED_ACCURACY)
    scores = np.where(x.keep, _scores(x, np.repeat(x.k, x.group, axis=1)), -np.inf)
    top = np.max(scores, axis=-1)
    kept = x.keep.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_n = np.log(np.maximum(kept, 1))
        delta = _gamma(x.q.shape[-1] + SCORE_ROUNDINGS, u) * condition(x)["lse"]
        margin = (delta + _gamma(2 * kept + c_exp + c_log + 2, u) * (1 + log_n)
                  + LSE_FINAL_ROUNDINGS * u * (np.abs(top) + delta + log_n + 1))
        low, high = top - margin, top + log_n + margin
        # rounding is monotone: an lse in [low, high] rounds into [fl(low), fl(high)], through
        # the compute precision and then the output's dtype (±inf where they overflow, as the
        # lse of a row far along the range does in float16)
        low, high = (rounded(rounded(end, compute), dtype) for end in (low, high))
    return LseInterval(low, high, top, margin, kept)
