"""Hand-made numeric records and a stand-in ``numeric`` module, so these tests need no backend."""

from __future__ import annotations

from attnproof.numeric import NumericRecord

_MEASURED = {"status": "passed", "examples": 10, "instances": 640, "max_error_ulps": 3.0,
             "max_error_bits": 2.0, "seconds": 0.5}


def record(backend: str = "numpy", dtype: str = "float64", device: str = "cpu",
           mode: str = "eager", **fields) -> NumericRecord:
    """A record of one configuration, passed with small errors unless ``fields`` say otherwise."""
    return NumericRecord(backend, dtype, device, mode, **{**_MEASURED, **fields})


class FakeNumeric:
    """A ``numeric`` module whose checks fail exactly where ``x = 2x`` is claimed.

    ``raising`` names a backend whose check raises, to exercise the per-record error path;
    ``cannot_start`` maps a backend installed but unable to start to why.
    """

    def __init__(self, configurations, raising: str | None = None,
                 cannot_start: dict[str, str] | None = None):
        self.configurations = configurations
        self.raising = raising
        self.cannot_start = cannot_start or {}
        self.calls: list[tuple] = []

    def available_configurations(self, theorem, profile=None):
        return list(self.configurations)

    def backends_that_cannot_start(self) -> dict[str, str]:
        return dict(self.cannot_start)

    def check(self, theorem, backend, dtype, device, mode, profile="default"):
        self.calls.append((theorem.name, backend, dtype, device, mode, profile))
        if backend == self.raising:
            raise RuntimeError("backend exploded")
        false = theorem.claim.rhs == 2 * theorem.claim.lhs
        if not false:
            return record(backend, dtype, device, mode)
        return record(backend, dtype, device, mode, status="failed",
                      counterexample={"x[0]": 1.0}, replay="attnproof replay x")
