"""Calling a kernel on one instance: its arrays in the kernel's layouts and memory, its
keywords (scale, masks, bias, causal flag, soft-capping), and its outputs read back as
canonical float64 arrays."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from attnproof.symbolic import format_named

from . import _packed as packed
from . import _paged as paged
from . import _windows as windows
from ._cases import Case, padding_lengths
from ._declaration import (
    Kernel,
    Refused,
    from_layout,
    layout_shape,
    normalized_layout,
    to_layout,
)
from ._frameworks import Framework, rounded
from ._programs import called_at
from ._truth import SINK_GRADIENT, Inputs
from ._warnings import raised_by_kernel

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._frameworks import Array


class LayoutMismatch(Exception):
    pass


def call(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format, device: str,
         outputs: Collection[str]) -> dict[str, np.ndarray]:
    """The kernel's outputs as canonical float64 arrays (out, lse, dq, dk, dv as asked), in
    the canonical conventions: query heads grouped (h // group), lse in base e. A packed
    kernel gets the batch's elements as sequences of one length, end to end."""
    if kernel.packed is not None:
        sequences, packing = packed.of_batch(x)
        outputs_of = call_packed(kernel, fw, sequences, packing, case, dtype, device,
                                 outputs)[0]
        return packed.stacked(outputs_of)
    heads = _kernel_heads(kernel, x)
    got = _called(kernel, fw, with_query_heads(x, heads), case, dtype, device, outputs)
    return _canonical(kernel, got, heads)


def call_packed(kernel: Kernel, fw: Framework, sequences: list[Inputs],
                packing: packed.Packing, case: Case, dtype: Format, device: str,
                outputs: Collection[str]
                ) -> tuple[list[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """A packed kernel's outputs for each non-empty sequence (canonical, a batch of one each),
    and the gradients it gave the slack tokens, from one call on the sequences end to end."""
    why = packed.unaskable(kernel, packing)
    if why is not None:
        raise Refused(why)
    heads = _kernel_heads(kernel, sequences[0])
    whole = packed.packed([with_query_heads(s, heads) for s in sequences], packing, dtype)
    got = _called(kernel, fw, whole, case, dtype, device, outputs,
                  packed.keywords(kernel, fw, packing, device))
    got = _canonical(kernel, got, heads)
    shared = {name: got.pop(name) for name in (SINK_GRADIENT,) if name in got}
    return [{**one, **shared} for one in packed.per_sequence(got, packing)], \
        packed.in_slack(got, packing)


def _canonical(kernel: Kernel, got: dict[str, np.ndarray],
               heads: np.ndarray | None) -> dict[str, np.ndarray]:
    if "lse" in got and kernel.lse_base == "2":
        got["lse"] = got["lse"] * np.log(2.0)  # log2 of the sum, read as its natural log
    return {name: value if name in ("dk", "dv") else _heads_back(value, heads)
            for name, value in got.items()}


def _kernel_heads(kernel: Kernel, x: Inputs) -> np.ndarray | None:
    """The canonical query head at each of the kernel's head positions, where its head mapping
    is not the canonical one: an interleaved kernel's head h reads K/V head h % kv_heads,
    which is canonical head (h % kv_heads)·group + h // kv_heads (None: the same order)."""
    kv_heads, group = x.k.shape[1], x.group
    if kernel.gqa_mapping == "grouped" or group == 1:
        return None
    h = np.arange(x.q.shape[1])
    return (h % kv_heads) * group + h // kv_heads


def with_query_heads(x: Inputs, heads: np.ndarray | None) -> Inputs:
    """``x`` with the query heads ``heads`` in that order (the kernel's head order, or some
    of the heads), each array indexed by query head taken along (None: ``x`` as it is)."""
    if heads is None:
        return x
    given = {name: value[:, heads] if name in ("bias", "mask") else value
             for name, value in (x.given or {}).items()}
    return dataclasses.replace(
        x, q=x.q[:, heads], keep=x.keep[:, heads], g=x.g[:, heads], given=given or x.given,
        bias=None if x.bias is None else np.asarray(x.bias)[:, heads],
        sinks=None if x.sinks is None else x.sinks[heads])


def _heads_back(value: np.ndarray, heads: np.ndarray | None) -> np.ndarray:
    if heads is None:
        return value
    canonical = np.empty_like(value)
    canonical[:, heads] = value
    return canonical


def _called(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format, device: str,
            outputs: Collection[str], extra: dict[str, Any] | None = None
            ) -> dict[str, np.ndarray]:
    put = {a: _placed(fw, to_layout(x.passed(a), letters_of(kernel, a)), dtype, device,
                      case.memory, "qkv".index(a), letters_of(kernel, a))
           for a in ("q" if kernel.paged else "qkv")}
    if kernel.paged is not None:  # K and V in pages of a cache, found through a block table
        k_cache, v_cache, layout = paged.arrays(kernel, x, case, dtype)
        put.update(k=fw.put(k_cache, dtype.storage, device),
                   v=fw.put(v_cache, dtype.storage, device))
        extra = {**(extra or {}), **paged.keywords(kernel, fw, layout, device)}
    keywords = {**_keywords(kernel, fw, x, case, dtype, device), **(extra or {})}
    forward = fw.bind(kernel.fn, keywords, kernel.mode)
    called_at(x.q.shape, x.k.shape, x.v.shape)

    with raised_by_kernel():  # counted for the report, not printed over the matrix
        result = forward(put["q"], put["k"], put["v"])
    out, lse = _pair(result) if kernel.returns_lse else (result, None)
    b, h, n_q, _ = x.q.shape
    got = {"out": read(fw, out, kernel, "out", (b, h, n_q, x.v.shape[3]))}
    if lse is not None:
        got["lse"] = read(fw, lse, kernel, "lse", (b, h, n_q, 1))[..., 0]
    if set(outputs) & {"dq", "dk", "dv"}:
        g: Array | tuple[Array, Array] = fw.put(to_layout(x.g, letters_of(kernel, "out")),
                                                dtype.storage, device)
        if x.g_lse is not None:  # the loss reads the lse too: a cotangent for each output
            lse_letters = letters_of(kernel, "lse")
            g = (g, fw.put(to_layout(x.g_lse[..., None], lse_letters)[..., 0], dtype.storage,
                           device))
        with raised_by_kernel():
            grads = _gradients(kernel, fw, keywords, put, g)
        for name, arg, like in zip(("dq", "dk", "dv"), "qkv", (x.q, x.k, x.v), strict=True):
            got[name] = read(fw, grads[("dq", "dk", "dv").index(name)], kernel, arg, like.shape)
        if SINK_GRADIENT in outputs and x.sinks is not None:
            with raised_by_kernel():
                dsinks = _sink_gradient(kernel, fw, keywords, put, g, grads)
            if dsinks is not None:
                got[SINK_GRADIENT] = _read_sink_gradient(fw, dsinks, x.q.shape[1])
    return got


def _sink_gradient(kernel: Kernel, fw: Framework, keywords: dict[str, Any],
                   put: dict[str, Array], g: Array | tuple[Array, Array],
                   grads: Sequence[Array]) -> Array | None:
    """dL/ds of the kernel's sinks for the output gradient ``g``: by the framework's autodiff of
    one call with the sinks a primal beside q, k, v (the call as it stands, not under the
    checker's jit: its sinks are what is differentiated), or the fourth of ``grads``, what the
    kernel's own backward returned (None where it returned three: it gives no sink gradient)."""
    name = kernel.sinks_argument
    if kernel.gradients != "autodiff":
        return grads[3] if isinstance(grads, tuple | list) and len(grads) == 4 else None
    # asked only of an instance with sinks, which only a kernel taking them gets (``as_declared``)
    assert name is not None
    others = {key: value for key, value in keywords.items() if key != name}
    first = _first_of_pair if kernel.returns_lse else _itself

    def loss(q: Array, k: Array, v: Array, sinks: Array) -> Array:
        return first(kernel.fn(q, k, v, **others, **{name: sinks}))

    # a kernel declared "autodiff" is of a framework that has it (``Kernel.__post_init__``)
    assert fw.vjp is not None
    return fw.vjp(loss, (put["q"], put["k"], put["v"], keywords[name]), g)[3]


def _read_sink_gradient(fw: Framework, array: object, heads: int) -> np.ndarray:
    """The kernel's dsinks, (heads,), as the canonical (1, heads, 1, 1)."""
    if not hasattr(array, "shape"):
        raise LayoutMismatch(f"dsinks: expected an array of shape ({heads},), got "
                             f"{_returned(array)}")
    value = fw.get(array)
    if value.shape != (heads,):
        raise LayoutMismatch(f"dsinks: expected shape ({heads},) (one per query head), got "
                             f"shape {tuple(value.shape)}")
    return value.reshape(1, heads, 1, 1)


def _gradients(kernel: Kernel, fw: Framework, keywords: dict[str, Any], put: dict[str, Array],
               g: Array | tuple[Array, Array]) -> Sequence[Array]:
    """dQ, dK, dV of the kernel at ``put``'s arrays for the output gradient ``g``: by the
    framework's autodiff of its forward, or by its own backward."""
    if kernel.gradients == "autodiff":
        # through O alone, or through the pair (O, lse) where ``g`` holds a cotangent of each
        first = _first_of_pair if kernel.returns_lse and not isinstance(g, tuple) else _itself
        return fw.gradients(kernel.fn, keywords, first, kernel.mode)(put["q"], put["k"],
                                                                      put["v"], g)
    # its own backward: dQ, dK, dV, and dsinks fourth where it gives them (gradients are
    # asked only of a kernel that has them, and the declaration makes them a callable then)
    backward = cast("Callable[..., Sequence[Array]]", kernel.gradients)
    return backward(put["q"], put["k"], put["v"], g, **keywords)


def _placed(fw: Framework, array: np.ndarray, dtype: Format, device: str, memory: str | None,
            slot: int, letters: str) -> Array:
    """``array`` (in the kernel's layout) as the kernel receives it: a packed array, or a view
    of other memory as ``memory`` says (slot 0, 1, 2 for q, k, v)."""
    if memory is None:
        return fw.put(array, dtype.storage, device)
    if memory == "fused_qkv":  # the slot-th third of a projection's features
        n = array.shape[-1]
        fused = np.random.default_rng(slot).standard_normal((*array.shape[:-1], 3 * n))
        fused[..., slot * n:(slot + 1) * n] = array
        return fw.put(fused, dtype.storage, device)[..., slot * n:(slot + 1) * n]
    stored = [letters.index("s"), *(i for i, c in enumerate(letters) if c != "s")]
    packed = fw.put(np.ascontiguousarray(np.transpose(array, stored)), dtype.storage, device)
    # views are drawn only where the framework has strides (``memory_layout``'s unsupported)
    permute = cast("Callable[[Array, list[int]], Array]", fw.permute)
    return permute(packed, [stored.index(i) for i in range(len(letters))])


def _first_of_pair(result: Sequence[Array]) -> Array:
    return result[0]


def _itself(result: Array) -> Array:
    return result


def letters_of(kernel: Kernel, argument: str) -> str:
    if argument == "lse":
        return normalized_layout(kernel.lse_layout + "d")
    return normalized_layout(kernel.layout_of(argument))


def _keywords(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: Format,
              device: str) -> dict[str, Any]:
    keywords = dict(kernel.keywords)
    if kernel.scale_argument is not None and case.scale is not None:
        keywords[kernel.scale_argument] = x.scale
    if kernel.dropout_argument is not None:
        keywords[kernel.dropout_argument] = 0.0
    kind = _mask_kind(kernel, case)
    bias = (x.given or {}).get("bias")
    # each keyword below is asked only of a kernel that declares it (``as_declared``, and each
    # property's ``unsupported``): its name is a str wherever it is used
    if case.causal_flag:
        keywords[cast(str, kernel.causal_argument)] = kernel.causal_value
    elif kernel.paged is None and (case.mask != "none" or case.empty_element is not None or
                                   (bias is not None and kind == "bias")):
        # (a paged kernel's padding is its key lengths, passed beside its block table)
        in_mask = bias if kind == "bias" else None
        keywords[kernel.mask_argument] = _mask(kernel, fw, x.passed("mask"), kind, in_mask,
                                               _mask_dtype(kernel, case, dtype), device)
    if bias is not None and kind != "bias":
        keywords[cast(str, kernel.bias_argument)] = fw.put(bias, dtype.storage, device)
    if case.softcap is not None:
        keywords[cast(str, kernel.softcap_argument)] = case.softcap
    if x.sinks is not None:  # one logit per query head, in the inputs' dtype
        keywords[cast(str, kernel.sinks_argument)] = fw.put(x.sinks, dtype.storage, device)
    if case.window_left is not None:  # (its two sides are given together: ``Case``)
        keywords[cast(str, kernel.window_argument)] = windows.keyword(
            kernel.window_form, case.window_left, cast(int, case.window_right))
    return keywords


def _mask_kind(kernel: Kernel, case: Case) -> str:
    return case.mask_kind or kernel.mask_kinds[0]


def _mask_dtype(kernel: Kernel, case: Case, dtype: Format) -> Format:
    """The format an additive mask is passed in: the inputs' unless the kernel or the case
    names another."""
    if kernel.mask_dtype == "inputs":
        return dtype
    named = kernel.mask_dtype or case.mask_dtype
    return dtype if named is None else format_named(named)


def _mask(kernel: Kernel, fw: Framework, keep: np.ndarray, kind: str, bias: np.ndarray | None,
          dtype: Format, device: str) -> Array:
    """The mask of ``kind``: the keep-mask itself, or -inf where it drops a key and the bias
    (or 0) where it keeps one."""
    if kind == "bool":
        return fw.put(keep, "bool", device)
    if kind == "lengths":
        return fw.put(key_lengths(keep), "int32", device)
    dropped = -np.inf if kernel.mask_fill == "-inf" else -dtype.largest
    return fw.put(np.where(keep, 0.0 if bias is None else bias, dropped), dtype.storage, device)



def key_lengths(keep: np.ndarray) -> np.ndarray:
    """Each batch element's key length, where ``keep`` is a padding mask (every row of every
    head keeps the keys before its element's length and no other); else the case is one a
    kernel taking lengths cannot be asked (``Refused``)."""
    lengths = padding_lengths(keep)
    padding = np.arange(keep.shape[-1]) < lengths[:, None, None, None]
    if not np.array_equal(keep, np.broadcast_to(padding, keep.shape)):
        raise Refused("the kernel takes key lengths, which say padding only: this mask is "
                      "not a padding mask")
    return lengths


def with_bias(kernel: Kernel, x: Inputs, case: Case, dtype: Format) -> Inputs:
    """``x`` with its drawn bias rounded to the format the kernel receives it in, and the term
    the scores get from it by the kernel's scale rule."""
    drawn = (x.given or {}).get("bias")
    if drawn is None:
        return x
    assert x.given is not None  # it holds the drawn bias
    kind = _mask_kind(kernel, case)
    passed = rounded(drawn, _mask_dtype(kernel, case, dtype) if kind == "bias" else dtype)
    added = passed * x.scale if kernel.bias_scaled else passed
    return dataclasses.replace(x, given={**x.given, "bias": passed}, bias=added)


def _pair(result: object) -> Sequence[Array]:
    """(out, lse) of a kernel declared ``returns_lse``: anything else is the wrong return."""
    if not isinstance(result, tuple | list) or len(result) != 2:
        raise LayoutMismatch(f"declared returns_lse: expected a pair (out, lse), got "
                             f"{_returned(result)}")
    return result


def read(fw: Framework, array: object, kernel: Kernel, argument: str,
         canonical: Sequence[int]) -> np.ndarray:
    letters = letters_of(kernel, argument)
    if not hasattr(array, "shape") or not hasattr(array, "dtype"):
        # the framework would read a list or None as an array (None as a NaN of shape ())
        raise LayoutMismatch(f"{argument}: expected an array, layout "
                             f"{_declared_layout(kernel, argument)!r}, shape "
                             f"{layout_shape(tuple(canonical), letters)}; got "
                             f"{_returned(array)}")
    value = fw.get(array)
    if argument == "lse" and value.ndim == len(letters) - 1:
        value = value[..., None]
    expected = layout_shape(tuple(canonical), letters)
    if value.shape != expected:
        raise LayoutMismatch(_layout_message(argument, kernel, letters, expected, value.shape,
                                             canonical))
    return from_layout(value, letters, tuple(canonical))


def _declared_layout(kernel: Kernel, argument: str) -> str:
    return kernel.lse_layout if argument == "lse" else kernel.layout_of(argument)


def _returned(value: object) -> str:
    """What a kernel returned, in words, where an array was expected."""
    if value is None:
        return "None (the kernel returned nothing)"
    if isinstance(value, tuple | list):
        return f"a Python {type(value).__name__} of {len(value)} item{'s' * (len(value) != 1)}"
    kind = type(value)
    return f"a {kind.__qualname__}" if kind.__module__ == "builtins" else \
        f"a {kind.__module__}.{kind.__qualname__}"


def _layout_message(argument: str, kernel: Kernel, letters: str, expected: tuple[int, ...],
                    actual: tuple[int, ...], canonical: Sequence[int]) -> str:
    import itertools

    readings = ["".join(p) for p in itertools.permutations(letters)
                if layout_shape(tuple(canonical), "".join(p)) == tuple(actual)]
    declared = _declared_layout(kernel, argument)
    guess = f", which reads as layout {' or '.join(map(repr, readings))}" if readings else ""
    return (f"{argument}: expected layout {declared!r}, shape {tuple(expected)}; got shape "
            f"{tuple(actual)}{guess}")
