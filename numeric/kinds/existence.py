"""Numeric route of ``Exists``: the identity the stated witness makes, checked as any identity
is (the compiled search on this backend and dtype); a claim without a witness has none."""

from __future__ import annotations

from attnproof.symbolic import Exists

from ..route import numeric_route, run_search, runner_for


@numeric_route(Exists)
def check(theorem, row, dtype, device, mode, profile, record, seed=None) -> None:
    identity = theorem.claim.with_witness(theorem)
    run_search(identity, runner_for(identity, row, device, mode), dtype, profile, record,
               seed=seed)
