"""The report pipeline: results and their verdicts, the results JSON and its schema, the
document model every report is built from, its Markdown, LaTeX and terminal renderers, the
figures, and the writing of a report directory.

The rest of attnproof (the command line, the runner, the pytest plugin, the kernel checker)
imports the names below from here. Importing this package imports none of it: each name loads
its module on first use, so a worker that fills a result does not load the renderers, and
re-rendering a report from its JSON loads neither Hypothesis nor the numeric search
(``tests/packaging/test_light_imports.py``); type checkers and editors read the same names,
imported eagerly, from the ``TYPE_CHECKING`` block below (``test_type_exports.py`` there holds
it to ``_EXPORTS``). The document model and the renderers are modules of their own, imported by
name (``from attnproof.report import document``).

Modules: ``results`` (a run's results, the JSON) and ``verdict`` (a theorem's status from its
routes); ``schema`` (reading a results file safely); ``descriptions`` (what a report says of a
theorem besides its outcome); ``view`` (the facts every report states) and ``coverage`` (the
documents' claims); ``document`` (the report's sections) with ``safe_math`` (which formulas
may be typeset); ``markdown``, ``tex``, ``terminal`` and ``figures`` (its renderers); and
``writer`` (writing a report directory, atomically).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "unstable_format_name": ("verdict", "unstable_format_name"),
    "short_message": ("schema", "_short"),
    "schema_validator": ("schema", "schema_validator"),
    "declaration": ("descriptions", "declaration"),
    "describe": ("descriptions", "describe"),
    "rendering": ("descriptions", "rendering"),
    "JSON_NAME": ("writer", "JSON_NAME"),
    "MARKDOWN_NAME": ("writer", "MARKDOWN_NAME"),
    "PDF_NAME": ("writer", "PDF_NAME"),
    "Written": ("writer", "Written"),
    "write_reports": ("writer", "write_reports"),
}
# the same names, written out for the tools that read ``__all__`` without running this file
# (short_message is exported under another name than its own)
__all__ = [
    "ErrorEntry", "Report", "SymbolicOutcome", "TheoremResult", "TheoremStatus", "environment",
    "now_iso", "result_from_records", "write_json", "ResultsError", "load_results",
    "unstable_format_name", "short_message", "schema_validator",
    "declaration", "describe", "rendering", "JSON_NAME", "MARKDOWN_NAME", "PDF_NAME",
    "Written", "write_reports",
]

if TYPE_CHECKING:  # what type checkers and editors see: _EXPORTS, imported eagerly
    from .descriptions import declaration as declaration
    from .descriptions import describe as describe
    from .descriptions import rendering as rendering
    from .results import ErrorEntry as ErrorEntry
    from .results import Report as Report
    from .results import SymbolicOutcome as SymbolicOutcome
    from .results import TheoremResult as TheoremResult
    from .results import TheoremStatus as TheoremStatus
    from .results import environment as environment
    from .results import now_iso as now_iso
    from .results import result_from_records as result_from_records
    from .results import write_json as write_json
    from .schema import ResultsError as ResultsError
    from .schema import _short as short_message
    from .schema import load_results as load_results
    from .schema import schema_validator as schema_validator
    from .verdict import unstable_format_name as unstable_format_name
    from .writer import JSON_NAME as JSON_NAME
    from .writer import MARKDOWN_NAME as MARKDOWN_NAME
    from .writer import PDF_NAME as PDF_NAME
    from .writer import Written as Written
    from .writer import write_reports as write_reports
else:  # at run time: each name loads its module on first use

    def __getattr__(name: str) -> Any:  # any exported name: a class, function or constant
        if name not in _EXPORTS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, attribute = _EXPORTS[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
        globals()[name] = value  # later reads skip this function
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
