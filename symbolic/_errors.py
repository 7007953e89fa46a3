"""The error every layer of the language raises for a declaration it cannot check: kept apart so
that the vocabulary and the language can both raise it without importing each other."""

from __future__ import annotations


class TheoremError(ValueError):
    """A theorem that cannot be checked as declared; the message names theorem and symbol."""
