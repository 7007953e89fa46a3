"""Claim kinds beyond identities (the contract is in ``symbolic/_kind.py``), one module per
kind: its statement, its symbolic route and its exact refutation route. Their numeric routes
are in ``numeric/kinds/``, which imports every module of its folder. A new kind is its module
here, its numeric route's module there, and its export from ``symbolic/__init__.py`` (which
theorem files import it through); this package keeps no list of its own."""

from __future__ import annotations
