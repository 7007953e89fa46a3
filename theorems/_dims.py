"""Dimensions shared by the catalog, named as in the tutorial's notation table (§1.2)."""

from __future__ import annotations

from attnproof import Dim, Sizes

n_q = Dim("n_q", Sizes(1, 6))
n_k = Dim("n_k", Sizes(1, 8))
d_k = Dim("d_k", Sizes(1, 8))
d_v = Dim("d_v", Sizes(1, 6))

TUTORIAL = "001_9db7190c12608696.txt"
README = "000_4cf6f5ddf16e1ebe.txt"  # "attn-tensors README"
EXAMPLE_48 = "002_ef3c412201bbbc34.txt"  # "Worked example 48"
NOTEBOOK = "003_7f210888dbe15d95.txt"  # "Theory notebook"
OUTSIDE = "outside"  # "Outside the documents": a claim none of the four writes down
