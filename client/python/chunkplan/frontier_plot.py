"""The picture of a Frontier: real padding (% of the parameters) and the
most loaded rank's GiB (peak_rank_bytes / 2**30: device bytes plus the
gathered buffer) against the chunk size C', one panel each, the frontier
points joined in grid order, the seed's pick and the objective's best
marked. Drawn with matplotlib's Agg canvas (no display), imported only when
a picture is drawn.
"""

import dataclasses
from typing import Tuple

from chunkplan.frontier_command import percent_of
from chunkplan.layout_result import GIB

# The picture's size: FIGURE_INCHES at DPI dots per inch, 1200 x 800 pixels.
FIGURE_INCHES = (12.0, 8.0)
DPI = 100
FIGURE_PIXELS = (1200, 800)


class MatplotlibMissingError(ImportError):
    """matplotlib cannot be imported (Debian: python3-matplotlib)."""


@dataclasses.dataclass(frozen=True)
class Series:
    """Points as plot() draws them, in order: x (chunk_size, C') and the
    y of each panel (padding_percent, peak_gib)."""
    chunk_size: Tuple[float, ...]
    padding_percent: Tuple[float, ...]
    peak_gib: Tuple[float, ...]


def _series(points, total_params):
    return Series(chunk_size=tuple(float(p.chunk_size) for p in points),
                  padding_percent=tuple(percent_of(p.layout_padding,
                                                   total_params)
                                        for p in points),
                  peak_gib=tuple(p.peak_rank_bytes / GIB for p in points))


def plot_series(frontier, seed_pick, total_params):
    """(frontier, seed, best) Series of a Frontier: its points, the seed's
    pick `seed_pick` (a FrontierPoint: the seed_waste best, the CLI's at
    GeminiPlugin's defaults) and frontier.best, padding as % of
    `total_params`."""
    return (_series(frontier.points, total_params),
            _series([seed_pick], total_params),
            _series([frontier.best], total_params))


def plot(path, frontier, seed_pick, total_params, title=""):
    """Draws plot_series's three series to the PNG `path`, FIGURE_PIXELS in
    size; returns the matplotlib Figure (axes[0] padding, axes[1] GiB; in
    each, lines "frontier", "seed's pick", "objective's best" in that
    order). Raises MatplotlibMissingError without matplotlib, OSError when
    the file cannot be written."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise MatplotlibMissingError(
            "matplotlib not installed (Debian: python3-matplotlib): --plot "
            "needs it") from error
    figure = Figure(figsize=FIGURE_INCHES, dpi=DPI)
    FigureCanvasAgg(figure)
    padding_axes, peak_axes = figure.subplots(2, 1, sharex=True)
    frontier_series, seed, best = plot_series(frontier, seed_pick,
                                              total_params)
    for axes, field, label in (
            (padding_axes, "padding_percent", "padding (% of parameters)"),
            (peak_axes, "peak_gib", "most loaded rank (GiB, incl. gathered "
                                    "chunk)")):
        axes.plot(frontier_series.chunk_size,
                  getattr(frontier_series, field), "o-", label="frontier")
        axes.plot(seed.chunk_size, getattr(seed, field), "s", markersize=11,
                  fillstyle="none", label="seed's pick")
        axes.plot(best.chunk_size, getattr(best, field), "*", markersize=14,
                  label="objective's best")
        axes.set_ylabel(label)
        axes.grid(True, alpha=0.3)
        axes.legend()
    peak_axes.set_xlabel("chunk size (elements)")
    if title:
        figure.suptitle(title)
    figure.savefig(path, format="png", dpi=DPI)
    return figure
