"""The float64 truth of attention under a keep-mask, from the catalog's proved statements, and a
plain reference computed at a kernel's declared precision.

The truth is the compiled code of ``theorems/masking.py``: the masked forward pass O and the
closed forms (46), (47), (38) of the backward pass. Those statements
fix the scale at 1/sqrt(d_k); another scale s is the same statement at Q' = Q s sqrt(d_k).
Grouped-query heads repeat K and V over the query heads of their group. A finite bias B added
to the scores is the same statement with n_q more features: query i's are the i-th unit vector,
key j's are column j of B (each scaled by sqrt(d'), d' = d_k + n_q).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from attnproof.symbolic import FLOAT32, TENSORFLOAT32

from ._frameworks import rounded

if TYPE_CHECKING:
    import sympy as sp

    from attnproof.numeric import Compiled
    from attnproof.symbolic import Equals, Format, Theorem

    from ._score_mod import ScoreMod

# (value, magnitude) of one output, each in canonical layout, float64
Pair = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Inputs:
    """One instance in canonical layout: q (b, h, n_q, d_k), k (b, h_kv, n_k, d_k),
    v (b, h_kv, n_k, d_v), keep (b, h, n_q, n_k) bool, g (b, h, n_q, d_v) = dL/dO."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    keep: np.ndarray
    g: np.ndarray
    scale: float
    # what the kernel receives instead, where it differs from the truth's arrays (garbage in
    # entries no output depends on; a mask without the window's band), by argument name
    given: dict[str, np.ndarray] | None = None
    # the finite term added to each score (b, h, n_q, n_k) after the kernel's scale rule
    bias: np.ndarray | None = None
    # a modification of each score (bias included) before the softmax (a ScoreMod)
    score_mod: ScoreMod | None = None
    # (h,): each query head's sink logit, added to every row's softmax denominator (``_sinks``)
    sinks: np.ndarray | None = None
    # the last key is a sink appended as a key (``_sinks.with_sink_key``): its score's
    # gradient, summed over each head's rows, is that head's dsinks
    sink_key: bool = False
    # (b, h, n_q) = dL/d lse, where the loss reads the returned lse too (``backward_lse``):
    # d lse_i / d s_ij is the weight a_ij, so every score's gradient gains a_ij · g_lse_i
    g_lse: np.ndarray | None = None

    @property
    def group(self) -> int:
        return self.q.shape[1] // self.k.shape[1]

    def passed(self, argument: str) -> np.ndarray:
        """The array the kernel receives as ``argument`` (q, k or v; "mask": the keep-mask its
        mask argument says, which leaves a sliding window's band to the window keyword)."""
        given = (self.given or {}).get(argument)
        if given is not None:
            return given
        return self.keep if argument == "mask" else getattr(self, argument)


OUTPUTS = ("out", "dq", "dk", "dv")
# dL/ds_h of each head's sink logit, canonically (1, h, 1, 1): one "row" per head
SINK_GRADIENT = "dsinks"


@functools.cache
def _statements() -> dict[str, Compiled]:
    """The compiled O, dQ, dK, dV (the import is deferred: compiling loads the catalog)."""
    from attnproof.numeric import compile_expression
    from attnproof.theorems import masking as mk

    def both(expr: sp.Expr, out: tuple[sp.Idx, ...], theorem: Theorem) -> Compiled:
        return compile_expression(expr, out, inputs=theorem.inputs,
                                  definitions=theorem.definitions)

    dq, dk, dv = (mk.masking_attention_backward_dq, mk.masking_attention_backward_dk,
                  mk.masking_attention_backward_dv)
    # each of the three is stated as an identity (``Equals``): its rhs is the closed form
    return {
        "out": both(mk.O_masked[mk.i, mk.b], (mk.i, mk.b), dq),
        "dq": both(cast("Equals", dq.claim).rhs, (mk.m, mk.l_), dq),
        "dk": both(cast("Equals", dk.claim).rhs, (mk.n, mk.l_), dk),
        "dv": both(cast("Equals", dv.claim).rhs, (mk.n, mk.c), dv),
    }


def truth(x: Inputs, outputs: Collection[str] = OUTPUTS) -> dict[str, Pair]:
    """Per output, (value, magnitude) in float64, canonical layout: the magnitude is the same
    sum taken over absolute values of its terms (see :func:`magnitudes`)."""
    if x.score_mod is not None:
        return _truth_modified(x, outputs)
    b, h, n_q, d_k = x.q.shape
    k, v = (np.repeat(a, x.group, axis=1) for a in (x.k, x.v))
    q, k, d = _with_bias_features(x, k)
    stretch = x.scale * np.sqrt(d)  # the statements' scale is 1/sqrt(d)
    arrays = {"Q": _flat(q * stretch), "K": _flat(k), "V": _flat(v), "G": _flat(x.g),
              "M": _flat(x.keep.astype(np.float64))}
    sizes = {"batch": b * h, "n_q": n_q, "n_k": k.shape[2], "d_k": d, "d_v": v.shape[3]}
    sizes_of_terms = magnitudes(x)
    result: dict[str, Pair] = {}
    for name in outputs:
        value = np.asarray(_statements()[name](np, arrays, sizes))
        value = value.reshape(b, h, *value.shape[1:]) * (stretch if name == "dq" else 1.0)
        if name in ("dq", "dk"):
            value = value[..., :d_k]  # the bias's features are not inputs
        if name in ("dk", "dv"):
            value = _sum_groups(value, x.group)
        result[name] = (value, sizes_of_terms[name])
    return _with_lse_path(x, result, k)


@functools.cache
def _softmax_statements() -> dict[str, Compiled]:
    """The masked softmax A, the output O and dS = ∂L/∂S of the masking statements, with the
    scores S an input: where a score modification sits between the scores and the softmax."""
    from attnproof import Defined, masked_softmax
    from attnproof.numeric import compile_expression
    from attnproof.theorems import attention_backward as bw
    from attnproof.theorems import masking as mk

    i, j, n, b = mk.i, mk.j, mk.n, mk.b
    a = Defined("A", (i, j), masked_softmax(mk.S[i, j], mk.M[i, j], j))
    o = Defined("O", (i, b), bw.total(a[i, j] * bw.V[j, b], j))
    ds = Defined("dS", (i, j), a[i, j] * (bw.dA[i, j] - bw.total(a[i, n] * bw.dA[i, n], n)))
    return {
        "weights": compile_expression(a[i, j], (i, j), inputs=(mk.S, mk.M), definitions=(a,)),
        "out": compile_expression(o[i, b], (i, b), inputs=(mk.S, bw.V, mk.M),
                                  definitions=(a, o)),
        "ds": compile_expression(ds[i, j], (i, j), inputs=(mk.S, bw.V, bw.G, mk.M),
                                 definitions=(a, bw.dA, ds)),
    }


def _truth_modified(x: Inputs, outputs: Collection[str]) -> dict[str, Pair]:
    """The truth under a score modification f: O and dS at the modified scores f(S) from the
    statements, and dQ, dK by the chain rule through f' (the derivative of the declared f)."""
    b, h, n_q, _ = x.q.shape
    k, v = (np.repeat(a, x.group, axis=1) for a in (x.k, x.v))
    # ``truth`` calls this only for an instance with a score modification
    assert x.score_mod is not None
    modified, slope = x.score_mod.on(_raw_scores(x, k))
    arrays = {"S": _flat(modified), "V": _flat(v), "G": _flat(x.g),
              "M": _flat(x.keep.astype(np.float64))}
    sizes = {"batch": b * h, "n_q": n_q, "n_k": k.shape[2], "d_v": v.shape[3]}
    compiled = _softmax_statements()

    def run(name: str) -> np.ndarray:
        value = np.asarray(compiled[name](np, arrays, sizes))
        return value.reshape(b, h, *value.shape[1:])

    ds = run("ds") * slope if set(outputs) & {"dq", "dk"} else None
    # ds is None only where neither dq nor dk is asked, whose lambdas are then never called
    values: dict[str, Callable[[], np.ndarray]] = {
        "out": lambda: run("out"),
        "dq": lambda: x.scale * np.einsum("bhqk,bhkd->bhqd", cast(np.ndarray, ds), k),
        "dk": lambda: _sum_groups(x.scale * np.einsum("bhqk,bhqd->bhkd", cast(np.ndarray, ds),
                                                      x.q), x.group),
        "dv": lambda: _sum_groups(np.einsum("bhqk,bhqd->bhkd", run("weights"), x.g), x.group),
    }
    sizes_of_terms = magnitudes(x)
    return _with_lse_path(x, {name: (values[name](), sizes_of_terms[name])
                              for name in outputs}, k, slope)


def _with_lse_path(x: Inputs, result: dict[str, Pair], k: np.ndarray,
                   slope: np.ndarray | None = None) -> dict[str, Pair]:
    """``result`` with the gradient through the lse added to dQ and dK, where the loss reads
    it (``x.g_lse``): d lse_i / d s_ij = a_ij (the softmax is the gradient of the lse), so
    dS gains a_ij g_lse_i (times f' under a score modification), and its magnitude the same
    over absolute values. dV does not see the lse."""
    if x.g_lse is None or not set(result) & {"dq", "dk"}:
        return result
    a = np.asarray(_softmax_statements()["weights"](
        np, {"S": _flat(_scores(x, k)), "M": _flat(x.keep.astype(np.float64))},
        {"batch": x.q.shape[0] * x.q.shape[1], "n_q": x.q.shape[2], "n_k": k.shape[2]}
    )).reshape(x.keep.shape)
    ds, size = a * x.g_lse[..., None], a * np.abs(x.g_lse[..., None])
    if slope is not None:
        ds, size = ds * slope, size * np.abs(slope)

    def dq(d: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return x.scale * np.einsum("bhqk,bhkd->bhqd", d, keys)

    def dk(d: np.ndarray, queries: np.ndarray) -> np.ndarray:
        return _sum_groups(x.scale * np.einsum("bhqk,bhqd->bhkd", d, queries), x.group)

    extra = {"dq": (dq(ds, k), dq(size, np.abs(k))), "dk": (dk(ds, x.q), dk(size, np.abs(x.q)))}
    return {name: (value + extra[name][0], magnitude + extra[name][1]) if name in extra
            else (value, magnitude) for name, (value, magnitude) in result.items()}


def sink_gradient(x: Inputs) -> Pair:
    """dL/ds_h of an instance whose last key is its sink (``Inputs.sink_key``): the masking
    statements' dS at the sink's score, summed over each head's rows (the sink's logit is that
    score in every row of its head), as (value, magnitude), each (1, h, 1, 1). The catalog's
    sink_gradient states it, −Σ_rows p_sink Σ_b G_b o_b; the magnitude is the same sum over
    absolute values (:func:`magnitudes`' dS)."""
    b, h, n_q, _ = x.q.shape
    k, v = (np.repeat(a, x.group, axis=1) for a in (x.k, x.v))
    arrays = {"S": _flat(_scores(x, k)), "V": _flat(v), "G": _flat(x.g),
              "M": _flat(x.keep.astype(np.float64))}
    sizes = {"batch": b * h, "n_q": n_q, "n_k": k.shape[2], "d_v": v.shape[3]}
    ds = np.asarray(_softmax_statements()["ds"](np, arrays, sizes)).reshape(b, h, n_q, -1)
    a = _weights(x, k)
    da = np.einsum("bhqd,bhkd->bhqk", np.abs(x.g), np.abs(v))
    size = a[..., -1] * np.sum(a * da, axis=-1)  # the sink's value is 0: da at it is 0
    return (ds[..., -1].sum(axis=(0, 2))[None, :, None, None],
            size.sum(axis=(0, 2))[None, :, None, None])


def _with_bias_features(x: Inputs, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Q, K (K repeated over each group) and their feature count d, with the bias as n_q more
    features: s (q_i, e_i / s)·(k_j, B_:j) = s q_i·k_j + B_ij for the scale s."""
    d_k = x.q.shape[-1]
    if x.bias is None:
        return x.q, k, d_k
    n_q = x.q.shape[2]
    d = d_k + n_q
    unit = np.broadcast_to(np.eye(n_q) / x.scale, (*x.q.shape[:2], n_q, n_q))
    return (np.concatenate([x.q, unit], axis=-1),
            np.concatenate([k, np.swapaxes(x.bias, -1, -2)], axis=-1), d)


def magnitudes(x: Inputs) -> dict[str, np.ndarray]:
    """Each output's sums taken over the absolute values of their terms, with the exact weights:
    the size a rounding error is measured against when the value itself cancels (dQ of a
    saturated softmax is 0 while its terms are not)."""
    k, v = (np.repeat(a, x.group, axis=1) for a in (x.k, x.v))
    a = _weights(x, k)
    da = np.einsum("bhqd,bhkd->bhqk", np.abs(x.g), np.abs(v))
    ds = a * (da + np.sum(a * da, axis=-1, keepdims=True))
    if x.score_mod is not None:
        ds = ds * x.score_mod.slope_sensitivity(_raw_scores(x, k))
    return {"out": np.einsum("bhqk,bhkd->bhqd", a, np.abs(v)),
            "dq": x.scale * np.einsum("bhqk,bhkd->bhqd", ds, np.abs(k)),
            "dk": _sum_groups(x.scale * np.einsum("bhqk,bhqd->bhkd", ds, np.abs(x.q)), x.group),
            "dv": _sum_groups(np.einsum("bhqk,bhqd->bhkd", a, np.abs(x.g)), x.group)}


def condition(x: Inputs) -> dict[str, np.ndarray]:
    """Per row of each output, 1 + the largest |score| it depends on (scale Σ|q||k| over kept
    entries): rounding a score by eps relative to it moves its weight by that much relative
    (the softmax's condition). Query rows for out, dq and lse; key rows for dk and dv."""
    k = np.repeat(x.k, x.group, axis=1)
    sizes = abs(x.scale) * np.einsum("bhqd,bhkd->bhqk", np.abs(x.q), np.abs(k))
    if x.bias is not None:
        sizes = sizes + np.abs(x.bias)
    if x.score_mod is not None:  # a score's rounding passes through f', then f's own
        modified, slope = x.score_mod.on(_raw_scores(x, k))
        sizes = sizes * np.abs(slope) + np.abs(modified)
    sizes = np.where(x.keep, sizes, 0.0)
    per_query = 1.0 + np.max(sizes, axis=-1, initial=0.0)
    per_key = 1.0 + np.max(_max_groups(np.max(sizes, axis=-2, initial=0.0), x.group), axis=2)
    per_head = np.max(per_query, axis=(0, 2))[None, :, None]
    return {"out": per_query, "dq": per_query, "lse": per_query, "dk": per_key, "dv": per_key,
            SINK_GRADIENT: per_head}


def _max_groups(array: np.ndarray, group: int) -> np.ndarray:
    b, h = array.shape[:2]
    return array.reshape(b, h // group, group, *array.shape[2:])


def _weights(x: Inputs, k: np.ndarray) -> np.ndarray:
    """Masked softmax weights in float64; a fully masked row gets zeros."""
    keep = x.keep
    s = np.where(keep, _scores(x, k), -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    e = np.where(keep, np.exp(s - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def truth_lse(x: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """log Σ_kept exp(s) per query row (-inf for a fully masked row), and its scale: the
    largest |kept score| of the row, plus 1."""
    scores = np.where(x.keep, _scores(x, np.repeat(x.k, x.group, axis=1)), -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        lse = np.log(np.sum(np.exp(scores - safe), axis=-1)) + safe[..., 0]
    return lse, 1.0 + np.max(np.where(x.keep, np.abs(scores), 0.0), axis=-1)


def _flat(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1, *array.shape[2:])


def _sum_groups(array: np.ndarray, group: int) -> np.ndarray:
    b, h = array.shape[:2]
    return array.reshape(b, h // group, group, *array.shape[2:]).sum(axis=2)


def _raw_scores(x: Inputs, k: np.ndarray) -> np.ndarray:
    """The scores in float64, bias included (k repeated over each group)."""
    scores = x.scale * np.einsum("bhqd,bhkd->bhqk", x.q, k)
    return scores if x.bias is None else scores + x.bias


def _scores(x: Inputs, k: np.ndarray) -> np.ndarray:
    """The scores the softmax sees: modified when the kernel modifies them."""
    scores = _raw_scores(x, k)
    return scores if x.score_mod is None else x.score_mod.on(scores)[0]


# -- the plain reference at a declared precision -------------------------------------------------


def reference(x: Inputs, compute: Format, output: Format,
              outputs: Collection[str] = OUTPUTS) -> dict[str, np.ndarray]:
    """Plain masked attention, forward and backward, every operation rounded to ``compute``
    (accumulating in float32 below float64, as hardware does), every result to ``output``.
    In TensorFloat-32 the operands of each matrix product are rounded to it and everything
    else is float32, as on tensor cores.

    A fully masked row gets zero weights, as in the truth."""
    # a precision finer than float32 (float64, or a probe of more bits) accumulates in float64
    finer = compute.precision > FLOAT32.precision
    work = np.float64 if finer else np.float32
    elementwise = FLOAT32 if compute is TENSORFLOAT32 else compute

    def r(a: np.ndarray) -> np.ndarray:
        return rounded(a, elementwise).astype(work)

    def product(spec: str, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """A matrix product: operands in the compute precision, accumulated in ``work``."""
        return r(np.einsum(spec, rounded(left, compute).astype(work),
                           rounded(right, compute).astype(work)))

    q, k, v, g = (r(a) for a in (x.q, np.repeat(x.k, x.group, 1), np.repeat(x.v, x.group, 1),
                                 x.g))
    scale = r(np.asarray(x.scale))
    s = r(scale * product("bhqd,bhkd->bhqk", q, k))
    if x.bias is not None:
        s = r(s + r(x.bias))
    slope = None
    if x.score_mod is not None:
        modified, slope = x.score_mod.on(s)
        s, slope = r(modified), r(slope)
    top = np.max(np.where(x.keep, s, -np.inf), axis=-1, keepdims=True)
    shifted = np.where(x.keep, r(s - np.where(np.isfinite(top), top, 0)), 0)  # masked: unused
    e = np.where(x.keep, r(np.exp(shifted)), 0).astype(work)
    total = r(np.sum(e, axis=-1, keepdims=True))
    a = r(e / np.where(total > 0, total, 1))
    values = {"out": product("bhqk,bhkd->bhqd", a, v)}
    if "lse" in outputs:
        with np.errstate(divide="ignore"):
            values["lse"] = r(r(np.log(total)) + top)[..., 0]
    if set(outputs) & {"dq", "dk", "dv", SINK_GRADIENT}:
        da = product("bhqd,bhkd->bhqk", g, v)
        centred = r(da - r(np.sum(r(a * da), axis=-1, keepdims=True)))
        if x.g_lse is not None:  # d lse / d s = a: the lse's upstream gradient joins dA's
            centred = r(centred + r(x.g_lse)[..., None])
        ds = r(a * centred)
        if slope is not None:
            ds = r(ds * slope)
        values["dq"] = r(scale * product("bhqk,bhkd->bhqd", ds, k))
        values["dk"] = _sum_groups(r(scale * product("bhqk,bhqd->bhkd", ds, q)), x.group)
        values["dv"] = _sum_groups(product("bhqk,bhqd->bhkd", a, g), x.group)
        if x.sink_key:  # the sink's score's gradient, summed over its head's rows
            values[SINK_GRADIENT] = r(np.sum(ds[..., -1], axis=(0, 2)))[None, :, None, None]
    return {name: rounded(values[name], output) for name in outputs}
