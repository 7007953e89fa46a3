"""The profiles, in one table: how hard each kind of numeric record searches, and how long a
theorem may take in its worker. The numeric search (``_strategies``) and the runner
(``attnproof/_runner.py``) both read it; it imports nothing heavy, so the command line can
list and validate the names without loading Hypothesis."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Effort:
    """Hypothesis examples for a record, each one batch of ``batch`` instances."""

    examples: int
    batch: int

    @property
    def instances(self) -> int:
        return self.examples * self.batch


@dataclass(frozen=True)
class Profile:
    """How hard each kind of record searches. JAX compiles once per shape, and at most three
    shapes are drawn unless ``free_sizes``; fewer examples with larger batches compile less."""

    name: str
    truth: Effort  # float64 on a reference backend, default mode: where truth is decided
    formats: Effort  # float32, and MLX float64 (measured as float32)
    half_formats: Effort  # float16 and bfloat16: stability checks on a few large batches
    other_modes: Effort  # modes other than the backend's default (JAX eager)
    every_mode: bool  # whether ``attnproof prove`` and the harness run other modes (eager JAX)
    free_sizes: bool
    # whether an error bound runs every corner (each size at its ends × every pattern and
    # scale) or, quick, every pattern and scale at the largest sizes only (``kinds/error_bound``)
    every_corner: bool
    shrink_examples: int
    derandomize: bool


# Eager JAX compiles every primitive once per shape and dtype (2-6 s per derivative claim), so
# only the thorough profile runs it under ``attnproof prove``.
# ``timeout``: the wall-clock budget per theorem (proof plus every numeric configuration) before
# its worker is killed as hung; generous, because only a real hang should reach it.
PROFILES = {
    "quick": dict(truth=Effort(2, 256), formats=Effort(1, 256), half_formats=Effort(1, 256),
                  other_modes=Effort(1, 128),
                  every_mode=False, free_sizes=False, every_corner=False, shrink_examples=20,
                  timeout=300.0),
    "default": dict(truth=Effort(4, 256), formats=Effort(2, 512), half_formats=Effort(1, 512),
                    other_modes=Effort(1, 128),
                    every_mode=False, free_sizes=False, every_corner=True, shrink_examples=40,
                    timeout=900.0),
    "thorough": dict(truth=Effort(100, 256), formats=Effort(50, 256), half_formats=Effort(50, 256),
                     other_modes=Effort(20, 256), every_mode=True, free_sizes=True,
                     every_corner=True, shrink_examples=200, timeout=3600.0),
}
PROFILE_NAMES = tuple(PROFILES)


def _row(name: str) -> dict:
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
    return PROFILES[name]


def profile(name: str | None = None) -> Profile:
    """The profile named, else ``$ATTNPROOF_PROFILE``, else "default"; CI=true derandomizes.

    Raises:
        ValueError: an unknown profile name.
    """
    name = name or os.environ.get("ATTNPROOF_PROFILE", "default")
    effort = {k: v for k, v in _row(name).items() if k != "timeout"}
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return Profile(name, **effort, derandomize=ci)


def timeout(name: str) -> float:
    """Seconds a theorem may take in its worker under profile ``name``.

    Raises:
        ValueError: an unknown profile name.
    """
    return _row(name)["timeout"]
