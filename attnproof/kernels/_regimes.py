"""Which regimes a property's cases reached: where kernels are known to break, counted per cell
so that a reader sees whether a search got there, not only that it passed.

* rows whose log-sum-exp lies below −88 (exp of it underflows float32: an lse a kernel
  stores or merges in float32 must not come back as −∞ or 0);
* rows of length 0 (no kept key: a fully masked row, an element of length zero) and of
  length 1 (one kept key);
* one K/V head shared by several query heads, and several K/V heads;
* NaN or ±∞ written into padded K/V;
* the residues of the key length modulo the common tile sizes (how many of the t residues
  n_k mod t were drawn).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ._cases import Case
from ._truth import Inputs, truth_lse

TILE_SIZES = (16, 32, 64, 128)
LSE_UNDERFLOW = -88.0  # below log of float32's smallest normal, about −87.3
REGIMES = ("lse below −88", "length 0", "length 1", "one K/V head shared",
           "several K/V heads", "NaN/±∞ padding")


def reached(x: Inputs, case: Case) -> dict:
    """The regimes one case reaches, and its key length."""
    kept = x.keep.sum(axis=-1)
    found = []
    with np.errstate(all="ignore"):
        lse = truth_lse(x)[0]
    if np.any(lse[kept > 0] < LSE_UNDERFLOW):
        found.append("lse below −88")
    if np.any(kept == 0):
        found.append("length 0")
    if np.any(kept == 1):
        found.append("length 1")
    if x.k.shape[1] == 1 and x.q.shape[1] > 1:
        found.append("one K/V head shared")
    if x.k.shape[1] > 1:
        found.append("several K/V heads")
    if case.garbage in ("nan", "inf", "-inf"):
        found.append("NaN/±∞ padding")
    return {"regimes": found, "n_k": int(x.k.shape[2])}


def tally(regimes: dict, case_regimes: dict | None) -> None:
    """Add one case's regimes to a cell's: a count of cases per regime, and the residues of
    n_k modulo each tile size."""
    if case_regimes is None:
        return
    counts = regimes.setdefault("cases", {name: 0 for name in REGIMES})
    for name in case_regimes["regimes"]:
        counts[name] += 1
    residues = regimes.setdefault("residues", {str(t): [] for t in TILE_SIZES})
    for tile in TILE_SIZES:
        residue = case_regimes["n_k"] % tile
        if residue not in residues[str(tile)]:
            residues[str(tile)].append(residue)


def summary(cells: Iterable[object]) -> dict[str, dict[str, int]]:
    """The regimes of several cells (one property's dtypes and devices) together."""
    counts = {name: 0 for name in REGIMES}
    residues: dict[str, set] = {str(t): set() for t in TILE_SIZES}
    for cell in cells:
        regimes = getattr(cell, "regimes", None) or {}
        for name, count in regimes.get("cases", {}).items():
            counts[name] += count
        for tile, seen in regimes.get("residues", {}).items():
            residues[tile] |= set(seen)
    return {"cases": counts, "residues": {t: len(r) for t, r in residues.items()}}
