"""Rendering reports from a results file loads neither Hypothesis nor the numeric search: the
report modules and the command line read records through ``attnproof.numeric``, whose names
load their own modules on first use."""

import json
import subprocess
import sys

import attnproof.numeric as numeric

HEAVY = ("hypothesis", "attnproof.numeric._search", "attnproof.numeric._strategies")


def _loaded_after(statement: str) -> list[str]:
    code = (f"import json, sys; {statement}; "
            f"print(json.dumps(sorted(set({HEAVY!r}) & set(sys.modules))))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120, check=True)
    return json.loads(completed.stdout)


def test_the_report_pipeline_loads_no_search():
    assert _loaded_after("import attnproof._reports, attnproof._view") == []


def test_the_command_line_loads_the_search_only_to_check():
    assert _loaded_after("import attnproof.cli, attnproof._commands") == []


def test_a_record_loads_no_search_and_check_loads_it():
    assert _loaded_after("from attnproof.numeric import NumericRecord") == []
    assert _loaded_after("from attnproof.numeric import check") == sorted(HEAVY)


def test_every_exported_name_resolves():
    for name in numeric.__all__:
        assert getattr(numeric, name) is not None, name
    assert set(numeric.__all__) <= set(dir(numeric))
