"""Claim kinds beyond identities (the contract is in ``symbolic/_kind.py``), one module per
kind: its statement, its symbolic route and its exact refutation route. Their numeric routes
are in ``numeric/kinds/``."""
