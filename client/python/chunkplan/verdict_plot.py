"""The picture of a verdict: each option's device need as one stacked bar
(the chunks on the device, the gathered chunk, the activation ESTIMATE, the
transients, the reserve) against the device memory's line and the line
where the margin begins, in GiB, the options in the server's order (those
that fit first, then the tight ones, then the rest: PlanResponse's rank).
Every figure is the server's field: nothing is added up here except the
stack itself, and the label above each bar is the server's
device_need_bytes and verdict. Drawn with matplotlib's Agg canvas (no
display), imported only when a picture is drawn.

    plan.plot("plan.png")       # Plan.plot
    layout.plot("layout.png")   # Layout.plot (one bar; lines with a cluster)
"""

import dataclasses
from typing import Optional, Tuple

from chunkplan.frontier_plot import agg_figure
from chunkplan.layout_result import GIB

FIGURE_INCHES = (14.0, 7.0)

# The stack, bottom to top: (label, colour).
PARTS = (("chunks on the device", "#4c72b0"),
         ("gathered chunk", "#55a868"),
         ("activations (ESTIMATE)", "#dd8452"),
         ("transients", "#8172b3"),
         ("reserve", "#937860"))
DEVICE_LABEL = "device memory"
MARGIN_LABEL = "device memory less the margin"
Y_LABEL = "GiB per rank (axis starts at 0)"


@dataclasses.dataclass(frozen=True)
class Bar:
    """One option as drawn: its name under the bar, its parts in bytes (in
    PARTS' order), the server's device_need_bytes, and its verdict's words
    ("fits", "tight", "does not fit")."""
    name: str
    parts: Tuple[int, ...]
    device_need_bytes: int
    words: str


def _transient_bytes(*messages):
    """The first of `messages` (the option or layout, then its verdict)
    that has a transient_bytes field: its value; 0 where none has it (a
    server before the field)."""
    for message in messages:
        if (message is not None and
                "transient_bytes" in message.DESCRIPTOR.fields_by_name):
            return int(message.transient_bytes)
    return 0


def _words(verdict):
    if verdict is None:
        return ""
    if verdict.fits:
        return "fits"
    return "tight" if verdict.tight else "does not fit"


def bar(name, most_loaded_rank, gathered_chunk_bytes, activation_bytes,
        response, verdict):
    """The Bar of one configuration (a PlanOption's or a Layout's
    fields)."""
    reserve = 0 if verdict is None else verdict.reserve_bytes
    need = (verdict.device_need_bytes if verdict is not None else
            most_loaded_rank.device_bytes + gathered_chunk_bytes +
            activation_bytes)
    transients = _transient_bytes(
        response, None if verdict is None else verdict.response)
    return Bar(name, (most_loaded_rank.device_bytes, gathered_chunk_bytes,
                      activation_bytes, transients, reserve),
               need, _words(verdict))


def plan_bars(plan):
    """The Bars of a Plan's options, in the server's order."""
    return [bar("%d: world %d\n%s\n%s" % (
        i, o.world_size, o.placement_text.replace(", ", "\n"),
        o.chunk_size_from),
                o.most_loaded_rank, o.gathered_chunk_bytes,
                o.activation_bytes, o.response, o.verdict)
            for i, o in enumerate(plan.options, 1)]


def layout_bars(layout):
    """The one Bar of a Layout."""
    sizes = ", ".join("%d" % g.chunk_size for g in layout.groups)
    return [bar("layout\nchunk size %s" % sizes, layout.most_loaded_rank,
                layout.gathered_chunk_bytes, layout.activation_bytes,
                layout.response, layout.verdict)]


def plot(path, bars, verdict=None, title=""):
    """Draws `bars` to the PNG `path` and returns the matplotlib Figure:
    one stacked bar each (PARTS), the need in GiB and the verdict's words
    above it; with `verdict` (any of the options': the cluster's memory
    and margin are the same for all) the device memory's line and the
    margin's, labelled in GiB. Raises MatplotlibMissingError without
    matplotlib, ValueError with no bar, OSError."""
    if not bars:
        raise ValueError("plot: no option to draw")
    figure = agg_figure(FIGURE_INCHES)
    axes = figure.subplots()
    x = range(len(bars))
    bottoms = [0.0] * len(bars)
    for k, (label, colour) in enumerate(PARTS):
        heights = [b.parts[k] / GIB for b in bars]
        axes.bar(x, heights, bottom=bottoms, color=colour, label=label,
                 width=0.6)
        bottoms = [low + h for low, h in zip(bottoms, heights)]
    top = max(b.device_need_bytes for b in bars) / GIB
    for i, b in enumerate(bars):
        axes.annotate("%.2f GiB\n%s" % (b.device_need_bytes / GIB, b.words),
                      (i, max(bottoms[i], b.device_need_bytes / GIB)),
                      textcoords="offset points", xytext=(0, 3),
                      ha="center", va="bottom", fontsize=8)
    if verdict is not None:
        memory = verdict.device_memory_bytes / GIB
        usable = (verdict.device_memory_bytes - verdict.margin_bytes) / GIB
        axes.axhline(memory, color="black", linewidth=1.5,
                     label="%s %.2f GiB" % (DEVICE_LABEL, memory))
        axes.axhline(usable, color="red", linestyle="--", linewidth=1.2,
                     label="%s (%s) %.2f GiB" % (
                         MARGIN_LABEL, verdict.margin_words, usable))
        top = max(top, memory)
    axes.set_ylim(0, top * 1.18)
    axes.set_xticks(list(x))
    axes.set_xticklabels([b.name for b in bars], fontsize=7)
    axes.set_ylabel(Y_LABEL)
    if title:
        axes.set_title(title)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    return figure


def first_verdict(items) -> Optional[object]:
    """The first verdict among `items`' (None where none has one)."""
    for item in items:
        if getattr(item, "verdict", None) is not None:
            return item.verdict
    return None
