"""Shared by the numeric routes of the limit and series kinds: evaluating one expression of a
theorem on a backend, in a dtype, on a batch of inputs."""

from __future__ import annotations

import math

import numpy as np

from attnproof.symbolic import Positive

from ..route import compile_expression, to_numpy

# the unit roundoff each format is measured in (MLX float64 computes exp in float32)
EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def epsilon(row, dtype: str) -> float:
    return EPSILON[row.measured_as(dtype)]


def evaluate(theorem, expr, out, row, dtype: str, device: str, mode: str, arrays: dict,
             sizes: dict) -> np.ndarray:
    """``expr`` compiled for ``row``'s array module and evaluated on ``arrays`` (float64 NumPy
    arrays with a leading batch axis), placed in ``dtype``; the result as float64 NumPy."""
    compiled = compile_expression(expr, out, inputs=theorem.inputs,
                                  definitions=theorem.definitions, target=row.target)
    xp = row.namespace(row.load(), dtype)
    return run_compiled(row, xp, compiled, arrays, sizes, dtype, device, mode)


def run_compiled(row, xp, compiled, arrays: dict, sizes: dict, dtype: str, device: str,
                 mode: str) -> np.ndarray:
    """A compiled statement run on ``row``'s device: ``arrays`` (float64 NumPy) placed in
    ``dtype``, jitted in jit mode; the result as float64 NumPy."""
    place = row.devices()[device]
    with row.scope(place):
        placed = {k: row.place(xp, v, dtype, place) for k, v in arrays.items()}

        def function(traced):
            return compiled(xp, traced, sizes)

        run = row.compile(function) if mode == "jit" else function
        with np.errstate(all="ignore"):  # overflow shows up as inf/nan and is judged there
            return to_numpy(run(placed))


def draw_uniform(domain, shape, rng) -> np.ndarray:
    """Values from a domain: log-uniform for ``Positive``, uniform on [low, high] otherwise."""
    if isinstance(domain, Positive):
        return np.exp(rng.uniform(math.log(domain.low), math.log(domain.high), size=shape))
    return rng.uniform(getattr(domain, "low", -1.0), getattr(domain, "high", 1.0), size=shape)
