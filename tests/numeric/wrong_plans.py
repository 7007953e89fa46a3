"""A compiled side made wrong on purpose, to check that the checker notices."""

from __future__ import annotations

import dataclasses

from attnproof.numeric import _plan, check


def check_with_scaled_rhs(theorem, factor: float, monkeypatch, **options):
    """``check`` with the compiled right-hand side multiplied by ``factor``: a proved claim
    whose compiled code is wrong, which only the routes' disagreement can reveal."""
    plan = _plan.plan_for(theorem, "numpy")
    right = plan.sides["rhs"]
    wrong = dataclasses.replace(right, function=lambda xp, a, s: right(xp, a, s) * factor)
    monkeypatch.setitem(plan.sides, "rhs", wrong)
    _plan.runner_for.cache_clear()
    try:
        return check(theorem, "numpy", "float64", **{"profile": "quick", **options})
    finally:
        _plan.runner_for.cache_clear()
