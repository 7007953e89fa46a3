"""Symbolic provers: for all sizes, for sizes up to k, and exact refutation.

Each attempt runs under a time limit and returns a ``ProofResult`` that says exactly what was
shown: proved for every size, proved for every size up to ``max_size``, refuted with a concrete
counterexample, or not proved (numeric evidence only).
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import random
import signal
import threading
import time
from dataclasses import asdict, dataclass, field

import sympy as sp

from ._domains import Integer, Mask, Positive, Simplex
from ._language import rename_bound_indices
from ._normal_form import residual
from ._theorem import AtLeast, Equals, Rounds, Theorem, free_indices


class ProofStatus(enum.StrEnum):
    """What a proof attempt showed; the values are the strings the results JSON holds."""

    PROVED = "proved"
    PROVED_BOUNDED = "proved-bounded"
    REFUTED = "refuted"
    NOT_PROVED = "not-proved"
    TIMEOUT = "timeout"
    ERROR = "error"


PROVED = ProofStatus.PROVED
PROVED_BOUNDED = ProofStatus.PROVED_BOUNDED
REFUTED = ProofStatus.REFUTED
NOT_PROVED = ProofStatus.NOT_PROVED
TIMEOUT = ProofStatus.TIMEOUT
ERROR = ProofStatus.ERROR
# the method of worked numbers: nothing is symbolic in them, so "for all sizes" does not apply
EXACT_EVALUATION = "exact evaluation"


@dataclass
class ProofResult:
    status: ProofStatus
    method: str
    seconds: float = 0.0
    max_size: int | None = None
    counterexample: dict | None = None
    residual: str | None = None
    lemmas: list[dict] = field(default_factory=list)

    def __post_init__(self):
        self.status = ProofStatus(self.status)

    def to_json(self) -> dict:
        return asdict(self)


class ProofTimeout(Exception):
    pass


def prove(theorem: Theorem, time_limit: float = 60.0, bound: int = 3) -> ProofResult:
    """Prove, bound-prove or refute ``theorem`` within ``time_limit`` seconds."""
    start = time.perf_counter()
    try:
        with _time_limit(time_limit):
            result = _attempt(theorem, bound)
    except ProofTimeout:
        result = ProofResult(TIMEOUT, f"no result within the {time_limit:g} s limit")
    except Exception as error:  # a prover bug must not lose the other theorems' results
        result = ProofResult(ERROR, f"{type(error).__name__}: {error}")
    result.seconds = round(time.perf_counter() - start, 4)
    return result


def _attempt(theorem: Theorem, bound: int) -> ProofResult:
    if theorem.lemmas:
        return _prove_by_lemmas(theorem)
    if isinstance(theorem.claim, AtLeast):
        return ProofResult(NOT_PROVED, "inequality: no symbolic prover; numeric evidence only")
    if isinstance(theorem.claim, Rounds):
        return _check_worked_numbers(theorem.claim)
    difference = claim_difference(theorem, theorem.claim)
    left = _residual(theorem, difference)
    if left == 0:
        return ProofResult(PROVED, "sum normal form (all sizes)")
    counterexample = find_counterexample(theorem, difference)
    if counterexample is not None:
        return ProofResult(
            REFUTED, "exact counterexample at small sizes", counterexample=counterexample,
            residual=str(left),
        )
    largest = _bounded_proof(theorem, difference, bound)
    if largest:
        return ProofResult(PROVED_BOUNDED, f"entry-wise cancellation for sizes <= {largest}",
                           max_size=largest, residual=str(left))
    return ProofResult(NOT_PROVED, "sum normal form left a residual", residual=str(left))


def _prove_by_lemmas(theorem: Theorem) -> ProofResult:
    """A claim about an algorithm: proved when every induction lemma is proved for all sizes."""
    records = []
    for number, lemma in enumerate(theorem.lemmas, 1):
        left = _residual(theorem, claim_difference(theorem, lemma))
        records.append({"lemma": number, "proved": left == 0, "residual": str(left)})
    if all(r["proved"] for r in records):
        method = f"from {len(records)} lemma(s), each proved in sum normal form (all sizes)"
        return ProofResult(PROVED, method, lemmas=records)
    return ProofResult(NOT_PROVED, "a lemma left a residual", lemmas=records)


def _check_worked_numbers(claim: Rounds) -> ProofResult:
    """Evaluate every entry to 50 digits and compare it with the printed decimal."""
    wrong = {}
    for (row, column), printed in _entries(claim.printed):
        value = sp.N(claim.lhs[row, column], 50)
        if not _rounds_to(value, printed):
            # entries are numbered from 1, as a reader counts rows and columns of a table
            wrong[f"({row + 1}, {column + 1})"] = f"{float(value):.6g}, printed {printed}"
    if not wrong:
        return ProofResult(PROVED, f"{EXACT_EVALUATION}: every entry rounds to the printed digits")
    return ProofResult(
        REFUTED, f"{EXACT_EVALUATION}: {len(wrong)} of {claim.lhs.rows * claim.lhs.cols} "
        "entries do not round to the printed digits", counterexample={"entries": wrong},
    )


def _entries(printed):
    for row, values in enumerate(printed):
        for column, text in enumerate(values):
            yield (row, column), text


def _rounds_to(value: sp.Float, printed: str) -> bool:
    """|value − printed| ≤ half a unit in the printed last place (both evaluated exactly)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    half_unit = sp.Rational(1, 2) * sp.Rational(1, 10**decimals)
    if abs(value) < sp.Rational(1, 10 ** (decimals + 2)):
        # rounds as 0 does: the printed value is a multiple of 10^-decimals, so it is either 0
        # or a whole unit away; and an exact rational of e^(-1e9) has 4e8 digits
        value = sp.S.Zero
    return bool(abs(sp.Rational(value) - sp.Rational(printed)) <= half_unit)


def claim_difference(theorem: Theorem, claim: Equals | AtLeast) -> sp.Expr:
    """lhs − rhs with definitions, vocabulary and derivatives expanded."""
    difference = theorem.expand(sp.sympify(claim.lhs)) - theorem.expand(sp.sympify(claim.rhs))
    return rename_bound_indices(difference)


def _simplex_bases(theorem: Theorem):
    return [t.base for t in theorem.tensors if isinstance(t.domain, Simplex)]


def _mask_bases(theorem: Theorem):
    return [t.base for t in theorem.tensors if isinstance(t.domain, Mask)]


def _residual(theorem: Theorem, difference: sp.Expr) -> sp.Expr:
    """The zero test, told which tensors are distributions and which are 0/1 masks."""
    return residual(difference, _simplex_bases(theorem), _mask_bases(theorem))


# -- concrete instances -------------------------------------------------------------------------


def instantiate(theorem: Theorem, expr: sp.Expr, sizes: dict[str, int],
                index_values: dict[str, int]):
    """``expr`` at concrete sizes and index values, with every sum written out."""
    labels = {idx: index_values[str(idx.label)] for idx in free_indices(expr)}
    expr = expr.xreplace(labels)
    dims = {sp.Symbol(name, integer=True, positive=True): n for name, n in sizes.items()}
    expr = expr.xreplace(dims)
    return expr.doit()


def _size_assignments(theorem: Theorem, largest: int):
    names = [d.name for d in theorem.dims]
    for sizes in itertools.product(range(1, largest + 1), repeat=len(names)):
        if max(sizes) == largest:
            yield dict(zip(names, sizes, strict=True))


def _index_assignments(expr: sp.Expr, sizes: dict[str, int]):
    indices = sorted(free_indices(expr), key=lambda i: str(i.label))
    ranges = [range(sizes.get(str(i.upper + 1), 1)) for i in indices]
    for values in itertools.product(*ranges):
        yield {str(i.label): v for i, v in zip(indices, values, strict=True)}


def _bounded_proof(theorem: Theorem, difference: sp.Expr, bound: int) -> int:
    """The largest k such that the identity holds entry by entry for every size <= k."""
    proved = 0
    for largest in range(1, bound + 1):
        for sizes in _size_assignments(theorem, largest):
            for values in _index_assignments(difference, sizes):
                concrete = instantiate(theorem, difference, sizes, values)
                if _residual(theorem, concrete) != 0:
                    return proved
        proved = largest
    return proved


# -- refutation ---------------------------------------------------------------------------------

_SMALL_VALUES = [sp.Rational(v) for v in ("1", "-1", "2", "1/2", "0", "-2", "3/2", "-1/2", "3")]
_POSITIVE_VALUES = [sp.Rational(v) for v in ("2", "1/2", "3", "1/3", "3/2", "5")]


def find_counterexample(theorem: Theorem, difference: sp.Expr, tries: int = 12) -> dict | None:
    """Small sizes and small rationals at which lhs − rhs is provably nonzero (50 digits)."""
    for largest in (1, 2, 3):
        sizes = {d.name: min(largest, d.sizes.high) for d in theorem.dims}
        rng = random.Random(largest)
        draws = [_draw_values(theorem, sizes, rng, attempt) for attempt in range(tries)]
        for index_values in _index_assignments(difference, sizes):
            concrete = instantiate(theorem, difference, sizes, index_values)
            for values in draws:
                value = _evaluate(concrete, values)
                if value is not None and abs(value) > 1e-30:
                    return _describe(sizes, index_values, _used(concrete, values), value)
    return None


def _draw_values(theorem: Theorem, sizes, rng: random.Random, attempt: int) -> dict:
    values: dict[sp.Basic, sp.Expr] = {}
    for scalar in theorem.scalars:
        values[scalar.symbol] = _scalar_value(scalar.domain, rng, attempt)
    for tensor in theorem.tensors:
        shape = [sizes[d.name] for d in tensor.dims]
        for entry in itertools.product(*(range(n) for n in shape)):
            values[(tensor.name, tuple(map(sp.Integer, entry)))] = _entry_value(tensor.domain, rng)
        if isinstance(tensor.domain, Simplex):
            _normalize_last_axis(values, tensor, shape)
    return values


def _scalar_value(domain, rng, attempt):
    if isinstance(domain, Integer):
        return sp.Integer(rng.randint(domain.low, min(domain.high, 4)))
    if isinstance(domain, Positive):
        return _POSITIVE_VALUES[attempt % len(_POSITIVE_VALUES)]
    return rng.choice(_SMALL_VALUES[:4])


def _entry_value(domain, rng):
    if isinstance(domain, Mask):
        return sp.Integer(rng.choice((0, 1, 1)))
    if isinstance(domain, (Positive, Simplex)):
        return rng.choice(_POSITIVE_VALUES)
    return rng.choice(_SMALL_VALUES)


def _normalize_last_axis(values, tensor, shape):
    for lead in itertools.product(*(range(n) for n in shape[:-1])):
        row = [(tensor.name, tuple(map(sp.Integer, (*lead, k)))) for k in range(shape[-1])]
        total = sum(values[x] for x in row)
        for x in row:
            values[x] = values[x] / total


def _evaluate(concrete: sp.Expr, values: dict):
    by_entry = {x: values.get((str(x.base), x.indices)) for x in concrete.atoms(sp.Indexed)}
    concrete = concrete.xreplace({k: v for k, v in by_entry.items() if v is not None})
    concrete = concrete.xreplace({k: v for k, v in values.items() if isinstance(k, sp.Symbol)})
    if concrete.free_symbols:
        return None
    number = sp.N(concrete, 50)
    return complex(number) if not number.is_real else float(number)


def _used(concrete: sp.Expr, values: dict) -> dict:
    """Only the entries and scalars the instance actually depends on, for a readable report."""
    entries = {(str(x.base), x.indices) for x in concrete.atoms(sp.Indexed)}
    names = {s.name for s in concrete.free_symbols if isinstance(s, sp.Symbol)}
    return {
        k: v for k, v in values.items()
        if (k in entries if isinstance(k, tuple) else getattr(k, "name", None) in names)
    }


def _describe(sizes, index_values, values, value) -> dict:
    return {
        "sizes": sizes,
        "indices": index_values,
        "values": {_entry_name(k): str(v) for k, v in values.items()},
        "lhs_minus_rhs": f"{value:.6g}",
    }


def _entry_name(key) -> str:
    if isinstance(key, tuple):
        name, entry = key
        return f"{name}[{', '.join(map(str, entry))}]"
    return str(key)


# -- time limit ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise ``ProofTimeout`` after ``seconds`` (SIGALRM; main thread only, else no limit)."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expire(signum, frame):
        raise ProofTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
