"""Planted spectral claims: each false one must be refuted by the exact search and fail the
numeric route, and the true ones beside it must do neither.

Test fixtures, discovered from this directory like any user's theorem directory; never in the
catalog.
"""

import sympy as sp

from attnproof.symbolic import (
    Defined,
    Dim,
    Positive,
    Scalar,
    Sizes,
    Source,
    Spectral,
    Tensor,
    Theorem,
    cond,
    singular_max,
)

PLANTED = "tests/planted/kinds_spectral.py"
rows = Dim("n", Sizes(3, 8))  # at least as many rows as columns in every drawn shape: finite κ
columns = Dim("d", Sizes(1, 4))
r = rows.index("r")
a, b = columns.indices("a b")
X = Tensor("X", (rows, columns))
lam = Scalar("lambda", Positive(1e-2, 1e2))
G = Defined("G", (a, b), sp.Sum(X[r, a] * X[r, b], (r, 0, r.upper)))
R = Defined("R", (a, b), G[a, b] + lam.symbol * sp.KroneckerDelta(a, b))

planted_normal_equations_keep_the_condition_number = Theorem(
    name="planted_normal_equations_keep_the_condition_number",
    source=Source(PLANTED, "planted", "κ(XᵀX) = κ(X)"),
    claim=Spectral(cond(G[a, b], a, b), "=", cond(X[r, a], r, a)),
    inputs=(X,),
    definitions=(G,),
    expect="refuted",
    note="The square is missing: κ(XᵀX) = κ(X)².",
)

planted_normal_equations_square_the_condition_number = Theorem(
    name="planted_normal_equations_square_the_condition_number",
    source=Source(PLANTED, "planted", "κ(XᵀX) = κ(X)²"),
    claim=Spectral(cond(G[a, b], a, b), "=", cond(X[r, a], r, a) ** 2),
    inputs=(X,),
    definitions=(G,),
)

planted_ridge_worsens_conditioning = Theorem(
    name="planted_ridge_worsens_conditioning",
    source=Source(PLANTED, "planted", "κ(XᵀX) ≤ κ(XᵀX + λI)"),
    claim=Spectral(cond(G[a, b], a, b), "<=", cond(R[a, b], a, b)),
    inputs=(X, lam),
    definitions=(G, R),
    expect="refuted",
    note="Turned the wrong way: a singular X gives κ(XᵀX) = ∞ against a finite κ(XᵀX + λI).",
)

planted_ridge_improves_conditioning = Theorem(
    name="planted_ridge_improves_conditioning",
    source=Source(PLANTED, "planted", "κ(XᵀX + λI) ≤ κ(XᵀX)"),
    claim=Spectral(cond(R[a, b], a, b), "<=", cond(G[a, b], a, b)),
    inputs=(X, lam),
    definitions=(G, R),
)

planted_gram_norm_is_linear = Theorem(
    name="planted_gram_norm_is_linear",
    source=Source(PLANTED, "planted", "‖XᵀX‖₂ = ‖X‖₂"),
    claim=Spectral(singular_max(G[a, b], a, b), "=", singular_max(X[r, a], r, a)),
    inputs=(X,),
    definitions=(G,),
    expect="refuted",
    note="‖XᵀX‖₂ = ‖X‖₂², not ‖X‖₂.",
)
