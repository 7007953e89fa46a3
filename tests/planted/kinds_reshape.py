"""Planted reshape claims: a concatenation read against W_O laid out in the other order (false
as soon as H, D >= 2) and a split-and-transpose whose entries are what it says (true)."""

import sympy as sp

from attnproof.symbolic import Dim, Reshape, Sizes, Source, Tensor, Theorem, View, flat

PLANTED = "tests/planted/kinds_reshape.py"

H, D = Dim("H", Sizes(1, 4)), Dim("D", Sizes(1, 4))
n, d = Dim("n", Sizes(1, 4)), Dim("d", Sizes(1, 4))
h, c, i, e = H.index("h"), D.index("c"), n.index("i"), d.index("e")
HD, DH = flat(H, D), flat(D, H)
f = HD.index("f")
O = Tensor("O", (H, n, D))
W_O = Tensor("W_O", (H, D, d))
Concat = View("Concat", O, (n, HD), method="concatenate")
W_swapped = View("W", W_O, (DH, d))  # row c·H + h, not h·D + c

index_form = sp.Sum(O[h, i, c] * W_O[h, c, e], (h, 0, H.symbol - 1), (c, 0, D.symbol - 1))

planted_concat_against_w_o_rows_in_the_other_order = Theorem(
    name="planted_concat_against_w_o_rows_in_the_other_order",
    source=Source(PLANTED, "planted", "Concat(heads) W_O with W_O's rows ordered (c, h)"),
    claim=Reshape(index_form, sp.Sum(Concat[i, f] * W_swapped[f, e],
                                     (f, 0, HD.symbol - 1)), views=(Concat, W_swapped)),
    inputs=(O, W_O),
    expect="refuted",
)

X = Tensor("X", (n, HD))
split_transposed = View("Y", X, (D, H, n))

planted_split_and_transpose_holds_its_entries = Theorem(
    name="planted_split_and_transpose_holds_its_entries",
    source=Source(PLANTED, "planted", "X (n, H·D) split and transposed to (D, H, n)"),
    claim=Reshape(split_transposed[c, h, i], X[i, h * D.symbol + c], views=(split_transposed,)),
    inputs=(X,),
)
