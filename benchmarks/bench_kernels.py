"""Time to check one kernel across every property and dtype, beside the time of the same number
of plain reference evaluations (forward and backward, same cases, same dtypes), in one run:
the machine is shared and noisy, so only the ratio from one run means much.

Run: python benchmarks/bench_kernels.py [--kernel SPEC] [--examples N] [--apart P ...]
     (SPEC as for `attnproof kernels`; default: the planted correct NumPy kernel in all four
     dtypes, computing in float32; --apart P times the properties P on their own beside the
     others, in the same run: the cost of some properties as a ratio, e.g. --apart
     batch_independence --apart history_independence)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.kernels.planted

from attnproof.kernels import check_kernel  # noqa: E402
from attnproof.kernels._cases import instance  # noqa: E402
from attnproof.kernels._spec import load  # noqa: E402
from attnproof.kernels._truth import OUTPUTS, reference  # noqa: E402
from attnproof.symbolic import format_named  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default=None)
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--apart", metavar="P", action="append",
                        help="time property P apart from the others (repeatable)")
    parser.add_argument("--overheads", action="store_true",
                        help="also time, within the check, the precision estimate's probe "
                             "reference and the regimes reached")
    args = parser.parse_args()
    spent = _timed_overheads() if args.overheads else None
    if args.kernel is None:
        from tests.kernels.planted import correct

        kernel = dataclasses.replace(correct, dtypes=("float64", "float32", "float16",
                                                      "bfloat16"))
    else:
        kernel = load(args.kernel)
    cases = []
    if args.apart:
        _apart(kernel, args.examples, args.apart)
    for name in spent or ():  # what the check below spends only
        spent[name] = 0.0
    started = time.perf_counter()
    result = check_kernel(kernel, examples=args.examples,
                          on_case=lambda case, dtype: cases.append((case, dtype)))
    checking = time.perf_counter() - started
    started = time.perf_counter()
    for case, name in cases:  # the callback is told the cell's dtype by name
        dtype = format_named(name)
        compute = kernel.compute_for(dtype)
        reference(instance(case, dtype, compute), compute, dtype, OUTPUTS)
    plain = time.perf_counter() - started
    cells = len(result.cells)
    print(f"kernel {kernel.name}: {cells} cells (properties x dtypes), {len(cases)} cases, "
          f"{sum(c.status == 'conforms' for c in result.cells)} conform, "
          f"{len(result.failures())} fail")
    print(f"check, every property and dtype:            {checking:8.2f} s")
    print(f"{len(cases)} plain reference evaluations (fwd+bwd): {plain:8.2f} s")
    print(f"ratio: {checking / plain:.1f}x")
    if spent is not None:
        for name, seconds in spent.items():
            print(f"  of which {name}: {seconds:.2f} s ({seconds / checking:.1%})")


def _timed_overheads() -> dict[str, float]:
    """Wrap the precision estimate's probe reference and the regimes reached with timers."""
    from attnproof.kernels import _run

    spent = {"the precision probe's reference": 0.0, "the regimes reached": 0.0}
    reference_of, reached_of = _run.reference, _run.regimes.reached

    def reference_timed(x, compute, *rest, **keywords):
        started = time.perf_counter()
        try:
            return reference_of(x, compute, *rest, **keywords)
        finally:
            if compute.startswith("bits"):
                spent["the precision probe's reference"] += time.perf_counter() - started

    def reached_timed(*arguments):
        started = time.perf_counter()
        try:
            return reached_of(*arguments)
        finally:
            spent["the regimes reached"] += time.perf_counter() - started

    _run.reference = reference_timed
    _run.regimes.reached = reached_timed
    return spent


def _apart(kernel, examples: int, apart: list[str]) -> None:
    """The properties ``apart`` checked on their own, then the others, each timed."""
    from attnproof.kernels import PROPERTIES

    others = [p.name for p in PROPERTIES if p.name not in apart]
    timed = {}
    for name, chosen in (("the others", others), ("apart", apart)):
        counted = []
        started = time.perf_counter()
        result = check_kernel(kernel, properties=chosen, examples=examples,
                              on_case=lambda case, dtype, seen=counted: seen.append(case))
        timed[name] = time.perf_counter() - started
        print(f"{len(chosen)} properties ({name if name != 'apart' else ', '.join(apart)}): "
              f"{len(result.cells)} cells, {len(counted)} cases, {timed[name]:.2f} s")
    print(f"apart / the others: {timed['apart'] / timed['the others']:.2f}x; with them the "
          f"check takes {(timed['apart'] + timed['the others']) / timed['the others']:.2f}x "
          "its time without them")


if __name__ == "__main__":
    main()
