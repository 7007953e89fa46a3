"""The report pipeline: results and their verdicts, the results JSON and its schema, the
document model every report is built from, its Markdown, LaTeX and terminal renderers, the
figures, and the writing of a report directory.

The rest of attnproof (the command line, the runner, the pytest plugin, the kernel checker)
imports the names below from here. Importing this package imports none of it: each name loads
its module on first use, so a worker that fills a result does not load the renderers, and
re-rendering a report from its JSON loads neither Hypothesis nor the numeric search
(``tests/packaging/test_light_imports.py``). The document model and the renderers are modules
of their own, imported by name (``from attnproof.report import document``).

Modules: ``results`` (a run's results, the JSON) and ``verdict`` (a theorem's status from its
routes); ``schema`` (reading a results file safely); ``descriptions`` (what a report says of a
theorem besides its outcome); ``view`` (the facts every report states) and ``coverage`` (the
documents' claims); ``document`` (the report's sections) with ``safe_math`` (which formulas
may be typeset); ``markdown``, ``tex``, ``terminal`` and ``figures`` (its renderers); and
``writer`` (writing a report directory, atomically).
"""

from __future__ import annotations

import importlib

# public name -> (module, its name there); no public name is also a module's name, since
# importing a module would replace the name with the module
_EXPORTS = {
    "ErrorEntry": ("results", "ErrorEntry"),
    "Report": ("results", "Report"),
    "SymbolicOutcome": ("results", "SymbolicOutcome"),
    "TheoremResult": ("results", "TheoremResult"),
    "TheoremStatus": ("results", "TheoremStatus"),
    "environment": ("results", "environment"),
    "now_iso": ("results", "now_iso"),
    "result_from_records": ("results", "result_from_records"),
    "write_json": ("results", "write_json"),
    "ResultsError": ("schema", "ResultsError"),
    "load_results": ("schema", "load_results"),
    "declaration": ("descriptions", "declaration"),
    "describe": ("descriptions", "describe"),
    "rendering": ("descriptions", "rendering"),
    "JSON_NAME": ("writer", "JSON_NAME"),
    "MARKDOWN_NAME": ("writer", "MARKDOWN_NAME"),
    "PDF_NAME": ("writer", "PDF_NAME"),
    "Written": ("writer", "Written"),
    "write_reports": ("writer", "write_reports"),
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
