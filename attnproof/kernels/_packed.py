"""Packed variable-length batches: several sequences laid end to end along one token axis, told
apart by their cumulative offsets (``cu_seqlens``, as flash-attention's varlen functions, torch's
``varlen_attn`` and FlashInfer's ragged tensors take them), and what a packed call returns,
read back per sequence.

Sequence i's queries are tokens ``cu_seqlens_q[i]`` to ``cu_seqlens_q[i + 1]`` (exclusive) of q,
its keys the same span of ``cu_seqlens_k`` in k and v; a repeated offset is an empty sequence,
and tokens past the last offset (slack, as a buffer sized for the longest batch leaves) belong to
no sequence. Packed attention is masked attention under the block-diagonal mask that keeps key j
for query i iff both lie in one sequence, so (``theorems/production_features.py``) each
sequence's outputs are its own attention's, whatever the other sequences' and the slack's
tokens hold, and a token no sequence owns gets no gradient.

A packed kernel takes q, k, v of layout ``thd`` (tokens, heads, features; canonically a batch of
one, b = 1), the offsets as int32 arrays of length b + 1, and, where declared, the longest
sequence's lengths as Python ints.

A kernel packed by *segment ids* (``packed="segment_ids"``: MaxText's and splash attention's
``segment_ids``, FlexAttention's document masks) takes the same tokens as a dense batch of one
(a layout with b) and, for each token, the id of the sequence it lies in: query i keeps key j
iff their ids are equal. The sequences get increasing ids, consecutive from 1 or with gaps of
256, 65,536 or 2^24 between neighbours (where ids kept in 8, 16 or 24 bits collide), and slack
tokens the id 0: under segment ids the padding is a segment of its own, whose tokens attend
each other, so nothing is promised of their outputs or gradients, and they hold values of the
inputs' own scale (not NaN: see ``slack_garbage``). Each sequence's outputs must still be its
own attention's, whatever values the padding holds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, overload

import numpy as np
from hypothesis import strategies as st

from ._cases import GARBAGE_ALLOWED, Case, instance
from ._cases import cases as dense_cases
from ._frameworks import Framework, rounded
from ._shapes import kind, small_lengths
from ._truth import Inputs

if TYPE_CHECKING:
    from attnproof.symbolic import Format

PACKED_FORMS = ("cu_seqlens", "segment_ids")
# the id of the slack tokens under segment ids, and the gaps between neighbouring sequences'
# ids (1: consecutive ids; the others where ids kept in 8, 16 or 24 bits collide)
PADDING_SEGMENT = 0
SEGMENT_GAPS = (1, 256, 65_536, 2**24)
# what entries no sequence owns hold where a case names none (slack tokens here, a paged
# cache's unused slots in ``_paged``): values of the inputs' own scale
SLACK_DEFAULT = "ordinary"


class PackedKernel(Protocol):
    """What this module reads of a packed kernel's declaration (``_declaration.Kernel``, which
    imports this module, so it is named by what it has)."""

    @property
    def name(self) -> str: ...
    @property
    def packed(self) -> str | None: ...
    @property
    def cu_seqlens_arguments(self) -> tuple[str, str]: ...
    @property
    def segment_ids_arguments(self) -> tuple[str, ...]: ...
    @property
    def max_seqlen_arguments(self) -> tuple[str, str] | None: ...
    @property
    def masked_inputs(self) -> str: ...
    @property
    def causal_alignment(self) -> str | None: ...
    @property
    def takes_causal(self) -> bool: ...
    @property
    def takes_sinks(self) -> bool: ...
    @property
    def gqa(self) -> bool: ...


@dataclass(frozen=True)
class Packing:
    """Where each sequence lies along the packed token axes: (n_q, n_k) per sequence, (0, 0) an
    empty one, then ``slack`` tokens of q and of k/v past the last sequence, holding
    ``garbage`` (a ``_cases.GARBAGE`` name)."""

    lengths: tuple[tuple[int, int], ...]
    slack: int = 0
    garbage: str = SLACK_DEFAULT
    seed: int = 0

    def offsets(self, axis: int) -> np.ndarray:
        """cu_seqlens of the queries (axis 0) or keys (axis 1): 0, then each sequence's end."""
        return np.concatenate([[0], np.cumsum([n[axis] for n in self.lengths])]).astype(np.int32)

    def tokens(self, axis: int) -> int:
        """Tokens along the packed axis, the slack included."""
        return int(self.offsets(axis)[-1]) + self.slack

    def longest(self, axis: int) -> int:
        return max((n[axis] for n in self.lengths), default=0)

    def segment_ids(self, axis: int) -> np.ndarray:
        """(1, tokens) int32: each token's sequence id along the queries' (0) or keys' (1)
        axis, ``PADDING_SEGMENT`` at the slack. The ids increase from 1 by one gap, drawn
        from ``SEGMENT_GAPS`` by the seed, between every two sequences."""
        gap = SEGMENT_GAPS[np.random.default_rng([self.seed, 7]).integers(len(SEGMENT_GAPS))]
        ids = 1 + gap * np.arange(len(self.lengths))
        tokens = np.repeat(ids, [n[axis] for n in self.lengths])
        padded = np.concatenate([tokens, np.full(self.slack, PADDING_SEGMENT)])
        return padded.astype(np.int32)[None]


def of_batch(x: Inputs) -> tuple[list[Inputs], Packing]:
    """A dense batch as packed sequences: element i is sequence i, all of one length, no
    slack (how every property but ``packed_sequences`` asks a packed kernel)."""
    b = x.q.shape[0]
    return [element(x, i) for i in range(b)], Packing(((x.q.shape[2], x.k.shape[2]),) * b)


def element(x: Inputs, i: int) -> Inputs:
    """Batch element ``i`` of ``x`` as an instance of its own (a batch of one)."""
    @overload
    def one(array: np.ndarray) -> np.ndarray: ...
    @overload
    def one(array: None) -> None: ...

    def one(array: np.ndarray | None) -> np.ndarray | None:  # None where the input is
        return None if array is None else np.asarray(array)[i:i + 1]

    given = {name: one(value) for name, value in (x.given or {}).items()}
    return dataclasses.replace(x, q=one(x.q), k=one(x.k), v=one(x.v), keep=one(x.keep),
                               g=one(x.g), given=given or x.given, bias=one(x.bias))


def packed(sequences: list[Inputs], packing: Packing, dtype: Format) -> Inputs:
    """The sequences end to end along the token axes of a batch of one, the slack after them
    (g is 0 there: no loss reads a token no sequence owns); what the kernel receives as q, k, v
    (``Inputs.passed``: garbage in a sequence's unused keys included). The keep-mask is the
    block-diagonal one, for the record: a packed kernel takes no mask."""
    filled = iter(sequences)
    parts: dict[str, list[np.ndarray]] = {"q": [], "k": [], "v": [], "g": []}
    for n_q, _ in packing.lengths:
        if n_q == 0:  # an empty sequence: a repeated offset, no tokens
            continue
        x = next(filled)
        for name in ("q", "k", "v"):
            parts[name].append(x.passed(name))
        parts["g"].append(x.g)
    first = sequences[0]
    rng = np.random.default_rng(packing.seed)
    arrays = {}
    for name, like in (("q", first.q), ("k", first.k), ("v", first.v), ("g", first.g)):
        joined = np.concatenate(parts[name], axis=2)
        tail = np.zeros((1, like.shape[1], packing.slack, like.shape[3])) if name == "g" else \
            slack_values((1, like.shape[1], packing.slack, like.shape[3]), packing.garbage,
                         joined, dtype, rng)
        arrays[name] = np.concatenate([joined, tail], axis=2)
    keep = np.zeros((1, first.q.shape[1], packing.tokens(0), packing.tokens(1)), dtype=bool)
    for (q0, q1), (k0, k1) in zip(_spans(packing, 0), _spans(packing, 1), strict=True):
        keep[..., q0:q1, k0:k1] = True
    return Inputs(arrays["q"], arrays["k"], arrays["v"], keep, arrays["g"], first.scale,
                  sinks=first.sinks)


def slack_values(shape: tuple[int, ...], garbage: str, like: np.ndarray, dtype: Format,
                 rng: np.random.Generator) -> np.ndarray:
    """What the slack tokens hold: NaN, ±∞, the format's largest value, or values of the
    sequences' own scale (uniform up to their largest |entry|, rounded to ``dtype``)."""
    if garbage == "ordinary":
        top = float(np.max(np.abs(like), initial=0.0)) or 1.0
        return rounded(rng.uniform(-top, top, size=shape), dtype)
    value = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf,
             "huge": dtype.largest}[garbage]
    return np.full(shape, value)


def _spans(packing: Packing, axis: int) -> list[tuple[int, int]]:
    """Each non-empty sequence's [start, end) along the queries' (0) or keys' (1) axis."""
    offsets = packing.offsets(axis)
    return [(int(offsets[i]), int(offsets[i + 1])) for i, n in enumerate(packing.lengths)
            if n[0] > 0]


def keywords(kernel: PackedKernel, fw: Framework, packing: Packing, device: str) -> dict[str, Any]:
    """The offsets (int32, on the kernel's device) and, where declared, the longest lengths;
    or each token's segment id, for the queries and the keys (one array where the kernel
    takes one for both)."""
    if kernel.packed == "segment_ids":
        return _segment_keywords(kernel, fw, packing, device)
    q_name, k_name = kernel.cu_seqlens_arguments
    found = {q_name: fw.put(packing.offsets(0), "int32", device),
             k_name: fw.put(packing.offsets(1), "int32", device)}
    if kernel.max_seqlen_arguments is not None:
        longest_q, longest_k = kernel.max_seqlen_arguments
        found.update({longest_q: packing.longest(0), longest_k: packing.longest(1)})
    return found


def _segment_keywords(kernel: PackedKernel, fw: Framework, packing: Packing,
                      device: str) -> dict[str, Any]:
    names = kernel.segment_ids_arguments
    if len(names) == 1:  # one array for queries and keys alike
        return {names[0]: fw.put(packing.segment_ids(0), "int32", device)}
    return {name: fw.put(packing.segment_ids(axis), "int32", device)
            for axis, name in enumerate(names)}


def unaskable(kernel: PackedKernel, packing: Packing) -> str | None:
    """Why ``kernel`` cannot be asked ``packing`` (one segment-id array for both, and
    sequences with other numbers of queries than keys); None where it can."""
    names = kernel.segment_ids_arguments
    if kernel.packed != "segment_ids" or len(names) != 1:
        return None
    if all(n_q == n_k for n_q, n_k in packing.lengths):
        return None
    return (f"{kernel.name} takes one segment-id array ({names[0]}) for queries and keys "
            "alike: sequences with as many queries as keys only")


def owns_no_slack(kernel: PackedKernel) -> bool:
    """Whether the slack tokens belong to no sequence, so that no output depends on them and
    their gradients must be 0 (offsets); under segment ids they are a segment of their own."""
    return kernel.packed == "cu_seqlens"


def slack_garbage(kernel: PackedKernel) -> tuple[str, ...]:
    """What slack tokens may hold: what ``masked_inputs`` lets entries no query keeps hold,
    where no sequence owns them (offsets); under segment ids, where the padding's own queries
    keep them, values of the inputs' scale alone (a masked weight 0 times NaN is NaN in any
    product of the weights with V, so NaN padding reaches every row of its tile)."""
    return GARBAGE_ALLOWED[kernel.masked_inputs] if owns_no_slack(kernel) else (SLACK_DEFAULT,)


def lengths_apart(kernel: PackedKernel) -> bool:
    """Whether a packed case's sequences may have other numbers of queries than keys: where
    the kernel says how a causal row aligns then, or takes no causal flag, and takes the two
    apart (not one segment-id array for both)."""
    one_array = kernel.packed == "segment_ids" and len(kernel.segment_ids_arguments) == 1
    return (kernel.causal_alignment is not None or not kernel.takes_causal) and not one_array


# which token axis each output lies along: the queries' (0) or the keys' (1)
_AXIS = {"out": 0, "lse": 0, "dq": 0, "dk": 1, "dv": 1}


def per_sequence(got: dict[str, np.ndarray], packing: Packing) -> list[dict[str, np.ndarray]]:
    """The packed call's outputs (a batch of one, canonical layout) cut into each non-empty
    sequence's, each a batch of one."""
    spans = (_spans(packing, 0), _spans(packing, 1))
    return [{name: value[:, :, spans[_AXIS[name]][i][0]:spans[_AXIS[name]][i][1]]
             for name, value in got.items()} for i in range(len(spans[0]))]


def in_slack(got: dict[str, np.ndarray], packing: Packing) -> dict[str, np.ndarray]:
    """The gradients of the slack tokens (those past the last offset)."""
    return {name: value[:, :, value.shape[2] - packing.slack:]
            for name, value in got.items() if name in ("dq", "dk", "dv")}


def stacked(outputs: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Sequences of one length read back as the batch they came from (``of_batch``); an output
    of the whole call (dsinks) as it is."""
    return {name: np.concatenate([o[name] for o in outputs], axis=0) if name in _AXIS
            else outputs[0][name] for name in outputs[0]}


# -- the cases of ``packed_sequences`` and their instances ---------------------------------------

# slack tokens after the last sequence: none, one, and a few (a buffer sized for a longer batch)
SLACKS = (0, 1, 3)


def packing_of(case: Case) -> Packing:
    """Where a packed case's sequences and slack lie."""
    assert case.packed is not None  # a packed case: _run asks only those (packed_sequences)
    return Packing(case.packed, case.slack, case.garbage or SLACK_DEFAULT, case.seed)


def instances(case: Case, dtype: Format, compute: Format, alignment: str) -> list[Inputs]:
    """Each non-empty sequence of a packed case as an instance of its own (a batch of one, its
    own lengths and causal alignment, its own seed), all with the first one's sinks: the kernel
    takes one sink per head for the whole call."""
    assert case.packed is not None  # a packed case: _run asks only those (packed_sequences)
    found = []
    for number, (n_q, n_k) in enumerate(case.packed):
        if n_q == 0:
            continue
        seed = int(np.random.default_rng([case.seed, number]).integers(2**32))
        one = dataclasses.replace(case, batch=1, n_q=n_q, n_k=n_k, packed=None, slack=0,
                                  garbage=None, seed=seed)
        found.append(instance(one, dtype, compute, alignment))
    return [dataclasses.replace(x, sinks=found[0].sinks) for x in found]


def cases(kernel: PackedKernel) -> st.SearchStrategy[Case]:
    """2 to 4 sequences of lengths from the small ladder (n_q = n_k, unless the kernel declares
    how a causal row aligns when they differ), an empty one among them half the time, then 0, 1
    or 3 slack tokens holding what they may (``slack_garbage``); causal where the kernel takes
    the flag, sinks where it takes them; heads grouped where declared."""
    apart = lengths_apart(kernel)
    group = (1, 2 if kernel.gqa else 1)

    @st.composite
    def packed_case(draw: st.DrawFn) -> Case:
        base = draw(dense_cases(where=kind(lengths="equal", batch=(1, 1), group=group,
                                           n=(1, 1), d=(1, 8))))
        count = draw(st.integers(2, 4))
        queries = draw(st.lists(small_lengths(), min_size=count, max_size=count))
        keys = draw(st.lists(small_lengths(), min_size=count, max_size=count)) \
            if apart else queries
        sequences = list(zip(queries, keys, strict=True))
        empty = draw(st.one_of(st.none(), st.integers(0, count)))
        if empty is not None:
            sequences.insert(empty, (0, 0))
        causal = kernel.takes_causal and draw(st.booleans())
        return dataclasses.replace(
            base, packed=tuple(sequences), batch=len(sequences),
            n_q=max(queries), n_k=max(keys), slack=draw(st.sampled_from(SLACKS)),
            garbage=draw(st.sampled_from(slack_garbage(kernel))),
            mask="causal" if causal else "none", causal_flag=causal,
            sinks=draw(st.one_of(st.none(), st.just("comparable"))) if kernel.takes_sinks
            else None)

    return packed_case()


def explicit(kernel: PackedKernel) -> tuple[Case, ...]:
    """An empty sequence between two others and NaN in three slack tokens (where the kernel
    lets unused entries hold anything), sequences of one token, and one past a block of 128
    beside a short one: where a kernel reads a repeated offset as the batch's end, takes the
    last sequence to the buffer's end, or tiles across a sequence's edge."""
    garbage = slack_garbage(kernel)[0]
    apart = lengths_apart(kernel)
    layouts = (((3, 5 if apart else 3), (0, 0), (5, 2 if apart else 5)), ((1, 1), (1, 1)),
               ((129, 129), (3, 3)))
    return tuple(Case(n_q=max(n for n, _ in seqs), n_k=max(n for _, n in seqs), batch=len(seqs),
                      heads=2, kv_heads=2, packed=seqs, slack=3 if number == 0 else 0,
                      garbage=garbage if number == 0 else None, seed=number)
                 for number, seqs in enumerate(layouts))
