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
  precision on the same inputs, plus 4 ulps of the row's magnitude (``_run``).

The exact output is the float64 truth of the catalog's proved masking statements. Rows that
keep no key are left out: what a kernel returns there is a convention, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# the conformance rule's limits, as the checker applies them (``_run``)
from attnproof.numeric import KERNEL_FLOOR_ULPS as FLOOR_ULPS
from attnproof.numeric import KERNEL_LIMIT as LIMIT

from . import _proved as proved
from ._declaration import from_layout, layout_shape, normalized_layout
from ._frameworks import machine_epsilon
from ._truth import Inputs, condition, reference, truth

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
    dtype: str
    compute: str
    framework: str
    sizes: str
    layout: str = "bhsd"
    reference_error: float = 0.0

    def check(self, out) -> tuple[bool, float, tuple[int, ...] | None]:
        """(within?, the largest |out − O| / tolerance, the entry where it is, canonical)."""
        got = _canonical(out, self.layout, self.expected.shape)
        with np.errstate(all="ignore"):
            ratio = np.abs(got - self.expected) / self.atol
        ratio = np.where(np.isfinite(got) | ~self.rows[..., None], ratio, np.inf)
        ratio = np.where(self.rows[..., None], np.nan_to_num(ratio, nan=np.inf), 0.0)
        worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        return bool(ratio[worst] <= 1.0), float(ratio[worst]), tuple(int(i) for i in worst)

    def assert_close(self, out) -> None:
        """Raise AssertionError, with the derivation and the worst entry, where ``out`` lies
        farther from the exact output than its tolerance."""
        message = self.failure(out)
        if message:
            raise AssertionError(message)

    def failure(self, out) -> str:
        """Why ``out`` is not within its tolerance, with the derivation; "" when it is."""
        ok, ratio, where = self.check(out)
        if ok:
            return ""
        got = _canonical(out, self.layout, self.expected.shape)
        return (f"attention output off by {abs(got[where] - self.expected[where]):.3g} at "
                f"(b, h, i, e) = {where}, {ratio:.3g}x its tolerance {self.atol[where]:.3g} "
                f"(kernel {got[where]:.6g}, exact {self.expected[where]:.6g})\n{self}")

    @property
    def proved_tighter(self) -> int:
        """How many rows' tolerance the proved bound sets (the rule sets the others')."""
        if self.proved is None:
            return 0
        held = self.atol[self.rows]
        return int(np.sum(np.any(held == self.proved[self.rows], axis=-1)))

    def __str__(self) -> str:
        u = machine_epsilon(self.compute) / 2
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
        lines.append(f"Held to: the proved bound in {self.proved_tighter} of {rows} rows"
                     f"{', the rule in the others' if self.proved_tighter < rows else ''}; "
                     f"tolerances {np.min(held):.3g} to "
                     f"{np.max(held):.3g}, against the float64 truth of the proved masking "
                     "statements" + (f"; {self.rows.size - rows} rows keep no key and are "
                                     "left out" if rows < self.rows.size else "") + ".")
        return "\n".join(lines)


def proved_tolerance(q, k, v, *, mask=None, causal: bool = False, scale: float | None = None,
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
    dtype = dtype or _dtype_name(q)
    compute = compute or dtype
    b, h, n_q, d_k = _shape(arrays[0].shape, letters)
    _, h_kv, n_k, _ = _shape(arrays[1].shape, letters)
    canonical = [from_layout(a, letters, _shape(a.shape, letters)) for a in arrays]
    keep = np.ones((b, h, n_q, n_k), dtype=bool)
    if mask is not None:
        keep = keep & np.broadcast_to(_numpy(mask).astype(bool), keep.shape)
    if causal:
        keep = keep & (np.arange(n_k)[None, :] <= np.arange(n_q)[:, None])
    x = Inputs(*canonical, keep, np.zeros((b, h, n_q, canonical[2].shape[-1])),
               d_k ** -0.5 if scale is None else float(scale))
    exact, size = truth(x, ("out",))["out"]
    plain = reference(x, compute, dtype, ("out",))["out"]
    rows = np.any(keep, axis=-1)
    with np.errstate(all="ignore"):
        reference_error = float(np.max(np.where(rows[..., None], np.abs(plain - exact), 0.0),
                                       initial=0.0))
        magnitude = np.max(size, axis=-1)
        floor = FLOOR_ULPS * (machine_epsilon(dtype) + machine_epsilon(compute)
                              * condition(x)["out"]) * magnitude
        rule = LIMIT * reference_error + floor
        bound = proved.row_bounds(x, dtype, compute, framework)
        allowed = np.broadcast_to(rule[..., None], exact.shape)
        proved_share = None
        if bound is not None:
            proved_share = np.where(np.isfinite(bound)[..., None], bound[..., None] * size,
                                    np.inf)
            allowed = np.minimum(allowed, proved_share)
    allowed = np.where(rows[..., None], allowed, np.nan)
    sizes = f"b={b} h={h}{'' if h_kv == h else f'/{h_kv}kv'} n_q={n_q} n_k={n_k} d_k={d_k} " \
            f"d_v={canonical[2].shape[-1]}"
    return Tolerance(exact, allowed, proved_share, rule, rows, dtype, compute, framework,
                     sizes, letters, reference_error)


def _no_bound(framework: str, compute: str) -> str:
    return f"{framework} has no rounding model for {compute}"


def _shape(shape, letters: str) -> tuple[int, int, int, int]:
    """(b, h, s, d) of an array of axis order ``letters`` (absent axes: 1)."""
    found = dict(zip(letters, shape, strict=True))
    return found.get("b", 1), found.get("h", 1), found["s"], found["d"]


def _canonical(out, letters: str, shape) -> np.ndarray:
    array = _numpy(out)
    expected = layout_shape(tuple(shape), letters)
    if array.shape != expected:
        raise ValueError(f"the output has shape {array.shape}; expected {expected} "
                         f"(layout {letters})")
    return from_layout(array, letters, tuple(shape))


def _numpy(array) -> np.ndarray:
    """A float64 (or bool) NumPy copy of a NumPy, JAX, MLX or PyTorch array."""
    if hasattr(array, "detach"):  # torch: bfloat16 has no NumPy dtype, go through float64
        import torch

        if array.dtype == torch.bool:
            return array.detach().cpu().numpy()
        return array.detach().to(device="cpu", dtype=torch.float64).numpy()
    if type(array).__module__.startswith("mlx"):
        import mlx.core as mx

        if array.dtype == mx.bool_:
            return np.asarray(array)
        return np.asarray(array.astype(mx.float32 if array.dtype != mx.float64 else
                                       mx.float64), dtype=np.float64)
    value = np.asarray(array)
    return value if value.dtype == bool else value.astype(np.float64)


def _dtype_name(array) -> str:
    name = str(getattr(array, "dtype", "float32")).rsplit(".", 1)[-1]
    if name not in _FLOAT_NAMES:
        raise ValueError(f"dtype {name!r} is none of {', '.join(_FLOAT_NAMES)}: pass dtype=")
    return name

