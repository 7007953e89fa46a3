"""Figures: the numbers behind them, the files drawn, and reports without matplotlib."""

import copy
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest

from attnproof import symbolic
from attnproof.numeric import NumericRecord
from attnproof.report import view, write_reports
from attnproof.report.figures import (
    LABEL_LIMIT,
    TUTORIAL_TEMPERATURE_TABLE,
    Figures,
    draw,
    heat_map_data,
    shortened,
    temperature_curves,
)
from tests.cli.samples import sample_report

# draws with matplotlib: the slow tier
pytestmark = pytest.mark.slow


def test_temperature_curves_match_softmax_of_the_scaled_scores():
    weights, entropy = temperature_curves(np.array([1.0, 1e9]))
    np.testing.assert_allclose(weights[0], np.exp([2, 1, 0]) / np.exp([2, 1, 0]).sum())
    assert entropy[0] == pytest.approx(0.8324, abs=1e-4)
    np.testing.assert_allclose(weights[1], [1 / 3] * 3, atol=1e-8)
    assert entropy[1] == pytest.approx(math.log(3))


def test_temperature_curves_stay_finite_as_temperature_goes_to_zero():
    weights, entropy = temperature_curves(np.array([1e-4]))
    assert weights[0].tolist() == [1.0, 0.0, 0.0] and entropy[0] == 0.0


def test_heat_map_takes_the_worst_bits_per_backend_and_dtype():
    report = sample_report()
    first = report.theorems[0]
    first.numeric.append(NumericRecord("numpy", "float64", "cpu", "jit", "failed",
                                        max_error_bits=7.5))
    names, labels, bits, marks = heat_map_data(report.theorems)
    assert names == ["softmax_rows", "wrong_claim"]
    assert labels == ["jax\nfloat64", "jax\nbfloat16", "numpy\nfloat64", "numpy\nbfloat16"]
    assert np.isnan(bits[0, 0]) and bits[0, 1] == 1.58 and bits[0, 2] == 7.5
    assert marks[0].tolist() == ["", "", "failed", ""]
    assert marks[1].tolist() == ["failed", "", "", "not decisive"]


def temperature_report():
    """The sample report with its first theorem one of the catalog's §11.2 theorems."""
    report = sample_report()
    report.theorems[0].source = view.TEMPERATURE_SECTION + "Example 2: Temperature Effects"
    report.theorems[0].origin = str(symbolic._catalog.CATALOG_DIR / "worked_examples.py")
    return report


def test_figures_are_drawn_as_png_and_pdf(tmp_path):
    pytest.importorskip("matplotlib")
    figures = draw(temperature_report(), tmp_path)
    assert figures == Figures(error_bits=("figures/error_bits",), temperature="figures/temperature")
    drawn = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert drawn == ["error_bits.pdf", "error_bits.png", "temperature.pdf", "temperature.png"]


def test_the_temperature_figure_is_drawn_only_for_the_catalogs_theorems_it_is_about(tmp_path):
    pytest.importorskip("matplotlib")
    report = temperature_report()
    report.theorems[0].source = "Attention as Bilinear Form §4.2"  # a temperature, not §11.2
    assert draw(report, tmp_path / "other").temperature is None
    users = temperature_report()  # a user's file: an input named beta, even §11.2 as source
    users.theorems[0].origin = "/home/someone/my_theorems/gibbs.py"
    users.theorems[0].assumptions.append({"name": "beta", "latex": r"\beta", "domain": "> 0"})
    assert draw(users, tmp_path / "users").temperature is None
    assert draw(temperature_report(), tmp_path / "ours").temperature == "figures/temperature"


def test_without_matplotlib_reports_fall_back_to_tables(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import now raises
    written = write_reports(sample_report(), tmp_path)
    assert written.notes == ["Figures need matplotlib: pip install 'attnproof[plot]'."]
    assert not (tmp_path / "figures").exists()
    markdown = (tmp_path / "summary.md").read_text()
    assert "pip install 'attnproof\\[plot\\]'" in markdown and "](figures/" not in markdown
    assert "includegraphics" not in (tmp_path / "report.tex").read_text()


def test_the_tutorial_table_is_kept_as_printed():
    # The plot shows these beside the computed curves; several rows disagree with softmax.
    weights, _ = temperature_curves(np.array([0.5]))
    printed = TUTORIAL_TEMPERATURE_TABLE[0.5][0]
    assert abs(weights[0][0] - printed[0]) > 0.005


def test_a_name_of_thousands_of_characters_is_shortened_in_the_heat_map():
    long_name = "long_" + "a" * 3990 + "_endxx"  # 4,001 characters, a valid theorem name
    label = shortened(long_name)
    assert len(label) == LABEL_LIMIT and label.startswith("long_aaa")
    assert label.endswith("a_endxx") and "…" in label
    assert shortened("softmax_rows") == "softmax_rows"


@pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("pdftotext") is None,
                    reason="pdflatex or pdftotext is not installed")
def test_a_name_of_thousands_of_characters_survives_the_heat_map_and_the_pdf(tmp_path):
    long_name = "long_" + "a" * 3990 + "_endxx"
    report = sample_report()
    report.theorems[0].name = long_name
    written = write_reports(report, tmp_path, pdf=True)
    assert written.failures == [] and (tmp_path / "figures/error_bits.pdf").exists()
    text = subprocess.run(["pdftotext", str(tmp_path / "report.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    # the page wraps the name wherever it must; joined again, it is there in full
    assert long_name in "".join(text.split())
    assert "…" in text  # shortened in the heat map, the summary table and the heading


def _catalog_sized_report(rows: int):
    """The sample report with ``rows`` theorems of error bits in 12 configurations, as the
    catalog's run has (169 rows)."""
    report = sample_report()
    template = report.theorems[0]
    report.theorems = []
    for n in range(rows):
        theorem = copy.deepcopy(template)
        theorem.name = f"a_theorem_name_as_long_as_the_catalogs_longest_{n:03d}"
        theorem.numeric = [NumericRecord(backend, dtype, "cpu", "jit", "passed",
                                         max_error_bits=float(n % 30))
                           for backend in ("jax", "mlx", "numpy")
                           for dtype in ("float64", "float32", "float16", "bfloat16")]
        report.theorems.append(theorem)
    return report


def test_the_heat_map_is_cut_into_pages_each_drawn_within_the_printed_page(tmp_path):
    """Each page fits the LaTeX report's figure box (A4, 2 cm margins: \\linewidth by
    0.75\\textheight) at its natural size, so no label is shrunk below its point size."""
    matplotlib = pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from attnproof.report import figures as drawing

    report = _catalog_sized_report(169)
    pages = drawing.heat_map_pages(drawing._heat_map_rows(report.theorems))
    assert [len(p) for p in pages] == [29, 28, 28, 28, 28, 28]
    assert [t.name for page in pages for t in page] == [t.name for t in report.theorems]
    for page in pages[:1] + pages[-1:]:
        figure = drawing._error_bits_figure(Figure, page)
        figure.draw_without_rendering()
        box = figure.get_tightbbox(FigureCanvasAgg(figure).get_renderer()).padded(
            matplotlib.rcParams["savefig.pad_inches"])  # the box _save writes
        assert box.width <= drawing.PRINTED_WIDTH_INCHES, box
        assert box.height <= drawing.PRINTED_HEIGHT_INCHES, box
        sizes = [t.get_fontsize() for t in figure.findobj(match=lambda a: hasattr(
            a, "get_fontsize") and hasattr(a, "get_text") and a.get_text())]
        assert sizes and min(sizes) >= drawing.HEAT_MAP_FONT_POINTS
    stems = draw(report, tmp_path).error_bits
    assert stems == tuple(f"figures/error_bits_{n}" for n in range(1, 7))
    assert all((tmp_path / f"{stem}.pdf").exists() for stem in stems)
