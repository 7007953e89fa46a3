"""The rounding models: per backend and format, the unit roundoff of a basic operation and the
accuracy of exp and log in units of it, each with where it comes from.

A table of its own because three checks read it: the error-bound claims' numeric route
(``numeric/kinds/error_bound.py``, which also measures exp and log against the model on every
catalog run, and where the backend's exp stops being finite: a backend that breaks its model
is a finding about the backend, named in the record, never a counterexample to a bound), the
proved-bound judge of lower formats (``numeric/kinds/proved_bound.py``), and the kernel
checker's proved bounds (``attnproof/kernels/_proved.py``). A backend or format without a row
has no model: its error-bound records are skipped, saying why (``NO_MODEL``).
"""

from __future__ import annotations

from dataclasses import dataclass

from attnproof.symbolic import FORMATS


@dataclass(frozen=True)
class Rounding:
    """One format on one backend: the unit roundoff of a basic operation (``u``, the format's
    2^-p, or slightly more where the backend computes in float32 and rounds), exp's accuracy in
    units of it (``c_exp``), and where both come from."""

    u: float
    c_exp: int
    source: str
    c_log: int = 2  # log's accuracy relative to its result, in units of u


_U = {name: fmt.unit_roundoff for name, fmt in FORMATS.items()}
# float16 and bfloat16 are computed in float32 and rounded back on every backend here: one
# operation is then off by at most u + u_float32 (two roundings), not u
_VIA_FLOAT32 = {d: _U[d] + _U["float32"] for d in ("float16", "bfloat16")}
_MEASURED = ("measured by scripts/rounding_model.py over 10^6 arguments of the ranges the route "
             "checks: the largest error relative to the result is {:.2f}u for exp and {:.2f}u "
             "for log; declared with room above it")

ROUNDING_MODEL = {
    ("numpy", "float64"): Rounding(_U["float64"], 2, "IEEE 754 operations; glibc's exp and log, "
                                   "within 1 ulp (≤ 2u) by its manual; " + _MEASURED.format(
                                       1.16, 1.08), c_log=2),
    # XLA's float64 exp is off by up to 2.35u on negative arguments (2.33u at x = −34.3 over
    # 10^7): c_exp = 2 was declared from positive arguments alone, which the run's own check
    # then measured too
    ("jax", "float64"): Rounding(_U["float64"], 3, "IEEE 754 operations; XLA's exp and log; "
                                 + _MEASURED.format(2.35, 1.00), c_log=2),
    # NumPy's float32 log is off by up to 4.03u (4.12u at x = 0.772 over 10^7), where its result
    # is small: c_log = 4 held on the 4,096 arguments a run used to draw, not on every draw
    ("numpy", "float32"): Rounding(_U["float32"], 4, "IEEE 754 operations; NumPy's vectorized "
                                   "float32 exp and log; " + _MEASURED.format(3.30, 4.03),
                                   c_log=5),
    ("jax", "float32"): Rounding(_U["float32"], 2, "IEEE 754 operations; XLA's exp and log; "
                                 + _MEASURED.format(1.36, 1.90), c_log=3),
    ("mlx", "float32"): Rounding(_U["float32"], 72, "IEEE 754 operations; MLX's exp, whose "
                                 "error grows with |x| (8.7u on [−10, 10], 64u near ±80), and "
                                 "log; " + _MEASURED.format(62.93, 1.23), c_log=2),
    **{(b, d): Rounding(_VIA_FLOAT32[d], 2, "computed in float32 and rounded to the format: an "
                        "operation is off by at most u + 2^-24, exp and log by u plus float32's "
                        "error; " + _MEASURED.format(1.00, 1.00), c_log=2)
       for b in ("numpy", "jax", "mlx") for d in ("float16", "bfloat16")},
}
# why a format has no model: MLX's float64 on the CPU computes exp (and, measured here, sums and
# products of the backward pass) in float32; a model declaring float64 operations with exp's
# float32 error (c_exp = 2^35) was refuted by its own check (observed/B up to 1.3e5)
NO_MODEL = {("mlx", "float64"): " (MLX's float64 computes exp and other operations in float32)"}
