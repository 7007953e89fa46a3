"""A kernel that returns NaN reads as NaN and ∞ in every report, never as the largest float.

NumPy's ``nan_to_num`` writes +inf as 1.8e308 unless told otherwise: a NaN row was reported as
"error 1.8e+308", its ratio as "infx", and the JSON held 1.7976931348623157e+308.
"""

from __future__ import annotations

import json
import math

import pytest

from attnproof.cli import main
from attnproof.report.view import format_number, format_ulps


@pytest.mark.parametrize(("value", "shown"), [
    (float("nan"), "NaN"), (math.inf, "∞"), (-math.inf, "−∞"), (None, "—"), (2.5e-7, "2.5e-07"),
    ("inf", "∞"),  # as results.json writes it
])
def test_numbers_are_written_as_a_reader_writes_them(value, shown):
    assert format_number(value) == shown


def test_ulps_keep_their_precision_and_say_infinite():
    assert (format_ulps(3.25), format_ulps(4.5e15), format_ulps(math.inf)) == (
        "3.2", "4.5e+15", "∞")


def test_a_nan_row_is_an_infinite_error_in_the_terminal_the_report_and_the_json(tmp_path,
                                                                              capsys):
    argv = ["kernels", "--kernel", "tests.kernels.planted:nan_rows_past_chunk", "--property",
            "tile_masks", "--dtype", "float32", "--examples", "5", "--out", str(tmp_path)]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    assert "❌ fails ∞x" in printed and "infx" not in printed
    text = (tmp_path / "conformance.md").read_text()
    assert "error ∞ in row" in text
    assert "1.8e+308" not in text and "infx" not in text
    (kernel,) = json.loads((tmp_path / "conformance.json").read_text())["kernels"]
    (cell,) = [c for c in kernel["cells"] if c["status"] == "fails"]
    assert cell["ratio"] == math.inf
    assert cell["counterexample"]["kernel_error"] == math.inf
    assert math.isnan(cell["counterexample"]["kernel"][0])  # the NaN itself, kept
