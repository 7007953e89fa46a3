"""Planted existence claims on sinusoidal positions: a linear map from PE(pos) to PE(2·pos)
must be refuted (none exists); the shift's map without a witness, and with a witness turned the
wrong way, must not be (the claim is true, only the witness is wrong). Test fixtures, never in
the catalog."""

from attnproof import Defined, Equals, Exists, Source, Theorem, rotation
from attnproof.theorems import positional as pe

PLANTED = Source("tests/planted/existence.py", "planted existence")
p, b, c = pe.p, pe.b, pe.c
pos, shift, omega, M = pe.pos, pe.shift, pe.omega, pe.M
shifted = Equals(pe.sinusoidal(pos.symbol + shift.symbol, p, c),
                 pe.total(M[p, c, b] * pe.sinusoidal(pos.symbol, p, b), b))

planted_doubling_the_position_is_linear = Theorem(
    name="planted_doubling_the_position_is_linear",
    source=PLANTED,
    claim=Exists(M, Equals(pe.sinusoidal(2 * pos.symbol, p, c),
                           pe.total(M[p, c, b] * pe.sinusoidal(pos.symbol, p, b), b)),
                 for_all=(pos,)),
    inputs=(pos, omega, pe.plane),
    expect="refuted",
)

planted_shift_is_linear_without_a_witness = Theorem(
    name="planted_shift_is_linear_without_a_witness",
    source=PLANTED,
    claim=Exists(M, shifted, for_all=(pos,)),
    inputs=(pos, shift, omega, pe.plane),
)

planted_shift_is_linear_with_the_witness_reversed = Theorem(
    name="planted_shift_is_linear_with_the_witness_reversed",
    source=PLANTED,
    claim=Exists(M, shifted, for_all=(pos,),
                 witness=Defined("M", (p, c, b), rotation(shift.symbol * omega[p], c, b))),
    inputs=(pos, shift, omega, pe.plane),
    expect="refuted",
)
