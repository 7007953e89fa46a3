"""Rendering reports from a results file loads neither Hypothesis nor the numeric search: the
report pipeline (``attnproof.report``) and the command line read records through
``attnproof.numeric``, whose names load their own modules on first use."""

import json
import pkgutil
import subprocess
import sys

import attnproof.numeric as numeric
import attnproof.report as report
from attnproof.report import write_json
from tests.cli.samples import sample_report

HEAVY = ("hypothesis", "attnproof.numeric._search", "attnproof.numeric._strategies")


def _loaded_after(statement: str) -> list[str]:
    code = (f"import json, sys; {statement}; "
            f"print(json.dumps(sorted(set({HEAVY!r}) & set(sys.modules))))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120, check=True)
    return json.loads(completed.stdout)


def test_the_report_pipeline_loads_no_search():
    modules = sorted(f"{report.__name__}.{info.name}"
                     for info in pkgutil.iter_modules(report.__path__))
    assert f"{report.__name__}.writer" in modules and f"{report.__name__}.schema" in modules
    assert _loaded_after(f"import {', '.join(modules)}") == []


def test_re_rendering_a_report_from_its_json_loads_no_search(tmp_path):
    json_path = tmp_path / "results.json"
    write_json(sample_report(), json_path)
    statement = ("sys.modules['matplotlib.figure'] = None; "  # figures: seconds, not the point
                 "from attnproof.report import load_results, write_reports; "
                 f"write_reports(load_results({str(json_path)!r}), {str(tmp_path / 'out')!r}, "
                 "results=False)")
    assert _loaded_after(statement) == []
    assert (tmp_path / "out" / "summary.md").is_file()


def test_the_command_line_loads_the_search_only_to_check():
    assert _loaded_after("import attnproof.cli, attnproof._commands") == []


def test_a_record_loads_no_search_and_check_loads_it():
    assert _loaded_after("from attnproof.numeric import NumericRecord") == []
    assert _loaded_after("from attnproof.numeric import check") == sorted(HEAVY)


def test_every_exported_name_resolves():
    for package in (numeric, report):
        for name in package.__all__:
            assert getattr(package, name) is not None, (package.__name__, name)
        assert set(package.__all__) <= set(dir(package))


def test_no_exported_name_of_the_report_package_is_also_a_module_name():
    # importing a module sets the package's attribute of its name, hiding an export so named
    modules = {info.name for info in pkgutil.iter_modules(report.__path__)}
    assert modules and not set(report.__all__) & modules
