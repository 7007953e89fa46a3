"""Figures for the reports, drawn with matplotlib when it is installed (``attnproof[plot]``).

Each figure is written twice beside the reports, as PNG for Markdown and PDF for LaTeX, both
atomically. Without matplotlib no figure is drawn and the reports say how to get them; the
tables carry the same numbers.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from . import view
from .results import Report, TheoremResult, readable_mode

if TYPE_CHECKING:  # matplotlib is an optional extra, imported only to draw
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as _Figure
    from matplotlib.transforms import Bbox
    from numpy.typing import NDArray

FIGURE_DIR = "figures"
# A theorem's name as a heat map label, at most this many characters: any valid name is
# allowed, and a label of thousands of characters made a figure too wide for TeX to include.
LABEL_LIMIT = 48
# The heat map is drawn at the size it is printed: the LaTeX report includes a figure at most
# \linewidth wide and 0.75\textheight tall (A4, 2 cm margins: 6.69 by 7.59 inches), and a
# figure larger than that is shrunk, its 7-point labels with it (the catalog's 169 rows made
# one figure 48 inches tall, printed at a seventh of its size). So it is cut into pages of at
# most this many theorems, each drawn within the page at its natural size.
HEAT_MAP_ROWS_PER_PAGE = 30
PRINTED_WIDTH_INCHES = 6.69
PRINTED_HEIGHT_INCHES = 7.59
# the smallest text on the heat map, in points
HEAT_MAP_FONT_POINTS = 6.5
# Colour saturates here: a float64 error beyond this many bits is already a wrong answer, and
# one huge value must not wash out the differences among the accurate ones.
BITS_COLOUR_LIMIT = 24.0

# The tutorial's §11.2 table (001_9db7190c12608696.txt), as printed: T -> (weights, entropy),
# for the scores S = [2, 1, 0]. Plotted as markers over the computed curves.
TEMPERATURE_SCORES = (2.0, 1.0, 0.0)
TUTORIAL_TEMPERATURE_TABLE = {
    0.25: ((0.997, 0.003, 0.000), 0.02),
    0.5: ((0.876, 0.118, 0.006), 0.42),
    1.0: ((0.665, 0.245, 0.090), 0.80),
    2.0: ((0.474, 0.316, 0.211), 1.02),
    math.inf: ((0.333, 0.333, 0.333), 1.10),
}


@dataclass(frozen=True)
class Figures:
    """Paths of the figures drawn, relative to the report directory and without extension."""

    error_bits: tuple[str, ...] = ()  # the heat map's pages, in order
    temperature: str | None = None
    missing: str | None = None


def draw(report: Report, out_dir: Path) -> Figures:
    """Draw every figure that applies to ``report`` into ``out_dir/figures``."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return Figures(missing="Figures need matplotlib: pip install 'attnproof[plot]'.")
    directory = Path(out_dir) / FIGURE_DIR
    temperature = None
    pages = heat_map_pages(_heat_map_rows(report.theorems))
    error_bits = tuple(_save(_error_bits_figure(Figure, page), directory, stem)
                       for stem, page in zip(_page_stems(len(pages)), pages, strict=True))
    if any(view.shows_temperature_figure(t, view.in_catalog(t, report)) for t in report.theorems):
        temperature = _save(_temperature_figure(Figure), directory, "temperature")
    return Figures(error_bits, temperature)


def _save(figure: _Figure, directory: Path, stem: str) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    # the tight box once for both formats: "tight" draws the whole figure again per save just
    # to measure it, and the heat map's thousands of labels made that most of the drawing time
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure.draw_without_rendering()  # a constrained layout is laid out when drawn
    box = figure.get_tightbbox(FigureCanvasAgg(figure).get_renderer())
    box = box.padded(matplotlib.rcParams["savefig.pad_inches"])
    for extension in ("png", "pdf"):
        _save_atomic(figure, directory / f"{stem}.{extension}", extension, box)
    return f"{FIGURE_DIR}/{stem}"


def _save_atomic(figure: _Figure, path: Path, extension: str, box: Bbox) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        os.chmod(temporary, readable_mode())
        figure.savefig(temporary, format=extension, dpi=150, bbox_inches=box)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


# -- worst error in bits: theorem × (backend, dtype) ---------------------------------------------


def _heat_map_rows(theorems: list[TheoremResult]) -> list[TheoremResult]:
    return [t for t in theorems if any(view.number(r.max_error_bits) is not None
                                       for r in t.numeric)]


def heat_map_pages(rows: list[TheoremResult]) -> list[list[TheoremResult]]:
    """``rows`` cut into pages of at most ``HEAT_MAP_ROWS_PER_PAGE``, as even as they can be
    (169 rows: six pages of 28 or 29, not five of 30 and one of 19)."""
    if not rows:
        return []
    count = -(-len(rows) // HEAT_MAP_ROWS_PER_PAGE)
    size, extra = divmod(len(rows), count)
    bounds = np.cumsum([0] + [size + (n < extra) for n in range(count)])
    return [rows[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _page_stems(count: int) -> list[str]:
    return ["error_bits"] if count == 1 else [f"error_bits_{n}" for n in range(1, count + 1)]


def heat_map_data(theorems: list[TheoremResult]
                  ) -> tuple[list[str], list[str], NDArray[np.float64], NDArray[np.object_]]:
    """(row names, column labels, bits[row, column] with NaN where not run, marks[row, column]):
    a mark is "failed" when a check failed or errored in that cell, "not decisive" when one
    could not decide, else ""."""
    rows = _heat_map_rows(theorems)
    columns = sorted({(r.backend, r.dtype) for t in rows for r in t.numeric},
                     key=lambda column: (column[0], view._dtype_order(column[1])))
    bits = np.full((len(rows), len(columns)), np.nan)
    marks = np.full(bits.shape, "", dtype=object)
    for i, t in enumerate(rows):
        for r in t.numeric:
            j = columns.index((r.backend, r.dtype))
            value = view.number(r.max_error_bits)
            if value is not None:
                bits[i, j] = np.fmax(bits[i, j], value)
            if r.status in ("failed", "error"):
                marks[i, j] = "failed"
            elif r.status == "not-decisive" and not marks[i, j]:
                marks[i, j] = "not decisive"
    labels = [f"{backend}\n{dtype}" for backend, dtype in columns]
    return [t.name for t in rows], labels, bits, marks


def shortened(name: str, limit: int = LABEL_LIMIT) -> str:
    """``name`` for display in a figure: whole if short, else its start and end around an
    ellipsis (both ends, so that names sharing a long prefix stay apart); the reports' text
    gives every name in full."""
    if len(name) <= limit:
        return name
    tail = limit // 3
    return f"{name[: limit - tail - 1]}…{name[-tail:]}"


# matplotlib's keyword arguments of a ``Rectangle``'s outline, per mark
_MARK_STYLE: dict[str, dict[str, Any]] = {
    "failed": dict(edgecolor="tab:blue", linewidth=1.5),
    "not decisive": dict(edgecolor="grey", linewidth=1.0, linestyle="--")}


# inches per cell of the heat map, and around its grid (row names, column labels, colour bar)
_CELL_WIDTH, _CELL_HEIGHT = 0.34, 0.19
_MARGIN_WIDTH, _MARGIN_HEIGHT = 2.9, 1.5
# the padding a saved figure gets on every side (matplotlib's savefig.pad_inches)
_PAD = 0.1


def _error_bits_figure(Figure: type[_Figure], theorems: list[TheoremResult]) -> _Figure:
    names, labels, bits, marks = heat_map_data(theorems)
    font = HEAT_MAP_FONT_POINTS
    width = min(PRINTED_WIDTH_INCHES - 2 * _PAD, _MARGIN_WIDTH + _CELL_WIDTH * len(labels))
    figure = Figure(figsize=(width, _MARGIN_HEIGHT + _CELL_HEIGHT * len(names)),
                    layout="constrained")  # labels and colour bar kept inside that width
    axes = figure.subplots()
    image = axes.imshow(np.clip(bits, 0, BITS_COLOUR_LIMIT), cmap="YlOrRd", vmin=0,
                        vmax=BITS_COLOUR_LIMIT, aspect="auto")
    axes.set_xticks(range(len(labels)), labels, fontsize=font, rotation=90)
    axes.set_yticks(range(len(names)), [shortened(name) for name in names], fontsize=font)
    axes.xaxis.tick_top()
    for (i, j), value in np.ndenumerate(bits):
        mark = cast(str, marks[i, j])  # each cell of ``marks`` holds one mark's string
        _annotate_cell(axes, i, j, value, mark)
    colour_bar = figure.colorbar(image, ax=axes, location="bottom", fraction=0.05, pad=0.01,
                                 aspect=40)
    # the outlines are explained in the caption: a longer label here runs past the page
    colour_bar.set_label(f"worst error, bits (colour capped at {BITS_COLOUR_LIMIT:g})",
                         fontsize=font)
    colour_bar.ax.tick_params(labelsize=font)
    return figure


def _annotate_cell(axes: Axes, i: int, j: int, value: float, mark: str) -> None:
    if not math.isnan(value):
        dark = value > BITS_COLOUR_LIMIT * 0.6
        axes.text(j, i, view.format_number(value, ".1f"), ha="center", va="center",
                  fontsize=HEAT_MAP_FONT_POINTS, color="white" if dark else "black")
    if mark:
        from matplotlib.patches import Rectangle

        axes.add_patch(Rectangle((j - 0.48, i - 0.48), 0.96, 0.96, fill=False,
                                 **_MARK_STYLE[mark]))


# -- weights and entropy against temperature (tutorial §11.2) -------------------------------------


def temperature_curves(temperatures: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """softmax(S / T) for S = [2, 1, 0] at each T, and its entropy in nats."""
    scores = np.asarray(TEMPERATURE_SCORES)
    logits = scores[None, :] / temperatures[:, None]
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    weights /= weights.sum(axis=1, keepdims=True)
    entropy = -(weights * np.log(np.where(weights > 0, weights, 1.0))).sum(axis=1)
    return weights, entropy


def _temperature_figure(Figure: type[_Figure]) -> _Figure:
    temperatures = np.geomspace(0.1, 100, 400)
    weights, entropy = temperature_curves(temperatures)
    figure = Figure(figsize=(9, 3.4))
    left, right = figure.subplots(1, 2)
    table = {t: row for t, row in TUTORIAL_TEMPERATURE_TABLE.items() if math.isfinite(t)}
    for k, score in enumerate(TEMPERATURE_SCORES):
        line, = left.plot(temperatures, weights[:, k], label=f"weight of score {score:g}")
        left.plot(list(table), [row[0][k] for row in table.values()], "o", mfc="none",
                  color=line.get_color())
    left.axhline(1 / 3, color="grey", linestyle=":", label="T → ∞: 1/3 each")
    right.plot(temperatures, entropy, color="black", label="entropy H (nats)")
    right.plot(list(table), [row[1] for row in table.values()], "o", mfc="none", color="black",
               label="tutorial §11.2 table")
    right.axhline(math.log(3), color="grey", linestyle=":", label="T → ∞: log 3")
    left.plot([], [], "o", mfc="none", color="grey", label="tutorial §11.2 table")
    for axes, title in ((left, "softmax(S / T), S = [2, 1, 0]"), (right, "entropy")):
        axes.set_xscale("log")
        axes.set_xlabel("temperature T")
        axes.set_title(title, fontsize=10)
        axes.legend(fontsize=7)
    return figure
