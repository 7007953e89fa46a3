"""The catalog: one module per topic of the source documents, each declaring ``Theorem`` objects.

Loaded by ``attnproof.symbolic.discover`` as ``attnproof.theorems.<module>``; nothing here is
imported at package import.
"""

from __future__ import annotations
