"""Skipping a test whose array backend is missing, with the reason the library gives.

The required dependencies bring NumPy only; JAX and MLX are extras. A test that checks a
claim *on* a backend calls ``require_backend(backend)`` first: where the backend is not
installed the test is skipped, naming it ("jax is not installed (No module named 'jax')");
where it is installed this does nothing and every assertion runs. Tests that need no backend
to run (the compiler's emitted source, say) must not call it."""

from __future__ import annotations

import pytest

from attnproof.numeric._backends import backend, unavailable_reason


def require_backend(name: str) -> None:
    """Skip the calling test when backend ``name`` cannot be loaded here."""
    __tracebackhide__ = True  # the skip is reported at the test's line, not this one
    reason = unavailable_reason(backend(name))
    if reason is not None:
        pytest.skip(reason)
