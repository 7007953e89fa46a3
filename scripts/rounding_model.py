"""Measure what each backend's rounding model declares (``numeric/_rounding.py``): exp's and
log's largest error relative to the result, in units of the format's u, over the ranges the
error-bound route checks on every run, and where the backend's exp stops being finite against
where the format's does.

    python scripts/rounding_model.py [--samples N]

A figure above the declared c_exp or c_log, or an exp limit below the format's, is a finding
about the backend: the catalog's error-bound records then say so (``finding:``) and set the
instances it touches aside as outside the model.
"""

from __future__ import annotations

import argparse

import numpy as np

from attnproof.numeric import ROUNDING_MODEL
from attnproof.numeric._backends import backend
from attnproof.numeric.kinds.error_bound import Evaluation, backend_version
from attnproof.symbolic import format_named
from attnproof.theorems import rounding


def measure(name: str, dtype: str, samples: int) -> str:
    row = backend(name)
    try:
        row.load()
    except ImportError:
        return f"{name:6} {dtype:9} not installed"
    evaluation = Evaluation(rounding.softmax_unshifted_error_bound, row, format_named(dtype),
                            "cpu")
    model = ROUNDING_MODEL[(name, dtype)]
    rng = np.random.default_rng(0)
    low = -15.0 if dtype == "float16" else -80.0
    arguments = {"exp": rng.uniform(low, 10.0, samples),
                 "log": np.exp(rng.uniform(-9.0 if dtype == "float16" else -20.0, 11.0,
                                           samples))}
    worst = {}
    for function, x in arguments.items():
        x = x.astype(evaluation.dtype_numpy).astype(np.float64)
        worst[function] = float(evaluation.function_errors(function, x).max())
    domain = evaluation.exp_domain()
    early = "  EARLY" if domain.early else ""
    return (f"{backend_version(row):14} {dtype:9} exp {worst['exp']:7.2f}u (c_exp {model.c_exp:3})"
            f"  log {worst['log']:5.2f}u (c_log {model.c_log})  exp finite up to "
            f"{domain.limit!r}, the format's {domain.expected!r}{early}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10**6)
    args = parser.parse_args()
    for name, dtype in ROUNDING_MODEL:
        print(measure(name, dtype, args.samples), flush=True)


if __name__ == "__main__":
    main()
