"""Timing helper shared by the benchmark scripts."""

import time


def best_of(function, repeats: int = 7) -> float:
    """The fastest of ``repeats`` timed calls, after one untimed warm-up call."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)
