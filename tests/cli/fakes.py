"""Stand-ins for ``numeric`` records and the ``numeric`` module, so these tests need no backend."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class FakeRecord:
    backend: str = "numpy"
    dtype: str = "float64"
    device: str = "cpu"
    mode: str = "eager"
    status: str = "passed"
    examples: int = 10
    instances: int = 640
    max_error_ulps: float | None = 3.0
    max_error_bits: float | None = 2.0
    seconds: float = 0.5
    counterexample: dict | None = None
    replay: str | None = None
    reason: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


class FakeNumeric:
    """A ``numeric`` module whose checks fail exactly where ``x = 2x`` is claimed.

    ``raising`` names a backend whose check raises, to exercise the per-record error path.
    """

    def __init__(self, configurations, raising: str | None = None):
        self.configurations = configurations
        self.raising = raising
        self.calls: list[tuple] = []

    def available_configurations(self, theorem, profile=None):
        return list(self.configurations)

    def check(self, theorem, backend, dtype, device, mode, profile="default"):
        self.calls.append((theorem.name, backend, dtype, device, mode, profile))
        if backend == self.raising:
            raise RuntimeError("backend exploded")
        false = theorem.claim.rhs == 2 * theorem.claim.lhs
        if not false:
            return FakeRecord(backend, dtype, device, mode)
        return FakeRecord(backend, dtype, device, mode, status="failed",
                          counterexample={"x[0]": 1.0}, replay="attnproof replay x")
