"""Symbolic provers: for all sizes, for sizes up to k, and exact refutation.

Each attempt runs under a time limit and returns a ``ProofResult`` that says exactly what was
shown: proved for every size, proved for every size up to ``max_size``, refuted with a concrete
counterexample, lemmas proved without the claim shown to follow, or not proved (numeric evidence
only). "Proved" is mathematics only: a claim that runs user code (``implementation=``) is never
proved, and a claim placed by an ``at=`` hook is proved only from stated conditions and never
refuted at a point the hook cannot produce.
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from types import FrameType
from typing import Protocol, cast

import sympy as sp

from . import _special_values as special_values
from ._domains import (
    Mask,
    Simplex,
    domain_note,
    search_steps,
    size_assignments,
    size_steps,
)
from ._kind import TwoSided
from ._language import rename_bound_indices
from ._normal_form import residual, written_out
from ._theorem import Theorem, free_indices, relation_sides


class ProofStatus(enum.StrEnum):
    """What a proof attempt showed; the values are the strings the results JSON holds."""

    PROVED = "proved"
    PROVED_BOUNDED = "proved-bounded"
    REFUTED = "refuted"
    NOT_PROVED = "not-proved"
    # every lemma proved, but the claim not shown to follow from them (or it runs user code)
    LEMMAS_PROVED = "lemmas-proved"
    TIMEOUT = "timeout"
    ERROR = "error"


PROVED = ProofStatus.PROVED
PROVED_BOUNDED = ProofStatus.PROVED_BOUNDED
REFUTED = ProofStatus.REFUTED
NOT_PROVED = ProofStatus.NOT_PROVED
LEMMAS_PROVED = ProofStatus.LEMMAS_PROVED
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

    def __post_init__(self) -> None:
        self.status = ProofStatus(self.status)

    def to_json(self) -> dict:
        return asdict(self)


class ProofTimeout(Exception):
    pass


# seconds a proof attempt may take unless the user asks otherwise (``--time-limit``); it is part
# of a stored proof's key, so the harness and ``attnproof prove`` share results only through it
PROOF_TIME_LIMIT = 60.0


def prove(theorem: Theorem, time_limit: float = PROOF_TIME_LIMIT, bound: int = 3) -> ProofResult:
    """Prove, bound-prove or refute ``theorem`` within ``time_limit`` seconds."""
    start = time.perf_counter()
    try:
        with _time_limit(time_limit):
            result = _attempt(theorem, bound)
    except ProofTimeout:
        result = ProofResult(TIMEOUT, f"no result within the {time_limit:g} s limit of CPU time")
    except Exception as error:  # a prover bug must not lose the other theorems' results
        result = ProofResult(ERROR, f"{type(error).__name__}: {error}")
    if result.status in (PROVED, PROVED_BOUNDED, REFUTED):
        result.method += domain_note(theorem)
    result.seconds = round(time.perf_counter() - start, 4)
    return result


def _attempt(theorem: Theorem, bound: int) -> ProofResult:
    return theorem.claim.prove(theorem, bound)  # every claim brings its own symbolic route


def prove_relation(theorem: Theorem, bound: int) -> ProofResult:
    """The route of an identity or an inequality (``Equals``, ``AtLeast``): user code is checked,
    never proved; then its lemmas; then the claim's own route without them."""
    if theorem.implementation is not None:
        return _implementation_route(theorem)
    from_lemmas = _prove_by_lemmas(theorem) if theorem.lemmas or theorem.given else None
    if from_lemmas is not None and from_lemmas.status == PROVED:
        return from_lemmas
    if theorem.at is not None:  # the claim holds only where the hook puts the inputs
        return from_lemmas or ProofResult(NOT_PROVED, HOOK_NOT_ATTEMPTED)
    direct = prove_directly(theorem, bound)
    if from_lemmas is not None and direct.status == NOT_PROVED:
        return from_lemmas
    return direct


# A claim whose inputs an ``at=`` hook places is asserted only at the points the hook produces;
# without the conditions those points satisfy (``given=``), no symbolic route can use them, and
# a counterexample elsewhere would refute a claim nobody made.
HOOK_NOT_ATTEMPTED = ("inputs placed by an at= hook and no conditions stated (given=): "
                      "not attempted symbolically; numeric evidence only")
# The claim's lhs is the user's code; code is checked, never proved.
IMPLEMENTATION = "the claim runs user code (implementation=): checked numerically, never proved"


class _RelationClaim(TwoSided, Protocol):
    """What the routes of the built-in relations read of their claim (``Equals``, ``AtLeast`` in
    symbolic/_claims.py, which imports this module)."""

    def prove_without_lemmas(self, theorem: Theorem, bound: int) -> ProofResult: ...


def _relation(theorem: Theorem) -> _RelationClaim:
    # the routes below run for a theorem whose claim is an Equals or an AtLeast (their prove
    # and prove_without_lemmas call them), so the claim is such a relation by construction
    return cast(_RelationClaim, theorem.claim)


class WorkedNumbers(Protocol):
    """What the check of worked numbers reads (``Rounds``): the values and their printed rows."""

    @property
    def lhs(self) -> sp.ImmutableMatrix: ...

    @property
    def printed(self) -> Sequence[Sequence[str]]: ...


def prove_directly(theorem: Theorem, bound: int) -> ProofResult:
    """The identity or inequality route without lemmas (``prove_without_lemmas`` of the claim)."""
    return _relation(theorem).prove_without_lemmas(theorem, bound)


def refute_inequality(theorem: Theorem, bound: int) -> ProofResult:
    """An inequality has no symbolic prover: an exact counterexample refutes it."""
    difference = claim_difference(theorem, _relation(theorem))
    counterexample = find_counterexample(theorem, difference, violated_by=is_negative)
    if counterexample is not None:
        return ProofResult(REFUTED, "exact counterexample at small sizes",
                           counterexample=counterexample)
    return ProofResult(NOT_PROVED, "inequality: no symbolic prover, and the exact search "
                       "found no counterexample; numeric evidence only")


def prove_identity(theorem: Theorem, bound: int) -> ProofResult:
    """The sum normal form, else an exact counterexample, else entry-wise cancellation at every
    size up to ``bound``."""
    difference = claim_difference(theorem, _relation(theorem))
    left = theorem_residual(theorem, difference)
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


def _lemma_records(theorem: Theorem) -> list[dict]:
    records = []
    for number, lemma in enumerate(theorem.lemmas, 1):
        left = theorem_residual(theorem, claim_difference(theorem, relation_sides(lemma)))
        records.append({"lemma": number, "proved": left == 0, "residual": str(left)})
    return records


def _implementation_route(theorem: Theorem) -> ProofResult:
    """Code is never proved. Its lemmas (the algorithm's invariant) may be; the report says
    which, and the claim itself is checked numerically."""
    if not theorem.lemmas:
        return ProofResult(NOT_PROVED, IMPLEMENTATION)
    records = _lemma_records(theorem)
    proved = sum(r["proved"] for r in records)
    if proved == len(records):
        return ProofResult(LEMMAS_PROVED, f"{proved} lemma(s) proved in sum normal form (all "
                           f"sizes); {IMPLEMENTATION}", lemmas=records)
    return ProofResult(NOT_PROVED, f"{len(records) - proved} of {len(records)} lemma(s) left a "
                       f"residual; {IMPLEMENTATION}", lemmas=records)


def _prove_by_lemmas(theorem: Theorem) -> ProofResult:
    """Proved only when every lemma is proved for all sizes *and* the lemmas, with the stated
    conditions (``given``), imply the claim: lhs − rhs of the claim is, in sum normal form, a
    combination with coefficients ±1 of the lemmas' and conditions' lhs − rhs."""
    records = _lemma_records(theorem)
    if not all(r["proved"] for r in records):
        return ProofResult(NOT_PROVED, "a lemma left a residual", lemmas=records)
    if not all(c.combines_linearly for c in (theorem.claim, *theorem.lemmas, *theorem.given)):
        combination = None  # only identities combine linearly
    else:
        combination = _implying_combination(theorem)
    conditions = f" and {len(theorem.given)} stated condition(s)" if theorem.given else ""
    if combination is not None:
        return ProofResult(PROVED, f"from {len(records)} lemma(s){conditions}, each proved in "
                           "sum normal form (all sizes), which imply the claim", lemmas=records)
    return ProofResult(LEMMAS_PROVED, f"{len(records)} lemma(s) proved in sum normal form (all "
                       f"sizes), not shown to imply the claim{conditions}: claim checked "
                       "numerically", lemmas=records)


# Above this many lemmas and conditions only the plain sum is tried (3**k normal forms else).
_COMBINATION_LIMIT = 3


def _implying_combination(theorem: Theorem) -> tuple[int, ...] | None:
    claim = claim_difference(theorem, _relation(theorem))
    parts = [claim_difference(theorem, relation_sides(c))
             for c in (*theorem.lemmas, *theorem.given)]
    if len(parts) > _COMBINATION_LIMIT:
        signs = [(1,) * len(parts)]
    else:
        signs = [s for s in itertools.product((1, -1, 0), repeat=len(parts)) if any(s)]
    for coefficients in signs:
        combined = claim - sum(c * d for c, d in zip(coefficients, parts, strict=True))
        if theorem_residual(theorem, rename_bound_indices(combined)) == 0:
            return coefficients
    return None


def check_worked_numbers(claim: WorkedNumbers) -> ProofResult:
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


def _entries(printed: Sequence[Sequence[str]]) -> Iterator[tuple[tuple[int, int], str]]:
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


def claim_difference(theorem: Theorem, claim: TwoSided) -> sp.Expr:
    """lhs − rhs with definitions, vocabulary and derivatives expanded."""
    difference = theorem.expand(sp.sympify(claim.lhs)) - theorem.expand(sp.sympify(claim.rhs))
    return rename_bound_indices(difference)


def _simplex_bases(theorem: Theorem) -> list[sp.IndexedBase]:
    return [t.base for t in theorem.tensors if isinstance(t.domain, Simplex)]


def mask_bases(theorem: Theorem) -> list[sp.IndexedBase]:
    """The bases of the theorem's 0/1 mask tensors (``Mask`` domain)."""
    return [t.base for t in theorem.tensors if isinstance(t.domain, Mask)]


def theorem_residual(theorem: Theorem, difference: sp.Expr) -> sp.Expr:
    """The zero test, told which tensors are distributions and which are 0/1 masks.

    A dimension declared with one size (``Sizes(2, 2)``: the two coordinates of a rotary
    pair) has that size for every route: it is substituted, its sums are written out, and a
    free index over it is tested at each of its values."""
    fixed = _fixed_sizes(theorem)
    simplex = [b.xreplace(fixed) for b in _simplex_bases(theorem)]
    difference = written_out(difference.xreplace(fixed)) if fixed else difference
    for instance in _at_each_concrete_index(difference):
        left = residual(instance, simplex, mask_bases(theorem))
        if left != 0:
            return left
    return sp.S.Zero


def _fixed_sizes(theorem: Theorem) -> dict[sp.Symbol, sp.Integer]:
    return {d.symbol: sp.Integer(d.sizes.low) for d in theorem.dims
            if d.sizes.low == d.sizes.high}


def _at_each_concrete_index(expr: sp.Expr) -> Iterator[sp.Expr]:
    """``expr`` at every value of its free indices whose range is concrete; ``expr`` itself
    when there are none."""
    concrete = sorted((i for i in free_indices(expr)
                       if i.lower is not None and i.lower.is_Integer and i.upper.is_Integer),
                      key=str)
    ranges = [range(int(i.lower), int(i.upper) + 1) for i in concrete]
    for values in itertools.product(*ranges):
        yield expr.xreplace(dict(zip(concrete, map(sp.Integer, values), strict=True)))


# -- concrete instances -------------------------------------------------------------------------


def instantiate(theorem: Theorem, expr: sp.Expr, sizes: dict[str, int],
                index_values: dict[str, int]) -> sp.Expr:
    """``expr`` at concrete sizes and index values, with every sum written out."""
    labels = {idx: index_values[str(idx.label)] for idx in free_indices(expr)}
    expr = expr.xreplace(labels)
    dims = {sp.Symbol(name, integer=True, positive=True): n for name, n in sizes.items()}
    expr = expr.xreplace(dims)
    return expr.doit()




def index_assignments(expr: sp.Expr, sizes: dict[str, int]) -> Iterator[dict[str, int]]:
    """Every value of ``expr``'s free indices at ``sizes``, as ``{index label: value}``."""
    indices = sorted(free_indices(expr), key=lambda i: str(i.label))
    ranges = [range(sizes.get(str(i.upper + 1), 1)) for i in indices]
    for values in itertools.product(*ranges):
        yield {str(i.label): v for i, v in zip(indices, values, strict=True)}


def _bounded_proof(theorem: Theorem, difference: sp.Expr, bound: int) -> int:
    """The largest k such that the identity holds entry by entry for every size <= k."""
    proved = 0
    for largest in size_steps(theorem, bound):
        for sizes in size_assignments(theorem, largest):
            for values in index_assignments(difference, sizes):
                concrete = instantiate(theorem, difference, sizes, values)
                if theorem_residual(theorem, concrete) != 0:
                    return proved
        proved = largest
    return proved


# -- refutation ---------------------------------------------------------------------------------


def small_sizes(theorem: Theorem, largest: int) -> dict[str, int]:
    """Every dimension at ``largest``, moved into its declared domain (its minimum where that is
    larger, its maximum where that is smaller); a flat dimension H·D whose factors are sized, at
    their product."""
    sizes = {d.name: max(d.sizes.low, min(largest, d.sizes.high)) for d in theorem.dims}
    for dim in theorem.dims:
        factors = [f.name for f in getattr(dim, "factors", ())]
        if factors and all(f in sizes for f in factors):
            sizes[dim.name] = int(sp.Mul(*(sizes[f] for f in factors)))
    return sizes


def structured_draws(theorem: Theorem, sizes: dict[str, int], seed: int,
                     tries: int = 12) -> list[dict]:
    """``tries`` exact draws at ``sizes`` in the structured patterns of ``_special_values``
    (zeros, ties, one-hot and repeated rows, range ends), seeded so that a refutation
    reproduces. Shared by every exact refutation route."""
    rng = random.Random(seed)
    return [special_values.draw_values(theorem, sizes, rng, attempt) for attempt in range(tries)]


def small_instances(
    theorem: Theorem, difference: sp.Expr, tries: int = 12,
    sizes_at: Callable[[Theorem, int], dict[str, int]] = small_sizes,
) -> Iterator[tuple[dict[str, int], dict[str, int], sp.Expr, dict]]:
    """The instances an exact refutation route tries, smallest first: for each of three largest
    sizes from the domains' smallest (1, 2, 3 by default; ``sizes_at(theorem, largest)`` gives
    every dimension's size), every value of the free indices and every structured draw. Yields
    ``(sizes, index_values, concrete, values)``, ``concrete`` being ``difference`` with its sums
    written out at those sizes and indices."""
    for largest in search_steps(theorem, 3):
        sizes = sizes_at(theorem, largest)
        draws = structured_draws(theorem, sizes, largest, tries)
        for index_values in index_assignments(difference, sizes):
            concrete = instantiate(theorem, difference, sizes, index_values)
            for values in draws:
                yield sizes, index_values, concrete, values


def is_nonzero(difference: float | complex) -> bool:
    """Whether an exact value of lhs − rhs (50 digits) shows an identity false."""
    return abs(difference) > 1e-30


def is_negative(difference: float | complex) -> bool:
    """Whether an exact value of lhs − rhs (50 digits) shows an inequality lhs ≥ rhs false."""
    return isinstance(difference, float) and difference < -1e-30


def find_counterexample(theorem: Theorem, difference: sp.Expr, tries: int = 12,
                        violated_by: Callable[[float | complex], bool] = is_nonzero
                        ) -> dict | None:
    """Small sizes and small rationals at which the claim provably fails (50 digits): lhs − rhs
    is ``violated_by`` its exact value (nonzero for an identity, negative for an inequality:
    ``is_negative``). Values follow the structured patterns
    of ``_special_values`` (zeros, ties, one-hot and repeated rows, range ends)."""
    for sizes, index_values, concrete, values in small_instances(theorem, difference, tries):
        value = exact_value(concrete, values)
        if value is not None and violated_by(value):
            used = used_values(concrete, values)
            return describe_counterexample(sizes, index_values, used, value)
    return None


def substituted(concrete: sp.Expr, values: dict) -> sp.Expr:
    """``concrete`` with the drawn entries and scalars of ``values`` put in, exactly."""
    by_entry = {x: values.get((str(x.base), x.indices)) for x in concrete.atoms(sp.Indexed)}
    concrete = concrete.xreplace({k: v for k, v in by_entry.items() if v is not None})
    return concrete.xreplace({k: v for k, v in values.items() if isinstance(k, sp.Symbol)})


def exact_value(concrete: sp.Expr, values: dict) -> float | complex | None:
    """``concrete`` at ``values`` to 50 digits, as a float (complex if not real); None where
    it is not a finite number (a symbol left, 0/0, log 0, ∞ − ∞)."""
    concrete = substituted(concrete, values)
    if concrete.free_symbols:
        return None
    try:
        number = sp.N(concrete, 50)
    except (ZeroDivisionError, TypeError, ValueError):
        return None
    # 0/0, log 0, ∞ − ∞: the claim says nothing here, so this is no counterexample
    if number.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or not number.is_number:
        return None
    try:
        return complex(number) if not number.is_real else float(number)
    except (TypeError, ValueError):
        return None


def used_values(concrete: sp.Expr, values: dict) -> dict:
    """Only the entries and scalars the instance actually depends on, for a readable report."""
    entries = {(str(x.base), x.indices) for x in concrete.atoms(sp.Indexed)}
    names = {s.name for s in concrete.free_symbols if isinstance(s, sp.Symbol)}
    return {
        k: v for k, v in values.items()
        if (k in entries if isinstance(k, tuple) else getattr(k, "name", None) in names)
    }


def describe_counterexample(sizes: dict[str, int], index_values: dict[str, int], values: dict,
                            value: float | complex) -> dict:
    """A counterexample as reports print it: sizes, indices, the entries used, lhs − rhs."""
    return {
        "sizes": sizes,
        "indices": index_values,
        "values": {_entry_name(k): str(v) for k, v in values.items()},
        "lhs_minus_rhs": f"{value:.6g}",
    }


def _entry_name(key: object) -> str:
    if isinstance(key, tuple):
        name, entry = key
        return f"{name}[{', '.join(map(str, entry))}]"
    return str(key)


# -- time limit ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise ``ProofTimeout`` once the process has spent ``seconds`` of CPU time (SIGPROF; main
    thread only, else no limit). CPU time, not wall time: a proof's verdict must not depend on
    how busy the machine is (measured: a proof of 5.5 s on a quiet machine ran out of 60 s of
    wall time at a load of 6 on 2 cores, and its theorem read "checked" for "proved-bounded").
    A worker's own ``--timeout`` still bounds the wall time."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise ProofTimeout

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
