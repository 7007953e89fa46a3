"""The numeric record: one per (theorem, backend, dtype, device, mode), from the checker to the
results JSON unchanged in type."""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, fields

import numpy as np

from ._backends import reference_names

# Truth is decided in float64 by a reference backend (a row of the backend table says which;
# MLX float64 is never one: its exp is accurate only to ~2e-6 on CPU), and low precision is a
# stability property only.
TRUTH_DTYPE = "float64"
# A record's reason that holds this reports a defect of the code under test found on the way (its
# values may still pass): shown beside the evidence whatever the status.
FINDING = "finding: "
# ... and one that holds this, a backend that broke the rounding model declared for it (an exp
# that overflows before its format does): the instances it touched are set aside as outside the
# model, the theorem keeps its verdict, and the report lists the backend's fault on its own.
# The sentence up to its first ";" says what the backend did.
BACKEND_FINDING = "finding about the backend: "
# ... and one that holds this counts rows a format could not hold, set aside from its instances:
# shown beside the evidence too, so that no row set aside is visible only in the JSON
NOT_EVALUATED = "drawn row(s) not evaluated in"


class NumericStatus(enum.StrEnum):
    """A record's status; the values are the strings the results JSON holds."""

    PASSED = "passed"
    FAILED = "failed"
    # false in float64, but this format cannot tell the error from its rounding
    NOT_DECISIVE = "not-decisive"
    # fewer decided instances than the evidence rule asks (``_driver.py``): no verdict
    TOO_FEW = "too-few"
    # float64 strays from the 50-digit evaluation of the same statement
    INCONSISTENT = "inconsistent"
    SKIPPED = "skipped"
    ERROR = "error"


class CellStatus(enum.StrEnum):
    """A kernel checker cell's status (``attnproof kernels``): the record statuses in a kernel's
    words, a failure named by what the kernel did. Each is one record status
    (:attr:`record_status`), chosen by the same rules (``_driver.settle_cell``); the values are
    the strings the conformance JSON holds."""

    CONFORMS = "conforms"  # passed: at least MINIMUM_DECIDED_CASES decided cases, none failed
    FAILS = "fails"  # failed: an error over the conformance limit
    RAISED = "raised"  # failed: the kernel raised on a case it supports
    LAYOUT = "layout"  # failed: outputs of the wrong shape for the declared layout
    DECLARATION = "declaration"  # failed: the kernel refused what its declaration promises
    CRASHED = "crashed"  # failed: the kernel's worker died on a case (a segfault, an exit)
    TIMED_OUT = "timed-out"  # failed: a case ran past the time limit, and its worker was killed
    TOO_FEW = "too-few"  # fewer decided cases than the evidence rule asks: no verdict
    NOT_APPLICABLE = "n/a"  # skipped: the property does not apply to this kernel
    SKIPPED = "skipped"  # skipped: not run here (no framework, no device, no time)

    @property
    def record_status(self) -> NumericStatus:
        return _RECORD_STATUS.get(self, NumericStatus.FAILED)

    @property
    def failing(self) -> bool:
        return self.record_status == NumericStatus.FAILED


_RECORD_STATUS = {CellStatus.CONFORMS: NumericStatus.PASSED, CellStatus.TOO_FEW:
                  NumericStatus.TOO_FEW, CellStatus.NOT_APPLICABLE: NumericStatus.SKIPPED,
                  CellStatus.SKIPPED: NumericStatus.SKIPPED}
# a cell's failure, by the word a case's result gives it (``attnproof/kernels/_run.py``), or
# by what ended the worker running the case (``attnproof/kernels/_isolated.py``)
CELL_FAILURES = {"fail": CellStatus.FAILS, "raised": CellStatus.RAISED,
                 "layout": CellStatus.LAYOUT, "declaration": CellStatus.DECLARATION,
                 "crashed": CellStatus.CRASHED, "timed-out": CellStatus.TIMED_OUT}


@dataclass
class NumericRecord:
    """The outcome of checking one theorem on one backend, dtype, device and mode.

    ``max_error_ulps`` / ``max_error_bits``: the worst lhs-rhs error in float64 on a reference
    backend, else the worst error of a side against float64 or, in a failed record, of the
    comparison that failed it; in ulps of the dtype (of float32 for MLX float64).
    ``ground_truth_ulps``: the worst float64 error against a 50-digit mpmath evaluation on small
    instances, on records that decide truth (None elsewhere, or if the claim has no exact form).
    ``undecided``: rows left out because the statement's own float64 value or its error scale
    was not finite (``_evidence``: the truth decides what is undefined).
    ``refutes``: the record failed because code (an ``implementation=``, autodiff) was NaN or
    ±∞ in float64, and in this format, where the statement is finite: a counterexample that no
    format's rounding explains, so it refutes the claim even on a record that does not decide
    truth by comparison (a lower format, MLX float64).
    """

    backend: str
    dtype: str
    device: str
    mode: str
    status: NumericStatus
    examples: int = 0
    instances: int = 0
    max_error_ulps: float | None = None
    max_error_bits: float | None = None
    seconds: float = 0.0
    counterexample: dict | None = None
    replay: str | None = None
    reason: str | None = None
    ground_truth_ulps: float | None = None
    undecided: int = 0
    refutes: bool = False

    def __post_init__(self) -> None:
        self.status = NumericStatus(self.status)

    @property
    def decides_truth(self) -> bool:
        return self.dtype == TRUTH_DTYPE and self.backend in reference_names()

    @property
    def counterexample_stands(self) -> bool:
        """A failure that refutes the claim: one decided in float64 on a reference backend, or
        code that is not finite where the statement is (``refutes``), on any record."""
        return self.status == NumericStatus.FAILED and (self.decides_truth or self.refutes)

    def to_json(self) -> dict:
        """The record as JSON values (NumPy numbers and arrays become Python ones)."""
        return json.loads(json.dumps(asdict(self), default=_jsonable))

    @classmethod
    def from_json(cls, data: dict) -> NumericRecord:
        """A record from its JSON object; keys that are not fields (a theorem name) are ignored,
        missing optional ones (older schemas) take their defaults."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def _jsonable(value: object) -> object:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
