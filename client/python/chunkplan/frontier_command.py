"""`python3 -m chunkplan frontier`: how the real padding and the most loaded
rank's memory move with the chunk size, for a Hugging Face model, from a
shell; a thin layer over Client.frontier.

    python3 -m chunkplan frontier --hf-config DIR --dp 8 \\
        [--objective layout_padding] [--plot frontier.png] \\
        [--emit colossalai]

prints one row per frontier point (the candidates whose objective value is
a new strict minimum, in grid order; the last is the objective's best):
its grid index, chunk size C' (elements), the objective's value (elements,
or bytes for peak_rank_bytes), ColossalAI's search's waste, the real
padding (elements and % of the model's parameters) and the device need in
GiB (chunkplan.verdict: the most loaded rank's device total + the gathered
chunk + --reserve, i.e. peak_rank_bytes + reserve, / 2**30, 2 decimals; the
figure `layout` prints under that name). --plot FILE draws the points
(chunkplan.frontier_plot) with
ColossalAI's pick (its answer at GeminiPlugin's defaults: range and minimum
32 Mi elements, the filter on, the same interval; one more Frontier call),
the objective's best, the line of --device-memory or --gpu when given,
and, faintly under the points, a sample of 200 of the grid's candidates
(chunkplan.frontier_curve: one Search and one Layout call per candidate).
--emit colossalai prints only the objective's best configuration, as laid
out (one Layout call with the objective), as GeminiPlugin's
chunk_config_dict.
"""

import argparse

from chunkplan import gpu_presets, layout_command, verdict


def parse_degree(text):
    """One dp degree, an int >= 1; argparse.ArgumentTypeError otherwise."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected one degree >= 1, e.g. 8")
    return int(text)


def add_arguments(parser):
    """Adds the frontier command's own flags to `parser` (the shared ones
    come from layout_command.add_choice_arguments)."""
    parser.add_argument("--dp", type=parse_degree, default=1, metavar="N",
                        help="data-parallel degree of every parameter "
                        "(default 1)")
    parser.add_argument("--plot", metavar="FILE",
                        help="draw the frontier, over a faint sample of "
                        "every candidate, to this PNG (needs matplotlib; "
                        "Debian: python3-matplotlib)")
    gpu_presets.add_device_memory_arguments(parser,
                                            layout_command.parse_memory)
    parser.add_argument("--reserve", type=layout_command.parse_memory,
                        default=0, metavar="SIZE",
                        help="per device, kept free for the CUDA context "
                        "and workspace: counted in the device need "
                        "(default 0)")


def percent_of(part, whole):
    """100 * part / whole as a float; 0.0 for a whole of 0."""
    return 0.0 if whole == 0 else 100.0 * part / whole


def value_header(objective):
    """The value column's header with its unit: bytes for
    peak_rank_bytes, elements for the other objectives."""
    unit = "bytes" if objective == "peak_rank_bytes" else "elements"
    return "value (%s)" % unit


def format_frontier(model, settings_line, objective, frontier,
                    reserve_bytes=0):
    """The table of a Frontier (see the module docstring); model: the
    HfModel whose parameters were sent; reserve_bytes: --reserve, added to
    every point's device need."""
    total = sum(model.numels)
    lines = ["model           %s" % model.summary(), settings_line,
             "objective       %s (the last row is its best)" % objective,
             "engine          %s, %d candidates" % (frontier.engine,
                                                    frontier.candidates),
             "reserve         %s GiB" % verdict.gib(reserve_bytes),
             "device need     " + verdict.DEVICE_NEED,
             "",
             "candidate  chunk size (elements)  %20s  search waste (elements)"
             "  padding (elements)  padding (%% of params)  device need GiB"
             % value_header(objective)]
    for p in frontier.points:
        lines.append("%9d  %21d  %20d  %23d  %18d  %20.4f%%  %15s" % (
            p.candidate, p.chunk_size, p.value, p.seed_waste,
            p.layout_padding, percent_of(p.layout_padding, total),
            verdict.gib(p.peak_rank_bytes + reserve_bytes)))
    return "\n".join(lines) + "\n"
