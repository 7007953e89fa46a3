"""The generic proof-harness test, collected by the pytest plugin for a user's theorem
directories (``--attnproof-theorems DIR``) and reused by the repository's own harness.

Each theorem is one symbolic test and one numeric test per configuration ``attnproof prove``
checks (backend × dtype × device in each backend's default mode under the default profile;
``--attnproof-profile thorough`` adds every other mode, eager JAX; ``--attnproof-device D``
keeps one device or kind); each attaches its record to the pytest report, so the plugin's
controller can write the same report as ``attnproof prove`` (``reports/pytest/`` by default).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest

from . import numeric
from ._cache import cached_proof
from .numeric import NumericStatus
from .report import unstable_format_name
from .symbolic import PROOF_TIME_LIMIT, ProofResult, ProofStatus, Theorem, discover, prove

if TYPE_CHECKING:
    from os import PathLike

    from ._workers import ConfigurationNames
    from .kernels._harness import Loaded
    from .numeric import NumericRecord
    from .symbolic import Catalog

# pytest's ``record_property`` fixture: ``record_property(name, value)``
RecordProperty = Callable[[str, object], None]


class Configured(Protocol):
    """What is set on pytest's ``Config``, which declares none of it: by the plugin's
    ``pytest_configure`` the theorems and the kernels the session checks (None when it names
    none), and by xdist, on a worker, what the worker sends its controller at the end."""

    attnproof_catalog: Catalog | None
    attnproof_kernels: Loaded | None
    workeroutput: dict[str, Any]


# formats in which every false claim of the catalog and the planted variants is refuted
# (scripts/calibrate.py shows the margins); float16 and bfloat16 may answer "not-decisive"
SEPARATING_DTYPES = ("float64", "float32")


def profile_name(chosen: str | None = None) -> str:
    """The profile the harness runs: ``--attnproof-profile``, else the one ``numeric.check``
    takes by default (``$ATTNPROOF_PROFILE``, else "default", as ``attnproof prove``).

    Raises:
        ValueError: an unknown profile name.
    """
    return numeric.profile(chosen).name


def on_devices(device: str, devices: Iterable[str] | None) -> bool:
    """Whether ``device`` is one of ``devices`` (names as ``attnproof prove --device`` takes
    them: a kind such as ``gpu`` matches every device of that kind, ``gpu:1`` one device)."""
    if not devices:
        return True
    from .numeric import selected_devices

    return bool(selected_devices([device], devices))  # the rule of `attnproof prove --device`


def configurations(theorem: Theorem, profile: str | None = None,
                   devices: Iterable[str] | None = None) -> list[ConfigurationNames]:
    """The (backend, dtype, device, mode) configurations of ``theorem`` that ``attnproof prove
    --profile PROFILE`` checks here: the function its runner calls, with the profile choosing the
    modes (each backend's default mode, or every mode for a profile that runs them), kept to
    ``devices`` when given."""
    found = numeric.available_configurations(theorem, profile=profile_name(profile))
    # a ``Configuration`` is a NamedTuple of exactly these four names
    return [cast("ConfigurationNames", tuple(c)) for c in found if on_devices(c.device, devices)]


def selection(config: pytest.Config | None = None) -> tuple[str, tuple[str, ...] | None]:
    """The profile and devices a pytest session asks for (``--attnproof-profile``,
    ``--attnproof-device``; the defaults without a config or without the plugin)."""
    chosen = config.getoption("attnproof_profile", None) if config is not None else None
    devices = config.getoption("attnproof_device", None) if config is not None else None
    return profile_name(chosen), (tuple(devices) if devices else None)


def numeric_cases(theorems: Iterable[Theorem], config: pytest.Config | None = None
                  ) -> list[pytest.ParameterSet]:
    """One pytest case per theorem and configuration, for the session's ``selection``."""
    profile, devices = selection(config)
    return [pytest.param(theorem, backend, dtype, device, mode,
                         id=f"{theorem.name}-{backend}-{dtype}-{device}-{mode}")
            for theorem in theorems
            for backend, dtype, device, mode in configurations(theorem, profile, devices)]


def proof_of(theorem: Theorem) -> ProofResult:
    """The prover's result, through the same cache as ``attnproof prove``: a proof made by
    either is reused by the other while the statement and the prover's source are unchanged."""
    return cached_proof(theorem, PROOF_TIME_LIMIT, lambda: prove(theorem, PROOF_TIME_LIMIT))


def check_symbolic(theorem: Theorem, record_property: RecordProperty | None = None) -> None:
    """The symbolic route must not err, and must agree with the theorem's ``expect``."""
    result = proof_of(theorem)
    if record_property is not None:
        record_property("attnproof.symbolic",
                        json.dumps({"theorem": theorem.name, **result.to_json()}))
    _require(result.status != ProofStatus.ERROR, f"the symbolic route erred: {result.method}")
    if theorem.expect == "holds":
        _require(result.status != ProofStatus.REFUTED,
                 f"refuted symbolically, expected to hold: {result.counterexample}")
    else:
        _require(result.status not in (ProofStatus.PROVED, ProofStatus.PROVED_BOUNDED),
                 f"proved ({result.method}), expected to be refuted")


def check_numeric(theorem: Theorem, backend: str, dtype: str, device: str, mode: str,
                  record_property: RecordProperty | None = None,
                  profile: str | None = None) -> None:
    """One numeric record, searched as hard as ``profile`` says (default: ``profile_name``),
    must agree with the theorem's ``expect`` (skipped where the configuration cannot run
    here). A record of another mode (eager JAX under the thorough profile) is judged as any
    other: one that strays from the 50-digit evaluation, or a float64 counterexample beside a
    proof, fails here and makes the theorem "inconsistent" in the report."""
    record = numeric.check(theorem, backend, dtype, device, mode, profile=profile_name(profile))
    if record_property is not None:
        record_property("attnproof.numeric",
                        json.dumps({"theorem": theorem.name, **record.to_json()}))
    if record.status == NumericStatus.SKIPPED:
        # pytest's stub asks a str, but ``Skipped`` takes None too: a record skipped unexplained
        pytest.skip(record.reason)  # type: ignore[arg-type]
    _require(record.status != NumericStatus.ERROR, f"the check erred: {record.reason}")
    if getattr(theorem.claim, "measures_rounding", True):
        assert record.max_error_ulps is not None and record.max_error_bits is not None
    if theorem.expect == "holds":
        # a lower format may lack the instances to pass (a record needs a stated minimum of
        # decided ones); truth in float64 may not
        allowed: tuple[NumericStatus, ...] = ((NumericStatus.PASSED,) if record.decides_truth
                   else (NumericStatus.PASSED, NumericStatus.TOO_FEW))
        declared = unstable_format_name(backend, dtype) in theorem.unstable_in
        if declared and not record.decides_truth and not record.refutes:  # and shown
            allowed += (NumericStatus.FAILED,)
        _require(record.status in allowed, explain(record))
        assert record.instances >= 1 or record.status == NumericStatus.TOO_FEW
    elif dtype in SEPARATING_DTYPES:
        _require(record.status == NumericStatus.FAILED,
                 f"a claim expected false was not refuted ({explain(record)})")
        assert record.counterexample, "a refutation must show its counterexample"
    else:  # too coarse to see every slip, but never fooled by one
        _require(record.status in (NumericStatus.FAILED, NumericStatus.NOT_DECISIVE),
                 explain(record))


def _require(agrees: bool, message: str) -> None:
    """A verdict that disagrees with the theorem's ``expect`` fails its test with one line (the
    record's status, counterexample, replay and reason), not a traceback of the harness: a
    false claim declared true fails each of its records, and each should read as a sentence."""
    if not agrees:
        pytest.fail(message, pytrace=False)


def explain(record: NumericRecord) -> str:
    parts = [f"status {record.status}"]
    if record.counterexample:
        parts.append(f"counterexample {record.counterexample}")
    if record.replay:
        parts.append(f"replay: {record.replay}")
    if record.reason:
        parts.append(record.reason)
    return "; ".join(parts)


# -- the generic test, parametrized by the plugin's configuration -------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # set by the plugin's ``pytest_configure``: this module is collected only when it is not None
    catalog = cast("Configured", metafunc.config).attnproof_catalog
    assert catalog is not None  # as above: the plugin adds this module only for a catalog
    theorems = catalog.theorems
    if metafunc.function is test_symbolic:
        metafunc.parametrize("theorem", theorems, ids=lambda t: t.name)
    elif metafunc.function is test_numeric:
        metafunc.parametrize(("theorem", "backend", "dtype", "device", "mode"),
                             numeric_cases(theorems, metafunc.config))


def test_symbolic(theorem: Theorem, record_property: RecordProperty) -> None:
    check_symbolic(theorem, record_property)


def test_numeric(theorem: Theorem, backend: str, dtype: str, device: str, mode: str,
                 record_property: RecordProperty, request: pytest.FixtureRequest) -> None:
    profile, _ = selection(request.config)
    check_numeric(theorem, backend, dtype, device, mode, record_property, profile)


def load(directories: Iterable[str | PathLike[str]], include_catalog: bool) -> Catalog:
    """The theorems the plugin runs: the user's directories, the catalog if asked for."""
    from .symbolic import CATALOG_DIR

    return discover(([CATALOG_DIR] if include_catalog else []) + list(directories))


def test_theorem_files_load(request: pytest.FixtureRequest) -> None:
    catalog = cast("Configured", request.config).attnproof_catalog
    assert catalog is not None  # the plugin adds this module only for a catalog
    errors = catalog.errors
    _require(not errors, "\n".join(error.message for error in errors))
