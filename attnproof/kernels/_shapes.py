"""The shape ladder: the sizes every case of a run is drawn from, one bounded set for every
property, dtype and cell of a kernel.

A case's cost is not its checking but the program a compiling kernel builds for it: a jitted
JAX kernel compiles its forward and its backward for each new (shape, dtype, keywords), about
0.15 s each on a CPU and seconds on a GPU, where checking the case takes milliseconds. Sizes
drawn freely (any length from 1 to 16, any head dimension from 1 to 8) made nearly every case
a new program. Drawn from the ladders below, the properties share their shapes: the search
still chooses among them and draws every value freely (the arrays, masks, offsets, scales),
and shrinks towards the smallest (each ladder is in increasing order, and Hypothesis shrinks
a choice towards the first).

The ladders hold the sizes where kernels break: 1, 2 and 3; both sides of the small tiles;
each block multiple of 16 to 256 with one below and one above it (a ragged last block); a few
hundred; and past 1,024. Head dimensions are those of real models (64, 128, 256, and 576 of
multi-head latent attention) beside small and odd ones (1, 2, 3, 4, 8) where a vector width
is not met.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from hypothesis import strategies as st

# lengths up to one tile of 16 and one past it: the small end, where a shrunk case lives
SMALL_LENGTHS = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17)
# lengths just below, at and above the block multiples kernels tile keys by (16 to 256), a
# few hundred, and past 1,024
BLOCK_EDGES = (31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025)
A_FEW_HUNDRED = (300,)
LENGTHS = tuple(sorted({*SMALL_LENGTHS, *BLOCK_EDGES, *A_FEW_HUNDRED}))
# head dimensions: small and odd ones, then those of real models (multi-head latent
# attention's 576 last)
SMALL_HEAD_DIMS = (1, 2, 3, 4, 8)
HEAD_DIMS = (*SMALL_HEAD_DIMS, 64, 128, 256, 576)
# window sides (keys before or after the query's own): 0 (its own key alone) up to a few
# blocks; a window is static in most kernels' signatures, so its sides are a ladder too
WINDOW_SIDES = (0, 1, 2, 3, 5, 8, 15, 16, 17, 31, 32, 63, 64, 127, 128)


class Shape(NamedTuple):
    """One rung: the sizes of a case (query heads are ``kv_heads`` times ``group``)."""

    n_q: int
    n_k: int
    d_k: int
    d_v: int
    batch: int = 1
    kv_heads: int = 1
    group: int = 1

    @property
    def cost(self) -> int:
        """What a case of this shape costs, roughly: the order shrinking goes in."""
        heads = self.kv_heads * self.group
        return self.batch * heads * self.n_q * self.n_k * (self.d_k + self.d_v)


# (n_q, n_k, d_k, d_v, batch, kv_heads): each length of the small ladder at equal lengths,
# in pairs n_q != n_k, with head dims, batches and K/V heads in rotation
_GENERAL = (
    (1, 1, 1, 1, 1, 1), (2, 2, 2, 2, 1, 1), (3, 3, 3, 3, 2, 1), (5, 5, 4, 4, 1, 2),
    (8, 8, 64, 64, 1, 1), (16, 16, 8, 8, 2, 2), (17, 17, 3, 3, 1, 1),
    (1, 3, 2, 2, 1, 1), (3, 1, 8, 8, 2, 1), (2, 5, 4, 4, 1, 2), (4, 16, 1, 1, 2, 2),
    (16, 4, 64, 64, 1, 1), (7, 17, 2, 2, 1, 1), (17, 9, 128, 128, 1, 2),
)
# the smallest shape of each kind, head dims of 1: where a freely drawn search shrank to, and
# where some backends fail (XLA's CPU backend cannot emit a bfloat16 dot of one feature):
# n_q != n_k, d_v != d_k, two to four batch elements, two K/V heads
_SMALLEST = ((1, 2, 1, 1, 1, 1), (2, 1, 1, 1, 1, 1), (1, 1, 1, 2, 1, 1), (1, 1, 2, 1, 1, 1),
             (1, 1, 1, 1, 2, 1), (1, 2, 1, 1, 2, 1), (1, 1, 1, 1, 3, 1), (1, 1, 1, 1, 4, 1),
             (1, 1, 1, 1, 1, 2))
# d_v != d_k
_DIMS_APART = ((2, 2, 1, 2, 1, 1), (3, 5, 2, 3, 1, 1), (4, 4, 8, 2, 2, 1), (5, 3, 3, 8, 1, 2),
               (8, 8, 64, 8, 1, 1), (1, 7, 4, 128, 1, 1), (9, 9, 128, 64, 2, 2))
# batches of 3 and 4, three K/V heads, and batches at head dims of real models (strided views)
_MORE_ELEMENTS = ((2, 2, 2, 2, 3, 1), (3, 5, 4, 4, 3, 2), (4, 4, 1, 1, 4, 1),
                  (5, 5, 8, 8, 4, 2), (5, 5, 2, 2, 1, 3), (8, 8, 1, 1, 2, 3),
                  (3, 4, 256, 256, 2, 1), (4, 4, 64, 64, 3, 1), (2, 3, 576, 576, 1, 1))
# (n_q, n_k, d, batch, kv_heads, group): grouped-query (2 or 3 K/V heads, groups of 2 to 5
# and 7: a ratio that is no power of two, as a kernel's head arithmetic may assume) and
# multi-query heads (one K/V head, groups of 2 to 6)
_GROUPED = ((2, 2, 2, 1, 2, 2), (3, 5, 4, 1, 2, 3), (4, 4, 8, 2, 3, 2), (5, 5, 1, 1, 2, 4),
            (1, 3, 64, 1, 3, 3), (8, 8, 3, 1, 3, 4), (3, 3, 4, 1, 2, 5), (2, 4, 2, 1, 2, 7),
            (2, 2, 2, 1, 1, 2), (3, 4, 8, 1, 1, 3), (5, 5, 1, 2, 1, 4), (4, 4, 4, 1, 1, 5),
            (7, 3, 64, 1, 1, 6), (1, 1, 1, 1, 2, 2), (1, 1, 1, 1, 1, 2))


def _edges() -> tuple[Shape, ...]:
    """At every block edge and a few hundred: keys of that length beside a few queries,
    queries of that length beside a few keys (up to 300), both of it (up to 129), and pairs
    of edges, never both past 257 (a case costs n_q n_k), at head dims 1 to 4."""
    found = []
    long = BLOCK_EDGES + A_FEW_HUNDRED
    for i, n in enumerate(long):
        d = (1, 2, 4, 3)[i % 4]
        found.append(Shape((1, 2, 3, 4)[i % 4], n, d, d))
        if n <= 300:
            found.append(Shape(n, (3, 1, 2, 4)[i % 4], d, d))
        if n <= 129:
            found.append(Shape(n, n, (2, 1, 3, 4)[i % 4], (2, 1, 3, 4)[i % 4]))
    pairs = ((63, 129), (129, 63), (127, 257), (257, 255), (127, 1025), (1023, 65))
    return (*found, *(Shape(n_q, n_k, 2, 2) for n_q, n_k in pairs))


# precision across lengths (``_lengths``): rows enough for an estimate at each length, 64
# queries in three heads, over one key past 128, 256 and 1,024 and over the short twin's 32
LENGTH_ROWS, LENGTH_HEADS, LENGTH_HEAD_DIM = 64, 3, 8
LONG_KEYS, SHORT_KEYS = (129, 257, 1025), 32
LENGTH_RUNGS = tuple(Shape(LENGTH_ROWS, n_k, LENGTH_HEAD_DIM, LENGTH_HEAD_DIM, 1, LENGTH_HEADS)
                     for n_k in (SHORT_KEYS, *LONG_KEYS))

# the length rungs last: three K/V heads of one group, no other kind accepts them, and after
# the others they move no other rung's place (its scale, ``scale_of``)
RUNGS: tuple[Shape, ...] = (*sorted(
    {*(Shape(*row) for row in _SMALLEST + _GENERAL + _DIMS_APART + _MORE_ELEMENTS),
     *(Shape(n_q, n_k, d, d, b, kv, g) for n_q, n_k, d, b, kv, g in _GROUPED), *_edges()},
    key=lambda shape: (shape.cost, shape)), *LENGTH_RUNGS)


# the scale each rung asks for: the kernel's default (None) at every other rung, else one of
# these in rotation. A kernel whose scale is a static argument builds a program per value, so
# a shape is asked at one scale; every scale is still asked, across the rungs
SCALES = (0.5, 1.0, 2.0)


def scale_of(shape: Shape) -> float | None:
    """The scale a case of ``shape`` asks for (None: the kernel's default, 1/√d_k)."""
    index = RUNGS.index(shape) if shape in RUNGS else 0
    return None if index % 2 == 0 else SCALES[(index // 2) % len(SCALES)]


def rungs_of(where: Callable[[Shape], bool]) -> tuple[Shape, ...]:
    """The rungs ``where`` accepts, the cheapest first; none is a ValueError."""
    chosen = tuple(shape for shape in RUNGS if where(shape))
    if not chosen:
        raise ValueError("no shape of the ladder is of the kind asked for")
    return chosen


def shapes(where: Callable[[Shape], bool]) -> st.SearchStrategy[Shape]:
    """A rung that ``where`` accepts, the cheapest first (Hypothesis shrinks a choice towards
    the first)."""
    return st.sampled_from(rungs_of(where))


def kind(*, lengths: str = "any", dims: str = "equal", batch: tuple[int, int] = (1, 2),
         kv_heads: tuple[int, int] = (1, 2), group: tuple[int, int] = (1, 1),
         n: tuple[int, int] = (1, 17), n_k: tuple[int, int] = (1, 1025),
         d: tuple[int, int] = (1, 128)) -> Callable[[Shape], bool]:
    """The rungs of one kind: ``lengths`` "equal" (n_q = n_k), "apart" (n_q != n_k) or "any";
    ``dims`` likewise for d_k and d_v; the others (low, high) ranges of the batch, the K/V
    heads, the group, both lengths, the key length and both head dims. The defaults are the common
    properties' shapes: small lengths, one or two K/V heads and batch elements, no group."""
    def accepts(shape: Shape) -> bool:
        return (_same(lengths, shape.n_q, shape.n_k) and _same(dims, shape.d_k, shape.d_v)
                and _within(batch, shape.batch) and _within(kv_heads, shape.kv_heads)
                and _within(group, shape.group) and _within(n, shape.n_q, shape.n_k)
                and _within(n_k, shape.n_k)
                and _within(d, shape.d_k, shape.d_v))

    return accepts


def _same(rule: str, a: int, b: int) -> bool:
    return rule == "any" or (a == b) == (rule == "equal")


def _within(bounds: tuple[int, int], *values: int) -> bool:
    return all(bounds[0] <= value <= bounds[1] for value in values)


PLAIN = kind()


def small_lengths(top: int = 16) -> st.SearchStrategy[int]:
    """A length of the small ladder, at most ``top``."""
    return st.sampled_from([n for n in SMALL_LENGTHS if n <= top])


def lengths() -> st.SearchStrategy[int]:
    """Mostly small, sometimes just below, at or above a block multiple, or a few hundred."""
    return st.one_of(small_lengths(), st.sampled_from(BLOCK_EDGES + A_FEW_HUNDRED))


def head_dims(top: int | None = None) -> st.SearchStrategy[int]:
    """A head dimension of the ladder (at most ``top``, when given)."""
    return st.sampled_from([d for d in HEAD_DIMS if top is None or d <= top])


def lengths_between(low: int, high: int) -> st.SearchStrategy[int]:
    """A length of the ladder from ``low`` to ``high``."""
    return st.sampled_from([n for n in LENGTHS if low <= n <= high])


def windows_of(longest: int) -> tuple[tuple[int, int], ...]:
    """The windows (left, right) a shape whose longer side is ``longest`` keys is asked: sides
    of the ladder shorter than would keep every key, looking back a few keys and about half
    the sequence, and one on both sides (a window is static in most kernels' signatures, so a
    shape is asked at few of them)."""
    sides = [s for s in WINDOW_SIDES if s <= max(longest - 2, 0)]
    near = sides[min(2, len(sides) - 1)]
    half = max(s for s in sides if s <= max((longest - 1) // 2, near))
    return tuple(dict.fromkeys(((near, 0), (half, 0), (half, near))))


def ladder_below(n: int) -> tuple[int, ...]:
    """The lengths of the ladder below ``n`` (where a split-KV check may cut ``n`` keys)."""
    return tuple(m for m in LENGTHS if m < n)


class Sized(Protocol):
    """The sizes of a case (``_cases.Case``, which imports this module, so it is named by what
    it has)."""

    @property
    def n_q(self) -> int: ...
    @property
    def n_k(self) -> int: ...
    @property
    def d_k(self) -> int: ...
    @property
    def d_v(self) -> int: ...


def on_ladder(case: Sized) -> bool:
    """Whether every size of ``case`` is one of the ladder's (its head counts are the
    properties' own: 1 to 12)."""
    return (case.n_q in LENGTHS and case.n_k in LENGTHS and case.d_k in HEAD_DIMS
            and case.d_v in HEAD_DIMS)
