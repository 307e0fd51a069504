"""The picture of a Frontier: real padding (% of the parameters) and the
most loaded rank's GiB (peak_rank_bytes / 2**30: device bytes plus the
gathered buffer) against the chunk size C' in Mi elements (2**20 elements;
an fp16 chunk of 1 Mi elements is 2 MiB), one panel each, the frontier
points joined in grid order, ColossalAI's pick and the objective's best
marked, and, when a device memory is given, its line on the GiB panel.
Both y axes start at zero, so that a small spread looks small; one legend
serves the figure. Drawn with matplotlib's Agg canvas (no display),
imported only when a picture is drawn.

The Frontier answer holds only its frontier points. Given a Curve
(chunkplan.frontier_curve: a sample of the grid's candidates, each laid out
by Layout), plot() draws it faintly under the frontier, so that a frontier
of one point still shows what it is the minimum of; the legend names it
"every candidate (N)" or "a sample of N of M candidates". The curve is
drawn for every objective, ColossalAI's search's waste included: both
panels are layout measures, which Layout gives at any C'. Without a Curve
only the frontier's points are drawn.
"""

import dataclasses
from typing import Tuple

from chunkplan.layout_result import GIB

# The picture's size: FIGURE_INCHES at DPI dots per inch, 1200 x 800 pixels.
FIGURE_INCHES = (12.0, 8.0)
DPI = 100
FIGURE_PIXELS = (1200, 800)


class MatplotlibMissingError(ImportError):
    """matplotlib cannot be imported (Debian: python3-matplotlib)."""


def agg_figure(inches):
    """A matplotlib Figure of `inches` at DPI on the Agg canvas (no
    display), matplotlib imported here; raises MatplotlibMissingError
    without it. The pictures of this package (frontier_plot,
    verdict_plot) are drawn on one."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise MatplotlibMissingError(
            "matplotlib not installed (Debian: python3-matplotlib): the "
            "plot needs it") from error
    figure = Figure(figsize=inches, dpi=DPI)
    FigureCanvasAgg(figure)
    return figure


# x: Mi elements (2**20 elements).
ELEMENTS_PER_MI = float(1 << 20)
X_LABEL = "chunk size C' (Mi elements = 2**20 elements; fp16: 2 MiB each)"
PADDING_LABEL = "padding, % of parameters"
PEAK_LABEL = "most loaded rank, GiB\n(incl. gathered chunk)"
# Appended to each y label: both axes start at zero.
FROM_ZERO = "\n(axis starts at 0)"
# Room above the highest point or line, as a share of it.
TOP_MARGIN = 1.1
# The labels of the drawn lines, in drawing order.
FRONTIER_LABEL = "frontier"
PICK_LABEL = "ColossalAI's pick"
BEST_LABEL = "objective's best"
DEVICE_LABEL = "device memory"
# The curve's label: every candidate, or a sample of them.
EVERY_CANDIDATE_LABEL = "every candidate ({:,})"
SAMPLE_LABEL = "a sample of {:,} of {:,} candidates"


@dataclasses.dataclass(frozen=True)
class Series:
    """Points as plot() draws them, in order: x (chunk_size_mi, C' in Mi
    elements) and the y of each panel (padding_percent, peak_gib)."""
    chunk_size_mi: Tuple[float, ...]
    padding_percent: Tuple[float, ...]
    peak_gib: Tuple[float, ...]


def percent_of(part, whole):
    """100 * part / whole as a float; 0.0 for a whole of 0."""
    return 0.0 if whole == 0 else 100.0 * part / whole


def _series(points, total_params):
    return Series(chunk_size_mi=tuple(p.chunk_size / ELEMENTS_PER_MI
                                      for p in points),
                  padding_percent=tuple(percent_of(p.layout_padding,
                                                   total_params)
                                        for p in points),
                  peak_gib=tuple(p.peak_rank_bytes / GIB for p in points))


def plot_series(frontier, seed_pick, total_params):
    """(frontier, pick, best) Series of a Frontier: its points,
    ColossalAI's pick `seed_pick` (a FrontierPoint: the seed_waste best,
    the CLI's at GeminiPlugin's defaults; None: an empty Series) and
    frontier.best, padding as % of `total_params`."""
    return (_series(frontier.points, total_params),
            _series([seed_pick] if seed_pick is not None else [],
                    total_params),
            _series([frontier.best], total_params))


def curve_series(curve, total_params):
    """A Curve (chunkplan.frontier_curve) as a Series: C' in Mi elements,
    padding as % of `total_params`, the peak in GiB."""
    return Series(chunk_size_mi=tuple(c / ELEMENTS_PER_MI
                                      for c in curve.chunk_size),
                  padding_percent=tuple(percent_of(p, total_params)
                                        for p in curve.layout_padding),
                  peak_gib=tuple(b / GIB for b in curve.peak_rank_bytes))


def curve_label(curve):
    """The legend's words for a Curve: every candidate, or a sample."""
    if curve.complete:
        return EVERY_CANDIDATE_LABEL.format(curve.candidates)
    return SAMPLE_LABEL.format(curve.sampled, curve.candidates)


def _draw_panel(axes, series, field, label, curve=None):
    """One panel: the curve's Series `curve` (faint, under everything, when
    given), the frontier, ColossalAI's pick (a large hollow diamond, drawn
    over the star so that it shows where both fall) and the best."""
    frontier, pick, best = series
    if curve is not None:
        curve_points, curve_words = curve
        axes.plot(curve_points.chunk_size_mi, getattr(curve_points, field),
                  ".-", color="tab:gray", alpha=0.35, linewidth=1,
                  markersize=3, label=curve_words, zorder=1)
    axes.plot(frontier.chunk_size_mi, getattr(frontier, field), "o-",
              label=FRONTIER_LABEL, zorder=2)
    axes.plot(best.chunk_size_mi, getattr(best, field), "*", markersize=12,
              color="tab:red", label=BEST_LABEL, zorder=3)
    if pick.chunk_size_mi:
        axes.plot(pick.chunk_size_mi, getattr(pick, field), "D",
                  markersize=16, fillstyle="none", markeredgewidth=2,
                  color="tab:green", label=PICK_LABEL, zorder=4)
    axes.set_ylabel(label + FROM_ZERO)
    axes.grid(True, alpha=0.3)
    axes.ticklabel_format(axis="both", style="plain", useOffset=False)


def plot(path, frontier, seed_pick, total_params, title="",
         device_memory=None, curve=None):
    """Draws plot_series's three series to the PNG `path`, FIGURE_PIXELS in
    size; returns the matplotlib Figure (axes[0] padding, axes[1] GiB; in
    each, when `curve` (a frontier_curve.Curve) is given, its faint line
    first, labelled curve_label(curve), at zorder 1, under the rest; then
    lines FRONTIER_LABEL, BEST_LABEL, PICK_LABEL (when seed_pick is
    not None) in that order, then
    on axes[1] DEVICE_LABEL's horizontal line at device_memory / 2**30
    when device_memory (bytes) is given; y from 0; one figure legend).
    Raises MatplotlibMissingError without matplotlib, OSError when the
    file cannot be written."""
    figure = agg_figure(FIGURE_INCHES)
    padding_axes, peak_axes = figure.subplots(2, 1, sharex=True)
    series = plot_series(frontier, seed_pick, total_params)
    faint = None if curve is None else (curve_series(curve, total_params),
                                        curve_label(curve))
    _draw_panel(padding_axes, series, "padding_percent", PADDING_LABEL,
                faint)
    _draw_panel(peak_axes, series, "peak_gib", PEAK_LABEL, faint)
    if device_memory is not None:
        peak_axes.axhline(device_memory / GIB, color="tab:gray",
                          linestyle="--", label="%s (%.2f GiB)" % (
                              DEVICE_LABEL, device_memory / GIB))
    for axes in (padding_axes, peak_axes):
        top = max(max(line.get_ydata()) for line in axes.get_lines())
        axes.set_ylim(0, top * TOP_MARGIN if top > 0 else 1)
    peak_axes.set_xlabel(X_LABEL)
    handles, labels = peak_axes.get_legend_handles_labels()
    figure.subplots_adjust(bottom=0.16)
    figure.legend(handles, labels, loc="lower center", ncol=len(labels))
    if title:
        figure.suptitle(title)
    figure.savefig(path, format="png", dpi=DPI)
    return figure
