"""The properties a kernel is checked for: one row each, with the cases that exercise it, the
outputs it compares, and when it does not apply."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from hypothesis import strategies as st

from . import _lengths as lengths
from . import _packed as packed
from . import _paged as paged
from . import _windows as windows
from ._batch import run_alone
from ._cases import (
    BIASES,
    GAPS,
    GARBAGE_ALLOWED,
    MEMORY,
    OFFSETS,
    SOFTCAPS,
    SWAMPING,
    TILES,
    Case,
    cases,
    offsets,
    tiled_cases,
)
from ._declaration import Kernel
from ._heads import heads_declared_wrongly, one_query_head_less
from ._run import read_causal_alignment
from ._shapes import kind
from ._sinks import SINKS
from ._split import merged_by_kernel, merged_halves
from ._truth import SINK_GRADIENT

if TYPE_CHECKING:
    import numpy as np

    from attnproof.symbolic import Format

    from ._frameworks import Framework
    from ._run import CaseResult
    from ._truth import Inputs

GRADIENTS = ("dq", "dk", "dv")


@dataclass(frozen=True)
class Property:
    """One property, one row: its cases, the outputs it compares, when it does not apply, and
    what a case of it runs beyond the kernel's own call (``_run`` reads these fields and asks
    nothing else of a property)."""

    name: str
    title: str
    cases: Callable[[Kernel], st.SearchStrategy[Case]]
    outputs: Callable[[Kernel], tuple[str, ...]]
    unsupported: Callable[[Kernel], str | None] = lambda kernel: None
    # cases every search begins with, whatever it draws after: where a class of bug is known to
    # live, so that finding it never rests on the draws (which change with the seed); or a
    # function of the kernel giving them
    explicit: tuple[Case, ...] | Callable[[Kernel], tuple[Case, ...]] = ()
    # the outputs judged instead of the kernel's own call's, ``(kernel, fw, x, case, dtype,
    # device) -> outputs`` (a split-KV merge); the call still runs first, so a kernel that
    # raises on it is reported as raising
    outputs_instead: Callable[[Kernel, Framework, Inputs, Case, Format, str],
                              dict[str, np.ndarray]] | None = None
    # a second run each case's outputs must equal within the rule, ``(kernel, fw, x, case,
    # dtype, device, outputs) -> outputs`` (each batch element run alone)
    run_beside: Callable[[Kernel, Framework, Inputs, Case, Format, str, Collection[str]],
                         dict[str, np.ndarray]] | None = None
    # the second run must be the same to the bit, not within the rule (a declared batch
    # invariance)
    beside_bitwise: bool = False
    # why a kernel that raised did, when its declaration explains it, ``(kernel, fw, case,
    # dtype, device) -> str | None`` (heads declared otherwise than the kernel takes them)
    explain_raise: Callable[[Kernel, Framework, Case, Format, str], str | None] | None = None
    # a twin of each case's instance the kernel must refuse, ``(x) -> (twin, why)``: a case
    # whose own call passes fails where the kernel answers the twin (a raise is the refusal)
    twin_refused: Callable[[Inputs], tuple[Inputs, str]] | None = None
    # the causal alignment the case's instance is built with (None: the kernel's declared one)
    alignment: str | None = None
    # a convention read from the outputs before they are judged, ``(kernel, x, got, dtype,
    # compute, conventions) -> (x, verdict or None)``: the instance to judge against, or the
    # case's verdict (which causal alignment the kernel follows)
    convention: Callable[[Kernel, Inputs, dict[str, np.ndarray], Format, Format,
                                  dict[str, str]],
                         tuple[Inputs, CaseResult | None]] | None = None
    # the loss reads the returned lse too: each case gets an upstream gradient of the lse,
    # and the kernel's gradients are taken through both of its outputs
    lse_cotangent: bool = False
    # the catalog theorems the property's truth comes from, beyond the masked attention of
    # theorems/masking.py every property's truth is (a test holds each name to the catalog)
    theorems: tuple[str, ...] = ()
    # a twin of each case at another length whose precision estimate the case's must not
    # differ from past what summation order explains, ``(case) -> case`` (``_lengths``)
    length_twin: Callable[[Case], Case] | None = None

    def strategy(self, kernel: Kernel) -> st.SearchStrategy[Case]:
        """The cases drawn for ``kernel``, each as its declaration lets it be asked."""
        return self.cases(kernel).map(lambda case: as_declared(kernel, case))

    def explicit_cases(self, kernel: Kernel) -> tuple[Case, ...]:
        """The cases every search begins with, each as ``kernel``'s declaration lets it be
        asked."""
        explicit = self.explicit(kernel) if callable(self.explicit) else self.explicit
        return tuple(as_declared(kernel, case) for case in explicit)

    def plain(self) -> Property:
        """This property's cases run as plain calls, judged against the truth alone."""
        return dataclasses.replace(self, outputs_instead=None, run_beside=None,
                                   beside_bitwise=False, lse_cotangent=False,
                                   explain_raise=None, twin_refused=None, alignment=None,
                                   convention=None, length_twin=None)


def as_declared(kernel: Kernel, case: Case) -> Case:
    """``case`` as ``kernel``'s declaration lets it be asked, in the call itself and in every
    earlier call of its history: a field the declaration fixes is fixed in every draw of every
    property, one place for all of them (``tests/kernels/test_declaration_binds.py`` walks every
    property × every field). A kernel with no scale keyword is judged at 1/√d_k, the scale it
    always uses; one with no soft-capping keyword is never asked to cap; one that requires
    d_v = d_k gets it; one that is always causal is judged causal in every case; one with no
    sinks or window keyword is never asked for either, and a window is asked in the form the
    kernel takes (symmetric: right = left; by its size: right = 0). (Heads and
    masks a kernel does not take are each property's to refuse: n/a, never a case.)"""
    changes: dict[str, Any] = {}
    if kernel.always_causal:  # no switch: causal in every call, beside any mask it takes
        changes.update(causal_too=True, causal_flag=False,
                       mask="none" if case.mask == "causal" else case.mask)
    if kernel.scale_argument is None and case.scale is not None:
        changes["scale"] = None
    if kernel.softcap_argument is None and case.softcap is not None:
        changes["softcap"] = None
    if kernel.equal_head_dims and case.d_v != case.d_k:
        changes["d_v"] = case.d_k
    if not kernel.takes_sinks and case.sinks is not None:
        changes["sinks"] = None
    if case.window_left is not None:
        left, right = (None, None) if not kernel.takes_window else \
            windows.in_form(kernel.window_form, case.window_left,
                            cast(int, case.window_right))  # (given together: ``Case``)
        changes.update(window_left=left, window_right=right)
    if kernel.packed is None and case.packed is not None:
        changes.update(packed=None, slack=0)
    if kernel.paged is None and (case.page_size, case.cache) != (None, None):
        changes.update(page_size=None, cache=None)
    elif case.page_size is not None and case.page_size not in kernel.page_sizes:
        changes["page_size"] = kernel.page_sizes[0]
    if case.history:
        changes["history"] = tuple((dtype, as_declared(kernel, call))
                                   for dtype, call in case.history)
    return dataclasses.replace(case, **changes) if changes else case


def _everything(kernel: Kernel) -> tuple[str, ...]:
    return (*_forward(kernel), *(GRADIENTS if kernel.has_gradients else ()))


def _with_sink_gradient(kernel: Kernel) -> tuple[str, ...]:
    """Everything, and dL/ds of the sinks wherever the kernel has gradients."""
    return (*_everything(kernel), *((SINK_GRADIENT,) if kernel.has_gradients else ()))


def _forward(kernel: Kernel) -> tuple[str, ...]:
    """The output, and the log-sum-exp wherever the kernel returns one."""
    return ("out", "lse") if kernel.returns_lse else ("out",)


def _needs_gradients(kernel: Kernel) -> str | None:
    return None if kernel.has_gradients else "no gradients declared"


def _lse_differentiable(kernel: Kernel) -> str | None:
    """Why the kernel's gradients cannot be taken through its lse, if they cannot."""
    if not kernel.returns_lse:
        return "returns no log-sum-exp"
    if kernel.gradients != "autodiff":
        return "no autodiff: its own backward takes no lse cotangent"
    return None


def _needs_mask(kernel: Kernel) -> str | None:
    return None if kernel.takes_mask else "takes no mask"


def _needs_mask_or_causal(kernel: Kernel) -> str | None:
    if kernel.takes_mask or kernel.takes_causal or kernel.always_causal:
        return None
    return "takes no mask nor causal flag"


def _needs_causal(kernel: Kernel) -> str | None:
    return None if kernel.takes_causal or kernel.always_causal else "takes no causal flag"


def _causal(kernel: Kernel) -> dict[str, st.SearchStrategy[Any]]:
    return {"mask": st.just("causal"), "causal_flag": st.just(kernel.takes_causal)}


def _any_mask(kernel: Kernel, kinds: tuple[str, ...] = ("random", "first_block", "padding",
                                                        "causal")) -> st.SearchStrategy[str]:
    """One of ``kinds`` the kernel can be asked for (a causal one by its flag when it takes no
    mask), or none: listed last, as Hypothesis's first draws favour a list's first entries and
    the failures these properties look for need a mask."""
    usable = [k for k in kinds if kernel.takes_mask or (k == "causal" and kernel.takes_causal)]
    return st.sampled_from((*usable, "none"))


def _garbage(kernel: Kernel) -> st.SearchStrategy[str]:
    """What fills the unused K/V entries: anything (NaN and ±inf included), finite values only
    (the format's largest among them), or values of the inputs' own scale, as the kernel
    declares (``masked_inputs``)."""
    return st.sampled_from(GARBAGE_ALLOWED[kernel.masked_inputs])


def _merge_masks(kernel: Kernel) -> st.SearchStrategy[str]:
    """Rows that keep no key of one half (its lse is -inf) most often, and other masks."""
    if not kernel.takes_mask:
        return st.just("none")
    return st.sampled_from(("half_masked", "half_masked", "none", "random", "padding",
                            "fully_masked"))


def _has_strides(kernel: Kernel) -> str | None:
    from ._frameworks import framework

    if framework(kernel.framework).permute is None:
        return f"{kernel.framework} arrays have no strides to vary"
    return None


def _halves_run_alone(kernel: Kernel) -> str | None:
    """Why the keys cannot be split in two and each half run alone, if they cannot."""
    if not kernel.returns_lse:
        return "returns no log-sum-exp"
    modification = kernel.modification()
    if modification is not None and modification.reads_positions:
        return "its score_mod reads positions, which a half of the keys sees shifted"
    return None


# (n_q, n_k) small or at a block edge, never both past 257 (the ladder's edge rungs): a case
# costs n_q n_k, and a bug at one axis's edge needs only that axis there (many rows against
# 1,023 keys still come: an accumulation error 4 rows may miss shows there, measured on MLX at
# 63 x 1023)
BLOCK_EDGE_SHAPES = kind(lengths="any", batch=(1, 1), kv_heads=(1, 1), n=(1, 1025), d=(1, 4))


def _gradient(name: str, title: str) -> Property:
    return Property(f"backward_{name}", title, lambda k: cases(), lambda k: (name,),
                    _needs_gradients)


def _masked_lengths(kernel: Kernel) -> st.SearchStrategy[str]:
    return st.sampled_from(("none", "padding") if kernel.takes_mask else ("none",))


OTHER_MASK_DTYPES = ("float32", "float64")


def _takes_float_masks_of_any_dtype(kernel: Kernel) -> bool:
    return bool({"additive", "bias"} & set(kernel.mask_kinds)) and kernel.mask_dtype is None


def _other_mask_dtypes(kernel: Kernel) -> st.SearchStrategy[str | None]:
    """A float mask sometimes comes in float32 or float64 whatever the scores' dtype."""
    if not _takes_float_masks_of_any_dtype(kernel):
        return st.none()
    return st.sampled_from((None, *OTHER_MASK_DTYPES))


def _mask_dtype_explicit(kind: str | None = None,
                         **fields: Any) -> Callable[[Kernel], tuple[Case, ...]]:
    """A float mask (of ``kind``, else the kernel's additive or bias one) in each of float32 and
    float64, whatever the scores' dtype, before any draw: where dtype-promotion bugs live (the
    mask cast to the scores' dtype, or the scores to the mask's), so that finding one never
    rests on the draws."""
    def explicit(kernel: Kernel) -> tuple[Case, ...]:
        if not _takes_float_masks_of_any_dtype(kernel):
            return ()
        mask_kind = kind or ("additive" if "additive" in kernel.mask_kinds else "bias")
        return tuple(Case(n_q=3, n_k=5, mask="random", mask_kind=mask_kind,
                          mask_dtype=mask_dtype, seed=seed, **fields)
                     for seed, mask_dtype in enumerate(OTHER_MASK_DTYPES))

    return explicit


def _mask_kinds(kernel: Kernel) -> st.SearchStrategy[str]:
    """Each mask kind the kernel takes (it tells them apart by their dtype)."""
    return st.sampled_from(kernel.mask_kinds)


def _batch_masks(kernel: Kernel, kinds: tuple[str, ...]) -> st.SearchStrategy[str]:
    """The masks of a batch: ``kinds`` where the kernel takes a mask, else causal through its
    flag where it has one, else none."""
    if kernel.takes_mask:
        return st.sampled_from(kinds)
    return st.just("causal" if kernel.takes_causal else "none")


def batch_cases(kernel: Kernel) -> st.SearchStrategy[Case]:
    """Batches of 2 to 4 elements, one of them of length zero (every key masked) wherever the
    kernel takes a mask, the others padded or randomly masked; sometimes every row offset
    (its own constant per row, so the elements' scores lie thousands apart at ±1e4). No
    garbage in unused K/V: an element of length zero has only fully masked rows, whose output
    is a convention (the mean of V, say) that garbage would reach by design; what garbage
    does is ``masked_garbage``'s to find."""
    masks = _batch_masks(kernel, ("padding", "random", "first_block"))

    def with_empty(case: Case) -> st.SearchStrategy[Case]:
        if not kernel.takes_mask:
            return st.just(case)
        chosen = st.one_of(st.integers(0, case.batch - 1), st.none())
        return chosen.map(lambda e: dataclasses.replace(case, empty_element=e))

    lengths = "any" if kernel.takes_mask else "equal"
    return cases(where=kind(lengths=lengths, batch=(2, 4)), mask=masks,
                 causal_flag=st.just(kernel.takes_causal and not kernel.takes_mask),
                 offset=st.one_of(st.none(), st.sampled_from(OFFSETS))).flatmap(with_empty)


def _batch_explicit(kernel: Kernel) -> tuple[Case, ...]:
    """An element of length zero first, in the middle and last, beside elements with several
    heads whose scores lie thousands apart (rows offset by about 1e4, each its own)."""
    if not kernel.takes_mask:
        return ()
    return tuple(Case(n_q=2, n_k=3, batch=batch, heads=2, kv_heads=2, mask="padding",
                      empty_element=empty, offset="1e4", seed=seed)
                 for seed, (batch, empty) in enumerate(((2, 0), (3, 1), (2, 1))))


def invariance_cases(kernel: Kernel) -> st.SearchStrategy[Case]:
    """Batches of 2 to 4 elements with swamping values in V (``_cases.SWAMPING``: any other
    order of summation shows in the bits), padded or randomly masked where the kernel takes a
    mask. Each element is run alone beside the batch, and Hypothesis shrinks the batch's size,
    shape and values towards the fewest elements that still tell the two apart."""
    masks = _batch_masks(kernel, ("none", "padding", "random"))
    return cases(where=kind(lengths="any", batch=(2, 4)), mask=masks, fill=st.just(SWAMPING),
                 causal_flag=st.just(kernel.takes_causal and not kernel.takes_mask))


def _invariance_explicit(kernel: Kernel) -> tuple[Case, ...]:
    """Decode (one query over hundreds of keys, batches of 2 and 4) and a prefill of a few
    blocks: where split-KV kernels choose how many splits to run from the batch size, to fill
    the device, and so sum each element's keys in another order as the batch grows."""
    return tuple(Case(n_q=n_q, n_k=n_k, d_k=d, d_v=d, batch=batch, fill=SWAMPING, seed=seed)
                 for seed, (n_q, n_k, d, batch) in enumerate(((1, 257, 64, 4), (1, 1025, 8, 2),
                                                              (16, 129, 8, 2))))


SCALES = (None, 0.5, 1.0, 2.0)


def history_cases(kernel: Kernel) -> st.SearchStrategy[Case]:
    """A call, and 1 to 4 calls made before it on the same kernel object: the same shapes at
    another scale, another dtype or another mask, or other shapes altogether (Hypothesis
    shrinks such a sequence to the fewest calls that still fail: two, when one call leaves
    the kernel in a state that spoils the next)."""
    masks = ("random", "padding", "none") if kernel.takes_mask else ("none",)
    scales = SCALES if kernel.scale_argument is not None else (None,)
    base = cases(mask=st.sampled_from(masks), scale=st.sampled_from(scales))

    def earlier(call: Case) -> st.SearchStrategy[Case]:
        variations = st.one_of(
            st.sampled_from(scales).map(lambda s: dataclasses.replace(call, scale=s)),
            st.sampled_from(masks).map(lambda m: dataclasses.replace(call, mask=m)),
            cases(mask=st.sampled_from(masks), scale=st.sampled_from(scales)))
        return st.lists(st.tuples(st.sampled_from(kernel.dtypes), variations), min_size=1,
                        max_size=4).map(lambda calls: dataclasses.replace(call,
                                                                          history=tuple(calls)))

    return base.flatmap(earlier)


def _bias_mask_dtype_explicit(kernel: Kernel) -> tuple[Case, ...]:
    """The bias property's: a bias in a float mask of each other dtype (by the kernel's way of
    taking a bias)."""
    kind = _bias_mask_kind(kernel)
    if kernel.takes_bias and kind in ("additive", "bias"):
        return _mask_dtype_explicit(kind, bias=BIASES[0])(kernel)
    return ()


def _bias_mask_kind(kernel: Kernel) -> str:
    """The bias goes in the mask when the kernel takes a bias mask, else by its own keyword."""
    return "bias" if "bias" in kernel.mask_kinds else kernel.mask_kinds[0]


def _bias_kind(kernel: Kernel) -> st.SearchStrategy[str]:
    return st.just(_bias_mask_kind(kernel))


def _gap_explicit() -> tuple[Case, ...]:
    """The halves' log-sum-exps apart by more than exp's range (each way) and by 10⁴, before
    any draw: where a merge that weights the halves by exp(lse) without subtracting the larger
    one overflows, so that finding it never rests on the draws."""
    return tuple(Case(n_q=2, n_k=5, heads=2, kv_heads=2, offset=gap, seed=seed)
                 for seed, gap in enumerate(("gap:overflow", "gap:-overflow", "gap:1e4")))


def _needs_sinks(kernel: Kernel) -> str | None:
    if not kernel.takes_sinks:
        return "takes no sinks"
    if kernel.score_mod is not None:
        return "its score_mod would modify the sink as a score, which sinks are not"
    return None


def sink_cases(kernel: Kernel) -> st.SearchStrategy[Case]:
    """Sinks comparable to the rows' Σe^s (they bind), far above them, far below them (they
    do not: a kernel ignoring them conforms there) or mixed per head, at several heads and
    batch elements (each head its own sink) and grouped heads where declared, with masks
    (a kernel dropping its sink where a mask is given), fully masked rows (whose weight all
    goes to the sink) and rows offset."""
    return cases(sinks=st.sampled_from(SINKS),
                 where=kind(lengths="any", batch=(1, 3), group=(1, 2 if kernel.gqa else 1)),
                 mask=_any_mask(kernel, ("random", "padding", "fully_masked", "causal")),
                 causal_flag=st.just(not kernel.takes_mask),
                 offset=st.one_of(st.none(), st.sampled_from(("1e4", "-1e4"))))


def _sink_explicit(kernel: Kernel) -> tuple[Case, ...]:
    """Sinks that bind, at two heads and two batch elements (the head a row reads its sink
    from), alone and under a mask; where the kernel shares K/V heads, four query heads over
    one K/V head, each with a sink of its own (a sink read by the K/V head, or by
    ``row % heads``, is one sink for all four), which the shape ladder's draws may miss."""
    masks = ("none", "random") if kernel.takes_mask else ("none",)
    bound = tuple(Case(n_q=3, n_k=5, batch=2, heads=2, kv_heads=2, sinks="comparable", mask=m,
                       seed=seed) for seed, m in enumerate(masks))
    shared = (Case(n_q=3, n_k=5, heads=4, kv_heads=1, sinks="comparable", seed=len(bound)),) \
        if kernel.shares_one_kv_head else ()
    return bound + shared


def _underflowing_lse(seed: int = 0, **fields: Any) -> Case:
    """A case whose kept rows all lie 10⁴ below zero: their log-sum-exp is below −88, where
    exp of it underflows float32 and an lse a kernel keeps in float32 must stay finite."""
    return Case(n_q=3, n_k=5, offset="-1e4", seed=seed, **fields)


def _needs_window(kernel: Kernel) -> str | None:
    return None if kernel.takes_window else "takes no sliding window"


def window_cases(kernel: Kernel) -> st.SearchStrategy[Case]:
    """Windows shorter than the sequence (``_windows.windows``), n_q ≠ n_k only where the
    kernel declares its alignment, with masks, causal flags and offsets beside them."""
    lengths = "equal" if kernel.causal_alignment is None else "any"
    base = cases(where=kind(lengths=lengths, n=(1, 129), d=(1, 8)),
                 mask=_any_mask(kernel), causal_flag=st.just(kernel.takes_causal
                                                             and not kernel.takes_mask),
                 offset=st.one_of(st.none(), st.sampled_from(("1e4", "-1e4"))))

    def windowed(case: Case) -> st.SearchStrategy[Case]:
        return windows.windows(case.n_q, case.n_k).map(
            lambda w: dataclasses.replace(case, window_left=w[0], window_right=w[1]))

    return base.flatmap(windowed)


def _window_explicit(kernel: Kernel) -> tuple[Case, ...]:
    """The query's own key alone, one key back, and keys on both sides: the bounds themselves,
    where an exclusive bound drops one key."""
    return tuple(Case(n_q=8, n_k=8, window_left=left, window_right=right, seed=seed)
                 for seed, (left, right) in enumerate(((0, 0), (1, 0), (2, 1), (3, 2))))


SINK_THEOREMS = ("sink_weights_sum_to_one_minus_the_sinks_share",
                 "sink_lse_is_the_logaddexp_of_the_sink_and_the_keys_lse",
                 "sink_output_derivative", "sink_gradient")
PACKED_THEOREMS = ("packed_output_ignores_other_sequences_values",
                   "packed_output_ignores_other_sequences_keys",
                   "packed_token_of_no_sequence_gets_no_query_gradient",
                   "packed_token_of_no_sequence_gets_no_key_gradient")
PAGED_THEOREMS = ("paged_attention_is_dense_attention_for_every_page_table",
                  *PACKED_THEOREMS[:2])

PROPERTIES = (
    Property("forward", "forward O", lambda k: cases(), _forward),
    _gradient("dq", "backward dQ"),
    _gradient("dk", "backward dK"),
    _gradient("dv", "backward dV"),
    Property("mask", "boolean/additive mask",
             lambda k: cases(mask=st.sampled_from(("random", "first_block")),
                             mask_dtype=_other_mask_dtypes(k), mask_kind=_mask_kinds(k)),
             _everything, _needs_mask, explicit=_mask_dtype_explicit()),
    Property("bias", "finite additive bias (ALiBi, Gaussian, ±10²–10⁴), with masks",
             lambda k: cases(bias=st.sampled_from(BIASES), mask=_any_mask(k, ("random",
                                                                           "padding")),
                             mask_kind=_bias_kind(k), mask_dtype=_other_mask_dtypes(k)),
             _everything, lambda k: None if k.takes_bias else "takes no bias",
             explicit=_bias_mask_dtype_explicit),
    Property("tile_masks", "masks by tile pattern, active tiles not contiguous (1–4 tiles of "
             "16–128)", lambda k: tiled_cases(), _everything, _needs_mask,
             # every other tile at three tiles a side (the third a key wide: a ladder length),
             # at each tile size: holes in every row and column of tiles from every seed
             explicit=tuple(Case(n_q=2 * tile + 1, n_k=2 * tile + 1, mask="checkerboard",
                                 tile=tile) for tile in TILES)),
    Property("causal", "causal mask (n_q = n_k)",
             lambda k: cases(where=kind(lengths="equal"), **_causal(k)), _everything,
             _needs_mask_or_causal),
    Property("padding", "key padding", lambda k: cases(mask=st.just("padding"),
                                                       where=kind(lengths="any", batch=(1, 3))),
             _everything, _needs_mask),
    Property("fully_masked_rows", "fully masked rows",
             lambda k: cases(mask=st.just("fully_masked")), _everything, _needs_mask,
             # the other rows far below zero: a masked row's −∞ beside kept rows whose lse
             # underflows float32, which the ladder's draws reached before and may not now
             explicit=(_underflowing_lse(mask="fully_masked"),)),
    Property("row_offset", "constant added to a row's scores (across the format's range, "
             "whole rows below −1e4, −5e4, −1e30)",
             lambda k: cases(offset=offsets(), mask=_any_mask(k),
                             causal_flag=st.just(not k.takes_mask),
                             where=kind(lengths="equal")),
             _everything),
    Property("masked_garbage", "NaN, ±inf, huge values in K/V entries no query keeps",
             lambda k: cases(where=kind(lengths="any", batch=(1, 3), n=(1, 1025)),
                             mask=st.sampled_from(("padding", "first_block")),
                             garbage=_garbage(k)),
             _everything, _needs_mask),
    Property("block_lengths", "lengths around block multiples (127, 128, 129, 1025, ...)",
             lambda k: cases(where=BLOCK_EDGE_SHAPES, mask=_masked_lengths(k)),
             _everything,
             # one key and one query past each common block size: a ragged last block
             explicit=tuple(Case(n_q=n_q, n_k=n_k) for edge in (64, 128, 256)
                            for n_q, n_k in ((3, edge + 1), (edge + 1, 3)))),
    Property("precision_across_lengths", "the precision O behaves like the same at 129, 257 "
             "and 1,025 keys as at 32 (64 queries, three heads), past what summation order "
             "explains", lengths.cases, _forward, explicit=lengths.explicit,
             length_twin=lengths.short_twin),
    Property("batch_independence", "batch elements independent: each equals itself run "
             "alone (2–4 elements, one of length zero)", batch_cases, _everything,
             explicit=_batch_explicit, run_beside=run_alone),
    Property("batch_invariance", "bitwise batch invariance: each element the same to the bit "
             "as itself run alone (2–4 elements, swamping values; declared batch_invariant)",
             invariance_cases, _everything,
             lambda k: None if k.batch_invariant else "batch invariance not declared",
             explicit=_invariance_explicit, run_beside=run_alone, beside_bitwise=True),
    Property("backward_lse", "gradients through the returned lse as well as O (a loss that "
             "reads both: a merge, ring attention), with masks",
             lambda k: cases(mask=_any_mask(k, ("random", "padding", "causal")),
                             causal_flag=st.just(not k.takes_mask)),
             lambda k: GRADIENTS, _lse_differentiable, lse_cotangent=True,
             theorems=("lse_gradient_is_the_softmax",)),
    Property("history_independence", "calls of one kernel object independent of the calls "
             "before it (scales, dtypes, shapes and masks interleaved)", history_cases,
             _everything),
    Property("dv_ne_dk", "d_v ≠ d_k",
             lambda k: cases(where=kind(lengths="any", dims="apart")), _everything,
             lambda k: "declared d_v = d_k only" if k.equal_head_dims else None),
    Property("nq_ne_nk", "n_q ≠ n_k",
             lambda k: cases(where=kind(lengths="apart")), _everything),
    Property("causal_nq_ne_nk", "causal mask with n_q ≠ n_k (alignment)",
             lambda k: cases(where=kind(lengths="apart"), **_causal(k)), _everything,
             _needs_causal, alignment="lower_right", convention=read_causal_alignment),
    Property("memory_layout", "q, k, v as strided views: slices of a fused QKV, sbhd "
             "transposed; batch ≥ 2, head dims to 256",
             lambda k: cases(memory=st.sampled_from(MEMORY),
                             where=kind(lengths="any", batch=(2, 3), d=(1, 256))),
             _everything, _has_strides,
             explicit=tuple(_underflowing_lse(seed, memory=memory, batch=2)
                            for seed, memory in enumerate(MEMORY))),
    Property("gqa", "grouped-query heads (2 or more K/V heads, groups of 2 to 5 and 7)",
             lambda k: cases(where=kind(lengths="any", kv_heads=(2, 3), group=(2, 7))),
             _everything,
             lambda k: None if k.gqa else "grouped-query heads not declared",
             explain_raise=heads_declared_wrongly),
    Property("gqa_indivisible", "query heads no whole multiple of the K/V heads (3 over 2, "
             "5 over 3, 13 over 2) refused, not answered",
             lambda k: cases(where=kind(lengths="any", kv_heads=(2, 3), group=(2, 7))),
             _forward,
             lambda k: None if k.gqa else "grouped-query heads not declared",
             explain_raise=heads_declared_wrongly, twin_refused=one_query_head_less),
    Property("mqa", "multi-query heads (one K/V head)",
             lambda k: cases(where=kind(lengths="any", kv_heads=(1, 1), group=(2, 6))),
             _everything,
             lambda k: None if k.shares_one_kv_head else "multi-query heads not declared",
             explain_raise=heads_declared_wrongly),
    Property("split_kv", "split-KV merge by log-sum-exp",
             lambda k: cases(where=kind(lengths="any", n_k=(2, 17))), lambda k: ("out", "lse"),
             _halves_run_alone, outputs_instead=merged_halves),
    Property("merge", "the kernel's own split-KV merge: masks, a fully masked half, lse gaps",
             lambda k: cases(where=kind(lengths="any", n=(1, 1025), n_k=(2, 1025)),
                             mask=_merge_masks(k), offset=st.one_of(st.none(),
                                                                    st.sampled_from(GAPS))),
             lambda k: ("out", "lse"),
             lambda k: "declares no merge" if k.merge is None else _halves_run_alone(k),
             explicit=lambda k: _gap_explicit(), outputs_instead=merged_by_kernel),
    Property("softcap", "soft-capping c·tanh(s/c), c from 1 to 50, with masks and offsets",
             lambda k: cases(softcap=st.sampled_from(SOFTCAPS), mask=_any_mask(k),
                             causal_flag=st.just(not k.takes_mask), where=kind(lengths="equal"),
                             offset=st.one_of(st.none(), st.sampled_from(("1e4", "-1e4")))),
             _everything,
             lambda k: None if k.softcap_argument is not None else "takes no soft-capping"),
    Property("sinks", "attention sinks: a per-head logit in every row's denominator "
             "(binding, dominant, negligible), with masks and fully masked rows",
             sink_cases, _with_sink_gradient, _needs_sinks, explicit=_sink_explicit,
             theorems=SINK_THEOREMS),
    Property("sliding_window", "sliding window i − left ≤ j ≤ i + right (bounds inclusive), "
             "shorter than the sequence, with masks", window_cases, _everything,
             _needs_window, explicit=_window_explicit),
    Property("packed_sequences", "packed sequences of several lengths (cu_seqlens or segment "
             "ids), empty ones and slack tokens of garbage: each sequence its own attention, "
             "no gradient to a slack no sequence owns", packed.cases, _everything,
             lambda k: None if k.packed is not None else "takes no packed sequences",
             explicit=packed.explicit, theorems=PACKED_THEOREMS),
    Property("paged_kv", "paged KV cache: page tables over tight and large caches (page ids "
             "past 255 and 1,024), each declared page size, lengths of their own, garbage in "
             "unused slots", paged.cases, _forward,
             lambda k: None if k.paged is not None else "reads no paged KV cache",
             explicit=paged.explicit, theorems=PAGED_THEOREMS),
    Property("score_mod", "the declared score_mod at several batches, heads and positions",
             lambda k: cases(where=kind(lengths="equal", batch=(1, 3), kv_heads=(1, 3)),
                             mask=_any_mask(k), causal_flag=st.just(not k.takes_mask)),
             _everything,
             lambda k: None if k.score_mod is not None else "declares no score_mod"),
)


def by_name() -> dict[str, Property]:
    return {p.name: p for p in PROPERTIES}


class UnknownProperty(ValueError):
    """A property name that is not one of :data:`PROPERTIES`, with the closest names."""


def property_named(name: str) -> Property:
    """The property called ``name``; an :class:`UnknownProperty` listing the choices and the
    closest match otherwise."""
    import difflib

    known = by_name()
    if name in known:
        return known[name]
    closest = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    hint = f" (did you mean {closest[0]!r}?)" if closest else ""
    raise UnknownProperty(f"unknown property {name!r}{hint}; the properties are "
                          f"{', '.join(known)}")
