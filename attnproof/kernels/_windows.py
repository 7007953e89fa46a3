"""Sliding windows: the band of keys each query keeps, the window's keyword in each declared
form, and the windows a case draws.

A window (left, right) keeps key j for query i iff i' − left ≤ j ≤ i' + right, both bounds
inclusive, with i' = i where queries align upper-left and i' = i + n_k − n_q where they align
lower-right (the kernel's ``causal_alignment``): the intersection of its two one-sided
conditions, and, with right = 0 and left at least the largest aligned position, the causal
mask (``tests/kernels/test_sinks_windows.py``; the catalog does not state windows yet: its
prover reaches indicators with symbolic offsets only for small sizes).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

# how a kernel takes its window: "pair", a tuple (left, right); "symmetric", one int w for
# (w, w) (JAX's int ``local_window_size``); "size", one int W ≥ 1 for the W keys up to and
# including the query itself, (W − 1, 0) (the ``sliding_window`` of gpt-oss and Mistral)
WINDOW_FORMS = ("pair", "symmetric", "size")


def window_keep(n_q: int, n_k: int, left: int, right: int, alignment: str) -> np.ndarray:
    """(n_q, n_k): whether query i keeps key j, i' − left ≤ j ≤ i' + right."""
    shift = n_k - n_q if alignment == "lower_right" else 0
    i = np.arange(n_q)[:, None] + shift
    j = np.arange(n_k)[None, :]
    return (i - left <= j) & (j <= i + right)


def in_form(form: str, left: int, right: int) -> tuple[int, int]:
    """The window (left, right) a kernel taking ``form`` can be asked: a symmetric one has
    right = left, one given by its size looks back only (right = 0)."""
    if form == "symmetric":
        return left, left
    if form == "size":
        return left, 0
    return left, right


def keyword(form: str, left: int, right: int) -> int | tuple[int, int]:
    """What the kernel's window keyword receives for the window (left, right)."""
    if form == "symmetric":
        return int(left)
    if form == "size":
        return int(left) + 1
    return int(left), int(right)


def windows(n_q: int, n_k: int) -> st.SearchStrategy[tuple[int, int]]:
    """(left, right) shorter than the sequence on the side that binds: a window that looks
    back (right = 0, as decoders use) a few keys or about half the sequence, or one on both
    sides; each side on the ladder of window sides (``_shapes.windows_of``)."""
    from ._shapes import windows_of

    return st.sampled_from(windows_of(max(n_q, n_k)))
