"""One sha256 over the source of every program the catalog compiles, for every compiler target.

A refactoring of the compiler or of the backend table must leave this digest unchanged: it
hashes, theorem by theorem and target by target, each side's generated source (and the error
text of a claim the compiler refuses), in catalog order. Run it before and after a change:

    python scripts/compiled_digest.py
"""

from __future__ import annotations

import hashlib
import sys

from attnproof import symbolic
from attnproof.numeric import _compiler
from attnproof.numeric._plan import plan_for


def main() -> int:
    compiled: list[str] = []
    original = _compiler._compile_cached

    def recording(*arguments):
        result = original(*arguments)
        compiled.append(result.source)
        return result

    _compiler._compile_cached = recording  # every compile_expression call passes here
    digest = hashlib.sha256()
    programs = 0
    catalog = symbolic.discover()
    for theorem in catalog.theorems:
        for target in ("jax", "mlx", "numpy"):
            compiled.clear()
            plan_for.cache_clear()
            try:
                plan_for(theorem, target)
            except Exception as error:  # noqa: BLE001 -- a refusal is part of the output
                compiled.append(f"refused: {type(error).__name__}: {error}")
            for text in [f"{theorem.name} {target}", *compiled]:
                digest.update(text.encode() + b"\0")
            programs += len(compiled)
    print(f"{len(catalog.theorems)} theorems, {programs} programs: {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
