"""Per-theorem results, the verdict that combines proof and numeric evidence, and results JSON.

The JSON is versioned (``schema``, documented in ``RESULTS.md`` beside this module) so tools can
rely on it; ``write_json`` is atomic, so a reader never sees half a file and an interrupted run
leaves the previous results in place.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import math
import os
import platform
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnproof.numeric import BACKENDS, NumericRecord, NumericStatus
from attnproof.symbolic import ProofStatus

from . import verdict as verdict_rules
from .verdict import TheoremStatus

if TYPE_CHECKING:
    from collections.abc import Iterable

    from attnproof.symbolic import ProofResult

# A file path as the callers give one: a string or a ``Path``
PathName = str | os.PathLike[str]
# A value on its way to JSON: a dict, list or scalar of anything ``json.dumps`` may meet
JsonValue = Any

SCHEMA = 4
# Schema 1 lacked assumptions, partial_reason and run; schema 2 lacked a numeric record's
# ground_truth_ulps; schema 3 its refutes. Missing fields default when read.
READABLE_SCHEMAS = (1, 2, 3, 4)




STATUSES = tuple(TheoremStatus)

VERSIONED_PACKAGES = ("sympy", *(row.package for row in BACKENDS))


@dataclass
class SymbolicOutcome:
    """The schema's view of a ``symbolic.ProofResult`` (its lemmas are not reported)."""

    status: ProofStatus
    method: str
    max_size: int | None = None
    seconds: float = 0.0
    counterexample: dict | None = None
    residual: str | None = None

    def __post_init__(self) -> None:
        self.status = ProofStatus(self.status)

    @classmethod
    def from_record(cls, record: ProofResult | SymbolicOutcome | dict[str, Any]
                    ) -> SymbolicOutcome:
        """From a ``ProofResult`` or its JSON object; fields the schema lacks are dropped."""
        data = record if isinstance(record, dict) else vars(record)
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass
class TheoremResult:
    name: str
    source: str
    expect: str | None
    status: TheoremStatus
    ok: bool
    corrects: str | None = None
    # the document says the statement is false: its refutation confirms the document
    denied: bool = False
    note: str = ""
    statement_latex: str = ""
    definitions_latex: list[str] = field(default_factory=list)
    origin: str = ""
    assumptions: list[dict] = field(default_factory=list)
    symbolic: SymbolicOutcome | None = None
    numeric: list[NumericRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.status = TheoremStatus(self.status)

    def to_json(self) -> dict:
        data = asdict(self)
        data["symbolic"] = None if self.symbolic is None else asdict(self.symbolic)
        return data

    @classmethod
    def from_json(cls, data: dict) -> TheoremResult:
        data = dict(data)
        if data.get("symbolic") is not None:
            data["symbolic"] = SymbolicOutcome(**data["symbolic"])
        data["numeric"] = [NumericRecord.from_json(r) for r in data.get("numeric", [])]
        return cls(**data)


@dataclass(frozen=True)
class ErrorEntry:
    """A theorem file that could not be loaded, or a theorem whose worker died or hung."""

    path: str
    theorem: str | None
    message: str


@dataclass
class Report:
    theorems: list[TheoremResult]
    errors: list[ErrorEntry]
    partial: bool = False
    generated: str = ""
    environment: dict = field(default_factory=dict)
    partial_reason: str = ""
    run: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors and all(t.ok for t in self.theorems)


def result_from_records(description: dict[str, Any],
                        symbolic: ProofResult | SymbolicOutcome | dict[str, Any] | None,
                        numeric: list[NumericRecord],
                        failure: str | None = None) -> TheoremResult:
    """A theorem's result from its ``describe`` fields and the records its checks produced;
    ``symbolic`` is a ``ProofResult``, a :class:`SymbolicOutcome` or its JSON object, or None.

    ``failure`` (a worker death, a crashed test) forces the status to ``error``.
    """
    proof = None if symbolic is None else SymbolicOutcome.from_record(symbolic)
    status, ok = verdict(description.get("expect"), proof, numeric,
                         description.get("unstable_in", ()))
    if failure:
        status, ok = TheoremStatus.ERROR, False
    names = {f.name for f in fields(TheoremResult)}
    known = {k: v for k, v in description.items() if k in names}
    return TheoremResult(**{**known, "status": status, "ok": ok, "symbolic": proof,
                            "numeric": list(numeric)})


# -- verdict -------------------------------------------------------------------------------------


def verdict(expect: str | None, symbolic: SymbolicOutcome | ProofResult | None,
            numeric: Iterable[NumericRecord],
            unstable_in: Iterable[str] = ()) -> tuple[TheoremStatus, bool]:
    """The theorem's status and whether that outcome is the one its declaration expects.

    ``symbolic`` has a ``.status`` (a ``ProofResult``, or None when no proof was attempted);
    ``numeric`` is a sequence of :class:`NumericRecord`; ``unstable_in`` the lower formats in
    which the theorem declares a known instability. The rules are ``verdict.compose``'s.
    """
    records = list(numeric)
    status = verdict_rules.compose(expect, symbolic, records)
    return status, verdict_rules.is_ok(expect, status, records, unstable_in)


def is_stability_failure(record: NumericRecord) -> bool:
    """A failure that does not decide truth: low precision, or a non-reference float64, where
    no code was NaN or ±∞ where the statement is finite."""
    return record.status == NumericStatus.FAILED and not record.counterexample_stands


# -- environment ---------------------------------------------------------------------------------


def environment(theorems: list[TheoremResult]) -> dict:
    """Versions of Python and the array libraries (null when absent), and the devices used.

    Devices are read from the records rather than by importing JAX or MLX in this process.
    """
    versions = {name: _version(name) for name in VERSIONED_PACKAGES}
    devices = sorted({f"{r.backend}:{r.device}" for t in theorems for r in t.numeric
                      if r.status != NumericStatus.SKIPPED})
    return {"python": platform.python_version(), **versions, "devices": devices}


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


# -- JSON ----------------------------------------------------------------------------------------


def report_to_json(report: Report) -> dict:
    return {
        "schema": SCHEMA,
        "partial": report.partial,
        "partial_reason": report.partial_reason,
        "run": report.run,
        "generated": report.generated,
        "environment": report.environment,
        "theorems": [t.to_json() for t in report.theorems],
        "errors": [asdict(e) for e in report.errors],
    }


def report_from_json(data: dict) -> Report:
    if data.get("schema") not in READABLE_SCHEMAS:
        raise ValueError(f"results schema {data.get('schema')!r} is not one of "
                         f"{', '.join(map(str, READABLE_SCHEMAS))}")
    return Report(
        theorems=[TheoremResult.from_json(t) for t in data["theorems"]],
        errors=[ErrorEntry(**e) for e in data["errors"]],
        partial=data["partial"],
        generated=data["generated"],
        environment=data["environment"],
        partial_reason=data.get("partial_reason", ""),
        run=data.get("run", {}),
    )


def read_json(path: PathName) -> Report:
    return report_from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def write_json(report: Report, path: PathName) -> None:
    text = json.dumps(_finite(report_to_json(report)), indent=2, allow_nan=False,
                      default=_fallback) + "\n"
    write_atomic(path, text)


def write_atomic(path: PathName, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same directory and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temporary, readable_mode())
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def readable_mode() -> int:
    """The mode a new file gets under the current umask (``mkstemp`` would make it 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _finite(value: JsonValue) -> JsonValue:
    """JSON has no inf or nan; they are written as the strings "inf", "-inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _fallback(value: object) -> JsonValue:
    """NumPy scalars and arrays become Python numbers and lists; anything else its string."""
    if hasattr(value, "tolist"):
        return _finite(value.tolist())
    return str(value)
