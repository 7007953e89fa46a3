"""The floating-point formats, as one value each: every figure of a format is read from here.

A ``Format`` is a binary format: ``precision`` significand bits (the implicit one included),
normal exponents ``emin`` … ``emax``, and the NumPy dtype its values are stored in. Its
epsilon (the gap above 1), unit roundoff (half of it: the relative error of one rounding to
nearest), largest finite number and smallest normal follow from those three numbers, so no
module asks ``finfo`` or writes ``2**-24``. The input formats (``FORMATS``) are the dtypes a
claim or a kernel may be evaluated in; ``TENSORFLOAT32`` is a precision a kernel may compute in
that no array is stored in (NVIDIA tensor cores round the operands of matrix products to it).

The exact figures (``ulp``, ``round``) are computed in mpmath at 300 bits: the IEEE kind's
enclosures use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import mpmath
from mpmath import mpf

if TYPE_CHECKING:
    import numpy as np

# the working precision of the exact figures (bits)
PRECISION = 300
INF = mpf("inf")


@dataclass(frozen=True)
class Format:
    """A binary floating-point format, stored in the NumPy dtype named ``storage``."""

    name: str
    precision: int
    emin: int
    emax: int
    storage: str
    # the bits one value takes where it is stored in its own format (TensorFloat-32: 19)
    width: int

    def __str__(self) -> str:
        return self.name

    @property
    def epsilon(self) -> float:
        """The gap between 1 and the next number: 2^(1 − precision) (2^-52 in float64)."""
        return 2.0 ** (1 - self.precision)

    @property
    def unit_roundoff(self) -> float:
        """u = 2^-precision: the relative error of one rounding to nearest."""
        return 2.0 ** -self.precision

    @property
    def largest(self) -> float:
        """The largest finite number, (2 − epsilon) · 2^emax."""
        return (2.0 - self.epsilon) * 2.0 ** self.emax

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** self.emin

    @property
    def smallest_subnormal(self) -> float:
        return 2.0 ** (self.emin - self.precision + 1)

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype the format's values are stored in (bfloat16's from ml_dtypes)."""
        import numpy as np

        if self.storage == "bfloat16":  # NumPy knows the name only once ml_dtypes has loaded
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self.storage)

    def ulp(self, x: float | mpf) -> mpf:
        """The spacing of the format's numbers at |x| (the subnormal spacing below normals)."""
        x = abs(mpf(x))
        exponent = self.emin if x == 0 else max(mpmath.frexp(x)[1] - 1, self.emin)
        return mpmath.ldexp(1, exponent - self.precision + 1)

    def round(self, x: mpf) -> mpf:
        """``x`` rounded to the nearest value of the format, ties to even; ±∞ beyond its range."""
        with mpmath.workprec(PRECISION):
            if mpmath.isinf(x) or x == 0:
                return mpf(x)
            quantum = self.ulp(x)
            scaled = x / quantum
            whole = mpmath.floor(scaled)
            excess = scaled - whole
            if excess > 0.5 or (excess == 0.5 and int(whole) % 2):
                whole += 1
            rounded = whole * quantum
            return rounded if abs(rounded) <= self.largest else (INF if x > 0 else -INF)


FLOAT64 = Format("float64", 53, -1022, 1023, "float64", 64)
FLOAT32 = Format("float32", 24, -126, 127, "float32", 32)
FLOAT16 = Format("float16", 11, -14, 15, "float16", 16)
BFLOAT16 = Format("bfloat16", 8, -126, 127, "bfloat16", 16)
# the input formats, by name: the one place a format's name is read (``format_named``)
FORMATS = {f.name: f for f in (FLOAT64, FLOAT32, FLOAT16, BFLOAT16)}
# float32's range with 10 fraction bits, stored in float32
TENSORFLOAT32 = Format("tensorfloat32", 11, -126, 127, "float32", 19)


def format_named(name: str) -> Format:
    """The format ``name`` names: an input format or TensorFloat-32; ``ValueError`` naming the
    known ones for any other name."""
    if name == TENSORFLOAT32.name:
        return TENSORFLOAT32
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join((*FORMATS, TENSORFLOAT32.name))
        raise ValueError(f"unknown floating-point format {name!r}; known: {known}") from None


def with_precision(bits: int) -> Format:
    """A format of ``bits`` significand bits with float64's range, stored in float64: the
    precisions between the input formats (a kernel's precision estimate is calibrated on
    them)."""
    if not 2 <= bits <= 53:
        raise ValueError(f"a precision of {bits} bits is outside 2 … 53")
    return Format(f"bits{bits}", bits, -1022, 1023, "float64", 64)
