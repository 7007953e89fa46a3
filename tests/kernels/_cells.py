"""What the feature tests ask of a check: one property's float32 cell, and the cells that
neither conform nor are n/a."""

from __future__ import annotations

from attnproof.kernels import check_kernel

EXAMPLES = 20  # the checker's default


def one_cell(kernel, prop: str, seed: int | None = None, examples: int = EXAMPLES):
    return check_kernel(kernel, properties=[prop], dtypes=["float32"], examples=examples,
                        seed=seed).cells[0]


def not_conforming(result) -> list:
    return [(c.property, c.status, c.reason) for c in result.cells
            if c.status not in ("conforms", "n/a")]


def every_case_holds(prop, kernel, holds, drawn_only=None, examples: int = 60) -> None:
    """``holds(case)`` on each explicit case of ``prop`` for ``kernel`` and on ``examples``
    drawn ones; ``drawn_only(case)`` on the drawn ones besides."""
    from hypothesis import HealthCheck, given, settings

    for case in prop.explicit_cases(kernel):
        holds(case)

    @settings(max_examples=examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(prop.strategy(kernel))
    def drawn(case):
        holds(case)
        if drawn_only is not None:
            drawn_only(case)

    drawn()
