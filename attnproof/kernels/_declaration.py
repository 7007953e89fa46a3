"""What a kernel author declares: the callable, its framework, its layouts, its mask convention,
its scale argument, the conventions it claims, its dtypes, devices and compute precision.

Everything is validated when declared, so a misspelt layout or convention is a
:class:`KernelError` naming the kernel and the field, not a failure halfway through a check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attnproof.numeric import Device, DeviceError

from ._frameworks import FRAMEWORKS, TF32, has_autodiff, has_x64_switch, precision_format
from ._packed import PACKED_FORMS
from ._paged import CACHE_LAYOUTS, PAGED_FORMS
from ._windows import WINDOW_FORMS

if TYPE_CHECKING:
    import numpy as np

    from attnproof.symbolic import Format

    from ._score_mod import ScoreMod

DTYPES = ("float64", "float32", "float16", "bfloat16")
# what a kernel may compute in: the input dtypes, and TensorFloat-32 products on NVIDIA GPUs
PRECISIONS = (*DTYPES, TF32)
MODES = ("jit", "eager")
MASKS = ("none", "bool", "additive", "bias", "lengths")
# what an additive or bias mask holds where it drops a key: -inf, or the format's lowest finite
# number (HuggingFace's torch.finfo(dtype).min)
MASK_FILLS = ("-inf", "lowest")
# which K/V head query head h reads when K/V have fewer heads: h // group (grouped, as
# repeat_interleave lays them out) or h % kv_heads (interleaved, as a tiled repeat does)
GQA_MAPPINGS = ("grouped", "interleaved")
LSE_BASES = ("e", "2")
FULLY_MASKED = ("zeros", "mean_v", "nan")
FULLY_MASKED_LSE = ("-inf", "+inf", "nan")
MASKED_INPUTS = ("any", "finite", "ordinary")
ALIGNMENTS = ("upper_left", "lower_right")
ARGUMENTS = ("q", "k", "v", "out")
# the canonical axes: batch, heads, sequence (queries for q and out, keys for k and v), feature
CANONICAL = "bhsd"
_SEQUENCE_ALIASES = "qkt"


class KernelError(ValueError):
    """A declaration that cannot be checked, naming the kernel and the field."""

    def __init__(self, kernel: str, field_name: str, message: str) -> None:
        super().__init__(f"kernel {kernel!r}, {field_name}: {message}")


class Refused(Exception):  # noqa: N818 -- it reads as what the kernel did
    """Raised by a kernel for a case outside what it supports (a head size, a dtype, a mask
    its backend does not take), with the reason. The case is not run and not decided; a cell
    whose every case is refused reads "n/a" with the reason, never "raised"."""


def _keyword_names(names: object, count: int) -> bool:
    """Whether ``names`` is ``count`` keyword names, as a tuple or list."""
    return isinstance(names, tuple | list) and len(names) == count and \
        all(isinstance(n, str) and n.isidentifier() for n in names)


@dataclass(frozen=True)
class Kernel:
    """An attention kernel ``fn(q, k, v, **keywords) -> out`` (or ``(out, lse)``) to check.

    Args:
        name: how reports name the kernel.
        fn: the forward pass, called with arrays of ``framework``.
        framework: a numeric backend ("numpy", "jax", "mlx") or "torch".
        layout: axis order of q, k, v and the output, e.g. "bhsd" (batch, heads, sequence,
            feature) or "bshd"; ``q``/``k``/``t`` may stand for ``s``. A mapping gives one
            layout per argument (keys q, k, v, out); missing keys take "bhsd".
        mask: "none", "bool" (True keeps a key), "additive" (0 keeps, -inf drops), "bias"
            (any finite value added to the score, -inf drops), passed as the keyword
            ``mask_argument`` with shape (batch, heads, n_q, n_k); a tuple of kinds for a
            kernel that tells them apart by dtype (e.g. ``("bool", "bias")``); or "lengths":
            each batch element's key length, an int array (batch,) passed as
            ``mask_argument`` (only padding masks can be asked: any other is refused).
        mask_fill: what an additive or bias mask holds where it drops a key: "-inf", or
            "lowest", the format's lowest finite number (HuggingFace's ``finfo(dtype).min``;
            a fully masked row then weighs every key alike: declare ``fully_masked``).
        always_causal: the kernel applies causal masking on every call, with no keyword to
            turn it on or off (aligned as ``causal_alignment``); every case is then causal,
            beside any mask it takes.
        mask_dtype: dtype of an additive or bias mask; "inputs": the inputs' dtype only; None:
            the inputs' dtype, float32 or float64.
        bias_argument: the keyword of a finite bias (batch, heads, n_q, n_k) taken apart from
            the mask (None: no such keyword).
        bias_scaled: the kernel multiplies the bias by its scale too, softmax(scale (QKᵀ + B)),
            instead of softmax(scale QKᵀ + B).
        causal_argument, causal_value: the keyword (and value) that asks for causal masking.
        scale_argument: the keyword of the score scale (None: the kernel always uses
            1/sqrt(d_k), so the check never asks for another).
        score_mod: what the kernel does to each score (scaled, bias added) before its
            softmax, as mathematics: ``score_mod(score, batch, head, i, j)`` called with SymPy
            symbols returns a SymPy expression (e.g. ``lambda s, b, h, i, j: s - (i - j) ** 2
            / 8``); the kernel applies its own implementation in every call.
        softcap_argument: the keyword of a soft-capping value c (scores become c·tanh(s/c));
            None: the kernel takes none.
        fully_masked: what the kernel claims a row with every key masked returns: "zeros",
            "mean_v" (uniform weights over all keys) or "nan"; None: not declared.
        fully_masked_lse: what the lse of such a row is: "-inf" (the log of an empty sum),
            "+inf" (flash-attention's) or "nan"; None: not declared (a finite lse always fails).
        causal_alignment: "upper_left" (query i keeps keys j <= i) or "lower_right" (keeps
            j <= i + n_k - n_q) when n_q != n_k; None: not declared.
        masked_inputs: what K/V entries no query keeps may hold without reaching any output
            or gradient: "any" value (NaN and ±inf included: padding left uninitialised),
            "finite" values only (the kernel documents that its inputs are finite; the
            format's largest included), or "ordinary" values, of the inputs' own scale (a
            kernel that adds its mask to the scores overflows on the format's largest: its
            padding holds a previous sequence's activations, say, never garbage).
        gradients: "autodiff" (the framework differentiates ``fn``), a callable
            ``vjp(q, k, v, g, **keywords) -> (dq, dk, dv)``, or None (forward only).
        returns_lse: ``fn`` returns ``(out, lse)`` with lse of layout ``lse_layout``.
        merge: the kernel's own split-KV merge ``merge(o1, lse1, o2, lse2) -> (o, lse)``, in
            its framework and layouts (out's and ``lse_layout``); needs ``returns_lse``.
        gqa: k and v may have fewer heads than q (any divisor of them; one head included).
        gqa_mapping: which K/V head query head h reads: "grouped" (h // group, as
            ``repeat_interleave`` lays them out) or "interleaved" (h % kv_heads).
        lse_base: the base of the lse the kernel returns: "e", or "2" (log2 of the sum, as
            kernels that use exp2 return it).
        dropout_argument: the keyword of a dropout rate: the checker passes 0.0 on every
            call (dropout is random by design; its absence is what is checked).
        sinks_argument: the keyword of per-head sink logits, an array (heads,) in the inputs'
            dtype (MLX's ``sinks=``, gpt-oss's): s_h joins every row's softmax denominator,
            a_ij = e^{x_ij} / (e^{s_h} + Σ_k e^{x_ik}), and the lse is log(e^{s_h} + Σ_k e^{x_ik}),
            masked rows included; None: the kernel takes none (never asked for sinks).
        window_argument: the keyword of a sliding window: query i keeps key j iff
            i' − left ≤ j ≤ i' + right, both bounds inclusive, i' = i aligned upper-left or
            i + n_k − n_q lower-right (as ``causal_alignment``), beside any mask or causal flag;
            None: the kernel takes none.
        window_form: what ``window_argument`` receives: "pair", a tuple (left, right) (JAX's
            ``local_window_size``, flash-attention's ``window_size``); "symmetric", one int w
            for (w, w); "size", one int W ≥ 1 for the W keys up to the query itself, (W − 1, 0)
            (gpt-oss's and Mistral's ``sliding_window``). The checker passes whole numbers only,
            never a -1 for "unbounded".
        packed: "cu_seqlens": the kernel takes a batch as sequences laid end to end along
            one token axis (flash-attention's varlen functions, torch's ``varlen_attn``):
            q, k, v of a layout without b (``layout="thd"``, tokens × heads × features; the
            lse's ``lse_layout`` likewise, e.g. "ht"), and the cumulative offsets of the
            queries and of the keys, int32 arrays of length batch + 1, as the keywords
            ``cu_seqlens_arguments``; sequence i's queries attend its keys only (a causal flag
            aligns each sequence on its own lengths), a repeated offset is an empty sequence,
            and tokens past the last offset belong to none (``_packed``). Every property asks
            it its batch's elements as sequences of one length; ``packed_sequences`` asks
            sequences of several lengths, empty ones and slack tokens holding garbage (as
            ``masked_inputs`` lets them). None: the kernel takes dense (b, h, n, d) arrays. A
            packed kernel takes no mask: its sequences are its mask.
            "segment_ids": the same tokens as a dense batch of one (a layout with b, the
            lse's too), and each token's sequence id, int32 arrays (1, tokens), as the keywords
            ``segment_ids_arguments``: query i keeps key j iff their ids are equal; slack
            tokens are the padding segment, id 0, of which nothing is asked (``_packed``).
        cu_seqlens_arguments: the keywords of the queries' and the keys' offsets.
        segment_ids_arguments: the keywords of the queries' and the keys' segment ids, or one
            keyword for both (self-attention: sequences as long in queries as in keys).
        max_seqlen_arguments: the keywords of the longest sequence's query and key lengths,
            Python ints (flash-attention's ``max_seqlen_q``, ``max_seqlen_k``); None: not
            passed.
        paged: "block_table": the kernel reads K and V from a paged cache (vLLM's and
            FlashInfer's paged attention): ``fn(q, k_cache, v_cache, **keywords)``, each
            element's key j in page ``block_table[b, j // P]`` at slot ``j % P``, for j below
            ``seq_lens[b]``, the table and the lengths int32 arrays passed as the keywords
            ``paged_arguments`` (``_paged``). Every property asks it its keys through pages,
            at each element's full length; ``paged_kv`` asks lengths of their own, page
            sizes, page tables over large caches and garbage in every unused slot. q and the
            output keep ``layout``; a paged kernel takes no mask (its lengths are its
            padding) and is checked forward only. None: K and V are dense arrays.
        page_sizes: the page sizes P the kernel takes (vLLM's block sizes: 16, 32, ...).
        cache_layout: "nhd", caches (pages, P, K/V heads, features), or "hnd", (pages, K/V
            heads, P, features).
        paged_arguments: the keywords of the block table (batch, pages per element) and of
            the key lengths (batch,).
        mqa: k and v may have one head shared by every query head (implied by ``gqa``).
        equal_head_dims: the kernel requires d_v = d_k (the d_v ≠ d_k property is then n/a).
        batch_invariant: the kernel promises each batch element's outputs the same to the bit
            whatever its batch-mates and their number (the batch-invariant kernels of
            deterministic inference: a split-KV decode whose split count is fixed, not chosen
            by the batch size); checked by ``batch_invariance`` (n/a where not declared).
        dtypes: the input dtypes it accepts.
        compute_dtype: the precision it computes in: one dtype for all inputs, a mapping per
            input dtype, or None (the inputs' own); "tensorfloat32" (float32's range, products
            of operands rounded to 10 fraction bits) where the kernel's products run on tensor
            cores.
        compute_on: per device kind ("gpu", "tpu"), the input dtypes whose precision differs
            there from ``compute_dtype``, e.g. ``{"gpu": {"float32": "tensorfloat32"}}``.
        devices: the devices to run it on, in the one vocabulary ("cpu", "gpu", "gpu:1", ...);
            a device the machine lacks is skipped with the devices it has.
        mode: how the framework runs ``fn``: "jit" (JAX's default here: compiled per shape) or
            "eager"; None for frameworks without the choice.
        enable_x64: JAX only: switch ``jax_enable_x64`` on around the checker's float64 calls
            of the kernel (``jax.enable_x64``, thread-local, restored when each call returns).
            Otherwise every call runs under JAX's configuration as the user has it, and a
            float64 cell where x64 is off is skipped, saying so (JAX would compute it in
            float32).
        keywords: fixed extra keywords for every call (e.g. ``{"enable_gqa": True}``).
    """

    name: str
    fn: Callable
    framework: str
    layout: str | Mapping[str, str] = "bhsd"
    mask: str | tuple[str, ...] = "none"
    mask_argument: str = "mask"
    mask_dtype: str | None = None
    mask_fill: str = "-inf"
    always_causal: bool = False
    bias_argument: str | None = None
    bias_scaled: bool = False
    score_mod: Callable | None = None
    softcap_argument: str | None = None
    causal_argument: str | None = None
    causal_value: Any = True
    scale_argument: str | None = "scale"
    fully_masked: str | None = None
    fully_masked_lse: str | None = None
    causal_alignment: str | None = None
    masked_inputs: str = "any"
    gradients: str | Callable | None = None
    returns_lse: bool = False
    lse_layout: str = "bhs"
    merge: Callable | None = None
    gqa: bool = False
    mqa: bool = False
    gqa_mapping: str = "grouped"
    lse_base: str = "e"
    dropout_argument: str | None = None
    sinks_argument: str | None = None
    window_argument: str | None = None
    window_form: str = "pair"
    packed: str | None = None
    cu_seqlens_arguments: tuple[str, str] = ("cu_seqlens_q", "cu_seqlens_k")
    segment_ids_arguments: tuple[str, ...] = ("q_segment_ids", "kv_segment_ids")
    max_seqlen_arguments: tuple[str, str] | None = None
    paged: str | None = None
    page_sizes: tuple[int, ...] = (16,)
    cache_layout: str = "nhd"
    paged_arguments: tuple[str, str] = ("block_table", "seq_lens")
    equal_head_dims: bool = False
    batch_invariant: bool = False
    dtypes: tuple[str, ...] = ("float32",)
    compute_dtype: str | Mapping[str, str] | None = None
    compute_on: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    devices: tuple[str, ...] = ("cpu",)
    mode: str | None = None
    enable_x64: bool = False
    keywords: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._require(callable(self.fn), "fn", "is not callable")
        self._choose("framework", self.framework, FRAMEWORKS)
        # a kind or several, never none at all: an empty tuple would leave no default kind
        self._require(isinstance(self.mask, str) or (
            isinstance(self.mask, tuple | list) and len(self.mask) > 0), "mask",
            f"must be one of {', '.join(MASKS)} or a tuple of them, got {self.mask!r}")
        for kind in self.mask_kinds:
            self._choose("mask", kind, MASKS)
        self._require(len(self.mask_kinds) == 1 or "none" not in self.mask_kinds, "mask",
                      "'none' cannot be one of several kinds")
        self._require(self.bias_argument is None or self.takes_mask, "bias_argument",
                      "a bias needs a mask kind to mask with (mask='bool', ...)")
        self._require("lengths" not in self.mask_kinds or len(self.mask_kinds) == 1, "mask",
                      "key lengths cannot be told apart from another mask kind")
        self._choose("mask_fill", self.mask_fill, MASK_FILLS)
        self._choose("gqa_mapping", self.gqa_mapping, GQA_MAPPINGS)
        self._choose("lse_base", self.lse_base, LSE_BASES)
        self._choose("window_form", self.window_form, WINDOW_FORMS)
        for keyword in ("sinks_argument", "window_argument"):
            value = getattr(self, keyword)
            self._require(value is None or (isinstance(value, str) and value.isidentifier()),
                          keyword, f"must be a keyword name or None, got {value!r}")
        self._check_packed()
        self._check_paged()
        self._require(not (self.always_causal and self.causal_argument is not None),
                      "always_causal", "a kernel that is always causal takes no causal keyword")
        if self.fully_masked is not None:
            self._choose("fully_masked", self.fully_masked, FULLY_MASKED)
        if self.fully_masked_lse is not None:
            self._choose("fully_masked_lse", self.fully_masked_lse, FULLY_MASKED_LSE)
        if self.causal_alignment is not None:
            self._choose("causal_alignment", self.causal_alignment, ALIGNMENTS)
        self._choose("masked_inputs", self.masked_inputs, MASKED_INPUTS)
        for dtype in self.dtypes:
            self._choose("dtypes", dtype, DTYPES)
        for dtype in self._compute_dtypes():
            self._choose("compute_dtype", dtype, PRECISIONS)
        for kind, per_dtype in self.compute_on.items():
            self._device("compute_on", kind)
            for dtype in per_dtype.values():
                self._choose(f"compute_on[{kind}]", dtype, PRECISIONS)
        self._require(len(self.devices) > 0, "devices", "names no device")
        for device in self.devices:
            self._device("devices", device)
        if self.mode is not None:
            self._choose("mode", self.mode, MODES)
        self._require(not self.enable_x64 or has_x64_switch(self.framework), "enable_x64",
                      f"is JAX's setting; {self.framework} has none")
        self._require(len(self.dtypes) > 0, "dtypes", "names no dtype")
        if self.mask_dtype is not None:
            self._choose("mask_dtype", self.mask_dtype, (*DTYPES, "bool", "inputs"))
        ok = self.gradients in (None, "autodiff") or callable(self.gradients)
        self._require(ok, "gradients", "must be 'autodiff', a callable or None")
        self._require(self.gradients != "autodiff" or has_autodiff(self.framework),
                      "gradients", f"{self.framework} has no autodiff: pass a vjp callable")
        self._require(self.merge is None or (callable(self.merge) and self.returns_lse),
                      "merge", "must be a callable, of a kernel that returns its lse")
        if self.score_mod is not None:
            self._require(callable(self.score_mod), "score_mod", "is not callable")
            try:
                self.modification()
            except Exception as error:  # noqa: BLE001 -- any failure is the declaration's
                raise KernelError(self.name, "score_mod",
                                  f"must take SymPy symbols (score, batch, head, i, j) and "
                                  f"return a SymPy expression of them: {error}") from error
        for argument in ARGUMENTS:
            normalized_layout(self.layout_of(argument), self.name, f"layout[{argument}]")
        normalized_layout(self.lse_layout + "d", self.name, "lse_layout")
        # the state its callables hold as declared, which every fresh copy starts from
        object.__setattr__(self, "_declared", self._copies())

    def _check_packed(self) -> None:
        """A packed kernel's form, keywords and layouts: no mask beside its sequences; by
        offsets, no batch axis; by segment ids, a batch of one."""
        if self.packed is None:
            return
        self._choose("packed", self.packed, PACKED_FORMS)
        self._require(not self.takes_mask and self.bias_argument is None, "packed",
                      "a packed kernel's sequences are its mask: it takes no mask or bias "
                      "(mask='none')")
        self._require(self.merge is None, "merge",
                      "a packed kernel's split-KV merge is not checked yet")
        if self.packed == "segment_ids":
            self._check_segment_ids()
            return
        for field_name in ("cu_seqlens_arguments", "max_seqlen_arguments"):
            names = getattr(self, field_name)
            if names is None and field_name == "max_seqlen_arguments":
                continue
            self._require(_keyword_names(names, 2), field_name,
                          f"must be two keyword names (queries', keys'), got {names!r}")
        for argument in ARGUMENTS:
            self._require("b" not in self.layout_of(argument).lower(), "layout",
                          f"a packed kernel's {argument} has no batch axis (e.g. 'thd'), got "
                          f"{self.layout_of(argument)!r}")
        self._require(not self.returns_lse or "b" not in self.lse_layout.lower(), "lse_layout",
                      f"a packed kernel's lse has no batch axis (e.g. 'ht'), got "
                      f"{self.lse_layout!r}")

    def _check_segment_ids(self) -> None:
        """Segment ids: one or two keywords, no offsets' lengths, dense layouts (b = 1)."""
        names = self.segment_ids_arguments
        self._require(_keyword_names(names, 1) or _keyword_names(names, 2),
                      "segment_ids_arguments", "must be one keyword name (queries' and keys' "
                      f"ids alike) or two (queries', keys'), got {names!r}")
        self._require(self.max_seqlen_arguments is None, "max_seqlen_arguments",
                      "a kernel packed by segment ids is passed no longest lengths: None")
        for argument in ARGUMENTS:
            self._require("b" in self.layout_of(argument).lower(), "layout",
                          f"a kernel packed by segment ids takes a batch of one: its "
                          f"{argument}'s layout has b (e.g. 'bshd'), got "
                          f"{self.layout_of(argument)!r}")

    def _check_paged(self) -> None:
        """A paged kernel's form, page sizes, cache layout and keywords: no mask, forward
        only, not packed too."""
        if self.paged is None:
            return
        self._choose("paged", self.paged, PAGED_FORMS)
        self._choose("cache_layout", self.cache_layout, CACHE_LAYOUTS)
        sizes = self.page_sizes
        self._require(isinstance(sizes, tuple | list) and len(sizes) > 0 and
                      all(isinstance(n, int) and not isinstance(n, bool) and n >= 1
                          for n in sizes), "page_sizes",
                      f"must be whole numbers of at least 1, got {sizes!r}")
        names = self.paged_arguments
        self._require(isinstance(names, tuple | list) and len(names) == 2 and
                      all(isinstance(n, str) and n.isidentifier() for n in names),
                      "paged_arguments", f"must be two keyword names (the block table's, the "
                      f"lengths'), got {names!r}")
        self._require(self.packed is None, "paged", "a kernel is packed or paged, not both")
        self._require(not self.takes_mask and self.bias_argument is None, "paged",
                      "a paged kernel's key lengths are its padding: it takes no mask or bias "
                      "(mask='none')")
        self._require(self.gradients is None and self.merge is None, "paged",
                      "a paged kernel is checked forward only (gradients=None, merge=None)")

    _CALLABLES = ("fn", "gradients", "merge")

    def _copies(self) -> dict[str, Callable] | None:
        """Copies of the callables that hold state of their own (one memo: state they share
        stays shared), or None when none does."""
        from ._fresh import copied, holds_state

        held = {name: getattr(self, name) for name in self._CALLABLES
                if callable(getattr(self, name))}
        if not any(holds_state(value) for value in held.values()):
            return None
        memo: dict[int, Any] = {}
        return {name: copied(value, memo) for name, value in held.items()}

    def fresh(self) -> Kernel:
        """This kernel as declared: its callables' own state (a cache in a closure, a bound
        object's fields) as it was at declaration, whatever calls were made since; the kernel
        itself when its callables hold no state of their own."""
        from ._fresh import copied

        declared = getattr(self, "_declared", None)
        if declared is None:
            return self
        memo: dict[int, Any] = {}
        return dataclasses.replace(self, **{name: copied(value, memo)
                                            for name, value in declared.items()})

    def layout_of(self, argument: str) -> str:
        """The declared axis order of ``argument`` (q, k, v or out)."""
        if isinstance(self.layout, str):
            return self.layout
        unknown = set(self.layout) - set(ARGUMENTS)
        self._require(not unknown, "layout", f"unknown arguments {sorted(unknown)}")
        return self.layout.get(argument, CANONICAL)

    def compute_for(self, dtype: Format, device: str = "cpu") -> Format:
        """The precision the kernel computes in for inputs of ``dtype`` on ``device`` (the
        declaration names it; its names were checked when it was made)."""
        on_device = self.compute_on.get(Device.parse(device).kind, {})
        if dtype.name in on_device:
            return precision_format(on_device[dtype.name])
        if self.compute_dtype is None:
            return dtype
        if isinstance(self.compute_dtype, str):
            return precision_format(self.compute_dtype)
        return precision_format(self.compute_dtype.get(dtype.name, dtype.name))

    def runs_on(self, device: str) -> bool:
        """Whether a declared device word covers the device name ``device``."""
        return any(Device.parse(d).covers(device) for d in self.devices)

    @property
    def has_gradients(self) -> bool:
        return self.gradients is not None

    @property
    def shares_one_kv_head(self) -> bool:
        return self.gqa or self.mqa

    def modification(self, softcap: float | None = None) -> ScoreMod | None:
        """The ScoreMod of a case: the declared score_mod, else soft-capping at ``softcap``,
        else None."""
        from ._score_mod import from_callable
        from ._score_mod import softcap as capped

        if self.score_mod is not None:
            return from_callable(self.score_mod)
        return None if softcap is None else capped(softcap)

    @property
    def mask_kinds(self) -> tuple[str, ...]:
        """The mask kinds the kernel takes, the first one its default."""
        return (self.mask,) if isinstance(self.mask, str) else tuple(self.mask)

    @property
    def takes_mask(self) -> bool:
        return self.mask_kinds != ("none",)

    @property
    def takes_bias(self) -> bool:
        return "bias" in self.mask_kinds or self.bias_argument is not None

    @property
    def takes_causal(self) -> bool:
        return self.causal_argument is not None

    @property
    def takes_sinks(self) -> bool:
        return self.sinks_argument is not None

    @property
    def takes_window(self) -> bool:
        return self.window_argument is not None

    def _compute_dtypes(self) -> tuple[str, ...]:
        if self.compute_dtype is None:
            return ()
        if isinstance(self.compute_dtype, str):
            return (self.compute_dtype,)
        return tuple(self.compute_dtype.values())

    def _device(self, field_name: str, word: str) -> None:
        try:
            Device.parse(word)
        except DeviceError as error:
            raise KernelError(self.name, field_name, str(error)) from None

    def _choose(self, field_name: str, value: object, allowed: Collection[object]) -> None:
        self._require(value in allowed, field_name, f"{value!r} is not one of {list(allowed)}")

    def _require(self, condition: bool, field_name: str, message: str) -> None:
        if not condition:
            raise KernelError(self.name, field_name, message)


def normalized_layout(layout: str, kernel: str = "?", field_name: str = "layout") -> str:
    """``layout`` spelt with b, h, s, d only (q, k, t read as s).

    A layout names each of b, h, s (or q, k, t) and d once; b and h may be left out (size 1).
    """
    letters = "".join("s" if c in _SEQUENCE_ALIASES else c for c in layout.lower())
    if sorted(letters) != sorted(set(letters)) or not set(letters) <= set(CANONICAL) or \
            not {"s", "d"} <= set(letters):
        raise KernelError(kernel, field_name,
                          f"{layout!r} must name s (or q, k, t) and d once each, and may add "
                          "b and h once each")
    return letters


def to_layout(array: np.ndarray, letters: str) -> np.ndarray:
    """A canonical (b, h, s, d) NumPy array in the axis order ``letters`` (dropping absent axes,
    which have size 1)."""
    dropped = [CANONICAL.index(c) for c in CANONICAL if c not in letters]
    squeezed = array.reshape([n for a, n in enumerate(array.shape) if a not in dropped])
    kept = [c for c in CANONICAL if c in letters]
    return squeezed.transpose([kept.index(c) for c in letters])


def from_layout(array: np.ndarray, letters: str,
                canonical_shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of :func:`to_layout`."""
    kept = [c for c in CANONICAL if c in letters]
    ordered = array.transpose([letters.index(c) for c in kept])
    return ordered.reshape(canonical_shape)


def layout_shape(canonical_shape: tuple[int, ...], letters: str) -> tuple[int, ...]:
    return tuple(canonical_shape[CANONICAL.index(c)] for c in letters)
