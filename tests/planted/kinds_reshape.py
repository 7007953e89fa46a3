"""Planted reshape claims: a concatenation read against W_O laid out in the other order (false
as soon as H, D >= 2) and a split-and-transpose whose entries are what it says (true); views in
another axis order than their source, read through sums and at the parts ⌊f/D⌋, f mod D of a
flat index, beside the same reads in the other layout (false)."""

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

# a view whose axes are its source's in another order: X over (n, H·D) split into heads and
# transposed to (H, n, D), the layout per-head attention reads. Per-head Gram matrices through
# the view are those of X's feature slices h·D + c (true); read with the feature index laid out
# c·H + h they are not (false as soon as H, D >= 2).
heads_first = View("Xh", X, (H, n, D))
m_row = n.index("m")


def per_head_gram(entry_i, entry_m):
    return sp.Sum(entry_i * entry_m, (c, 0, D.symbol - 1))


planted_per_head_gram_through_a_transposed_view = Theorem(
    name="planted_per_head_gram_through_a_transposed_view",
    source=Source(PLANTED, "planted", "X (n, H·D) viewed as (H, n, D): per-head Gram matrices"),
    claim=Reshape(per_head_gram(heads_first[h, i, c], heads_first[h, m_row, c]),
                  per_head_gram(X[i, h * D.symbol + c], X[m_row, h * D.symbol + c]),
                  views=(heads_first,)),
    inputs=(X,),
)

planted_per_head_gram_against_feature_major_slices = Theorem(
    name="planted_per_head_gram_against_feature_major_slices",
    source=Source(PLANTED, "planted", "the same Gram matrices read at c·H + h"),
    claim=Reshape(per_head_gram(heads_first[h, i, c], heads_first[h, m_row, c]),
                  per_head_gram(X[i, c * H.symbol + h], X[m_row, c * H.symbol + h]),
                  views=(heads_first,)),
    inputs=(X,),
    expect="refuted",
)

# the view read back at the parts of a flat feature index f = h·D + c: ⌊f/D⌋ and f mod D give
# X's entry (true); ⌊f/H⌋ and f mod H, the parts of the other layout, do not
planted_transposed_view_read_at_the_parts_of_f = Theorem(
    name="planted_transposed_view_read_at_the_parts_of_f",
    source=Source(PLANTED, "planted", "Xh[⌊f/D⌋, i, f mod D] = X[i, f]"),
    claim=Reshape(heads_first[sp.floor(f / D.symbol), i, sp.Mod(f, D.symbol)], X[i, f],
                  views=(heads_first,)),
    inputs=(X,),
)

planted_transposed_view_read_at_the_other_layouts_parts = Theorem(
    name="planted_transposed_view_read_at_the_other_layouts_parts",
    source=Source(PLANTED, "planted", "Xh[f mod H, i, ⌊f/H⌋] = X[i, f]"),
    claim=Reshape(heads_first[sp.Mod(f, H.symbol), i, sp.floor(f / H.symbol)], X[i, f],
                  views=(heads_first,)),
    inputs=(X,),
    expect="refuted",
)
