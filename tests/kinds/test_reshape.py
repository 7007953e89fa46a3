"""The reshape kind: flat dimensions H·D, views, the split of the flat index in proofs, views
built with each backend's reshape and concatenate, exact counterexamples."""

import numpy as np
import pytest
import sympy as sp

from attnproof.numeric import check
from attnproof.numeric.kinds.reshape import build_view
from attnproof.symbolic import (
    Dim,
    Reshape,
    Sizes,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    View,
    flat,
    prove,
    statement_latex,
)
from attnproof.symbolic.kinds.reshape import split_flat_indices
from tests.planted import kinds_reshape as planted

FALSE = planted.planted_concat_against_w_o_rows_in_the_other_order
TRUE = planted.planted_split_and_transpose_holds_its_entries


def test_the_false_variant_is_refuted_with_a_readable_counterexample():
    result = prove(FALSE)
    assert result.status == "refuted"
    found = result.counterexample
    assert found["sizes"]["H"] >= 2 and found["sizes"]["D"] >= 2  # needs two heads, two features
    assert found["sizes"]["H_D"] == found["sizes"]["H"] * found["sizes"]["D"]
    assert float(found["lhs_minus_rhs"]) != 0
    assert all(key.startswith(("O[", "W_O[")) for key in found["values"])


def test_the_true_variant_is_proved_for_all_sizes_by_splitting_the_flat_index():
    result = prove(TRUE)
    assert result.status == "proved"
    assert "all sizes, by splitting the flat index" in result.method


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_the_numeric_route_fails_the_false_variant_and_passes_the_true_one(backend):
    pytest.importorskip(backend if backend == "numpy" else "jax")
    wrong = check(FALSE, backend, "float64")
    assert wrong.status == "failed", wrong.reason
    assert {"sizes", "indices", "lhs", "rhs"} <= set(wrong.counterexample)
    right = check(TRUE, backend, "float64")
    assert right.status == "passed", right.reason
    assert right.instances >= 100


def test_a_lower_format_passes_the_true_variant():
    assert check(TRUE, "numpy", "float16").status == "passed"


def test_the_sum_over_a_flat_index_becomes_the_double_sum():
    H, D = Dim("H"), Dim("D")
    g = Tensor("g", (flat(H, D),))
    f = flat(H, D).index("f")
    split = split_flat_indices(sp.Sum(g[f], (f, 0, H.symbol * D.symbol - 1)), [flat(H, D)])
    (limit_h, limit_c) = split.limits
    assert (limit_h[2], limit_c[2]) == (H.symbol - 1, D.symbol - 1)
    assert split.function == g[limit_h[0] * D.symbol + limit_c[0]]


def test_a_view_is_built_with_concatenate_in_head_major_order():
    H, D, n = Dim("H"), Dim("D"), Dim("n")
    O = Tensor("O", (H, n, D))
    concat = View("Concat", O, (n, flat(H, D)), method="concatenate")
    source = np.arange(2 * 2 * 3 * 2, dtype=float).reshape(2, 2, 3, 2)  # batch 2, H 2, n 3, D 2
    sizes = {"H": 2, "D": 2, "n": 3, "H_D": 4}
    built = build_view(np, concat, source, sizes)
    expected = np.concatenate([source[:, 0], source[:, 1]], axis=-1)
    assert np.array_equal(built, expected)
    reshaped = View("R", O, (n, flat(H, D)))
    assert np.array_equal(build_view(np, reshaped, source, sizes), expected)


def test_latex_shows_the_views_definitions():
    text = statement_latex(FALSE)
    assert r"\text{where }" in text and "{Concat}_{" in text and r",\, " in text


def test_a_view_over_other_dimensions_is_refused_naming_it():
    H, D, n = Dim("H"), Dim("D"), Dim("n")
    with pytest.raises(TheoremError, match="view Bad"):
        View("Bad", Tensor("O", (H, n)), (n, flat(H, D)))


def test_an_undeclared_view_is_refused_naming_theorem_and_symbol():
    H, D, n = Dim("H"), Dim("D"), Dim("n")
    O = Tensor("O", (H, n, D))
    concat = View("Concat", O, (n, flat(H, D)))
    i, f = n.index("i"), flat(H, D).index("f")
    with pytest.raises(TheoremError, match=r"theorem 'bad_reshape'.*Concat"):
        Theorem(name="bad_reshape", source=Source("x", "y"),
                claim=Reshape(concat[i, f], concat[i, f]), inputs=(O,))


def test_a_view_of_an_undeclared_tensor_is_refused_naming_theorem_and_tensor():
    H, D, n = Dim("H"), Dim("D"), Dim("n")
    O = Tensor("O", (H, n, D))
    concat = View("Concat", O, (n, flat(H, D)))
    i, f = n.index("i"), flat(H, D).index("f")
    with pytest.raises(TheoremError, match=r"theorem 'bad_reshape'.*tensor O"):
        Theorem(name="bad_reshape", source=Source("x", "y"),
                claim=Reshape(concat[i, f], concat[i, f], views=(concat,)),
                inputs=(Tensor("P", (H, n, D)),))


VIEW_ORDER_TRUE = (planted.planted_per_head_gram_through_a_transposed_view,
                   planted.planted_transposed_view_read_at_the_parts_of_f)
VIEW_ORDER_FALSE = (planted.planted_per_head_gram_against_feature_major_slices,
                    planted.planted_transposed_view_read_at_the_other_layouts_parts)


@pytest.mark.parametrize("theorem", VIEW_ORDER_TRUE, ids=lambda t: t.name)
def test_views_in_another_axis_order_are_proved_and_pass_in_every_format(theorem):
    assert prove(theorem).status == "proved"
    for backend, dtype in (("numpy", "float64"), ("numpy", "float32"), ("jax", "float32"),
                           ("mlx", "bfloat16")):
        record = check(theorem, backend, dtype, profile="quick")
        assert record.status in ("passed", "skipped"), (backend, dtype, record.reason)


@pytest.mark.parametrize("theorem", VIEW_ORDER_FALSE, ids=lambda t: t.name)
def test_views_read_in_the_other_layout_are_refuted_both_ways(theorem):
    result = prove(theorem)
    assert result.status == "refuted"
    assert result.counterexample["sizes"]["H"] >= 2 and result.counterexample["sizes"]["D"] >= 2
    record = check(theorem, "numpy", "float64", profile="quick")
    assert record.status == "failed", record.reason


def test_a_view_indexed_in_its_sources_axis_order_is_a_declaration_error():
    """Y holds X (n, H·D) as (H, n, D): reading it as Y[n-index, h, c] under a sum (where the
    check on the expanded sides sees only renamed indices) is refused by name."""
    X, Y = planted.X, planted.heads_first
    h, i, c = planted.h, planted.i, planted.c
    everything = ((i, 0, i.upper), (h, 0, h.upper), (c, 0, c.upper))
    with pytest.raises(TheoremError, match=r"index i runs over n but indexes axis H of view Xh"):
        Theorem(name="misread", source=Source("t", "t"), inputs=(X,),
                claim=Reshape(sp.Sum(Y[i, h, c], *everything),
                              sp.Sum(X[i, h * planted.D.symbol + c], *everything),
                              views=(Y,)))


def _named_like_the_split(rhs_index) -> Theorem:
    """A user's view called X_split holding (H, T, D), next to an entry at a flat position,
    which the numeric route reads through a view of its own split along (T, H, D)."""
    tok, heads, per_head = Dim("T"), Dim("H", Sizes(1, 4)), Dim("D", Sizes(1, 3))
    t, h, c = tok.index("t"), heads.index("h"), per_head.index("c")
    X = Tensor("X", (tok, flat(heads, per_head)))
    mine = View("X_split", X, (heads, tok, per_head))
    return Theorem("user_view_named_like_the_split", Source("tests", "planted"),
                   Reshape(mine[h, t, c], X[t, rhs_index(h, c, heads, per_head)],
                           views=(mine,)),
                   inputs=(X,))


def test_a_users_view_named_like_the_routes_own_split_is_not_taken_for_it():
    true = _named_like_the_split(lambda h, c, H, D: h * D.symbol + c)
    false = _named_like_the_split(lambda h, c, H, D: c * H.symbol + h)
    assert check(true, "numpy", "float64").status == "passed"
    assert check(false, "numpy", "float64").status == "failed"
