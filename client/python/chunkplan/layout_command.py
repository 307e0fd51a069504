"""`python3 -m chunkplan layout`: what Gemini allocates for a Hugging Face
model, from a shell; a thin layer over Client.layout.

    python3 -m chunkplan layout --hf-config DIR --dp 8
    python3 -m chunkplan layout --hf-config DIR --dp 4,8,16,32 \\
        --device-memory 80GiB

One degree: the table of that layout (per group the chunk size, chunks and
real padding; ColossalAI's search's min_chunk_waste beside the real layout
padding; every part of the most and least loaded rank in GiB; the warning
of chunks that dwarf what they hold, chunkplan.padding_warning). Several
degrees (one Layout call each, every parameter at that degree): one row per
degree, so that a user can pick one. Both name their figures as every
command does (chunkplan.verdict, Plan's definitions): the device total, the
gathered chunk, --reserve, and the device need (their sum); --device-memory
adds the headroom and whether the device need fits; --gpu NAME gives a
card's memory as nvidia-smi reports it instead (chunkplan.gpu_presets);
--gpus-per-node adds the host bytes per node (min(N, dp) ranks),
--host-memory whether the node holds them; --micro-batch and
--sequence-length (with --activation-checkpointing, --flash-attention) add
the server's activation ESTIMATE (decoder-only models, docs/plan.md) to the
device need. --json / --format json keeps the verdict in each line. GiB
here is 2**30 bytes, printed with 2 decimals.
--objective picks the candidate to lay out (default ColossalAI's pick);
--emit colossalai prints only the configs laid out, as GeminiPlugin's
chunk_config_dict (chunkplan.colossalai_export), one line per degree.
"""

import argparse
import fractions
import json
import re

from google.protobuf import json_format

from chunkplan import gpu_presets, models, verdict
from chunkplan.colossalai_export import EMIT_FORMATS
from chunkplan.layout_request import (OBJECTIVES, OPTIMIZERS, PLACEMENTS,
                                      PRECISIONS)
from chunkplan.padding_warning import padding_warning

# --device-memory's units, case-insensitive: binary and SI.
MEMORY_UNITS = {"tib": 2**40, "gib": 2**30, "mib": 2**20, "tb": 10**12,
                "gb": 10**9, "mb": 10**6}
_MEMORY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-z]+)\s*$",
                     re.IGNORECASE)

# The parts of a RankMemory, in table order, with their row names.
_PARTS = (("params", "param_bytes"), ("master weights", "master_bytes"),
          ("gradients", "grad_bytes"), ("optimizer states", "optimizer_bytes"),
          ("frozen", "frozen_bytes"), ("device total", "device_bytes"),
          ("pinned host", "pinned_host_bytes"),
          ("offloaded host", "offloaded_host_bytes"),
          ("host total", "host_bytes"))
# --offload-sweep's fractions: 0, 0.05, ..., 1.
SWEEP_FRACTIONS = tuple(i / 20 for i in range(21))


def parse_memory(text):
    """Bytes (an int, rounded down) from "80GiB", "80 GB", "79.5GiB",
    "81920MiB", "1TiB": a non-negative number and one of the units TiB
    (2**40), GiB (2**30), MiB (2**20), TB (10**12), GB (10**9), MB (10**6),
    any case. Raises argparse.ArgumentTypeError (a usage error) otherwise;
    a bare number is refused, as its unit would be a guess."""
    match = _MEMORY.match(text)
    unit = match and MEMORY_UNITS.get(match.group(2).lower())
    if not unit:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a memory size: a number and one of TiB, GiB, "
            "MiB (2**40, 2**30, 2**20 bytes), TB, GB, MB (10**12, 10**9, "
            "10**6 bytes), e.g. 80GiB")
    return int(fractions.Fraction(match.group(1)) * unit)


def parse_degrees(text):
    """The dp degrees of "8" or "4,8,16,32": a list of ints >= 1, in the
    order given, each once. Raises argparse.ArgumentTypeError otherwise."""
    degrees = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected degrees >= 1 separated by commas, "
                "e.g. 8 or 4,8,16,32")
        if int(part) in degrees:
            raise argparse.ArgumentTypeError(
                f"{text!r}: degree {int(part)} given twice")
        degrees.append(int(part))
    return degrees


def add_arguments(parser):
    """Adds the layout command's own flags to `parser` (the model, search,
    server and TLS flags are the search command's)."""
    parser.add_argument("--dp", type=parse_degrees, default=[1],
                        metavar="N[,N...]",
                        help="data-parallel degree of every parameter; "
                        "several, comma-separated, give one row each "
                        "(default 1)")
    add_budget_arguments(parser)
    add_workload_arguments(parser)
    parser.add_argument("--offload-sweep", action="store_true",
                        help="one row per offload_optim_frac 0, 0.05, ..., "
                        "1 on the chosen configuration: the chunks really "
                        "offloaded")
    add_choice_arguments(parser)


def add_budget_arguments(parser, required=False):
    """--device-memory or --gpu, --reserve, --gpus-per-node and
    --host-memory (into args.device_memory, reserve, gpus_per_node,
    host_memory: bytes or None); budget_problem judges their combination.
    required: the device memory and --gpus-per-node must be given
    (plan)."""
    gpu_presets.add_device_memory_arguments(parser, parse_memory, required)
    parser.add_argument("--reserve", type=parse_memory, default=0,
                        metavar="SIZE",
                        help="per device, kept free for the CUDA context "
                        "and workspace: counted in the device need "
                        "(default 0)")
    parser.add_argument("--gpus-per-node", type=parse_count,
                        required=required, metavar="N",
                        help="devices (ranks) per node: the host bytes of "
                        "a node are min(N, dp) x the most loaded rank's")
    parser.add_argument("--host-memory", type=parse_memory, metavar="SIZE",
                        help="host memory of one node, e.g. 1TiB: whether "
                        "it holds the node's host bytes (needs "
                        "--gpus-per-node)")


def add_workload_arguments(parser):
    """--micro-batch, --sequence-length, --activation-checkpointing and
    --flash-attention: the workload whose activations the server
    ESTIMATES (decoder-only models; workload_problem judges the
    combination, workload reads it back)."""
    work = parser.add_argument_group(
        "workload (an activation ESTIMATE: decoder-only models)")
    work.add_argument("--micro-batch", type=parse_count, metavar="N",
                      help="sequences per micro-batch")
    work.add_argument("--sequence-length", type=parse_count, metavar="N",
                      help="tokens per sequence")
    work.add_argument("--activation-checkpointing", action="store_true",
                      help="full recomputation: one checkpoint per layer")
    work.add_argument("--flash-attention", action="store_true",
                      help="no attention scores stored")


def workload_problem(args):
    """A usage error in the workload flags' combination, as a sentence, or
    None."""
    if (args.micro_batch is None) != (args.sequence_length is None):
        return "--micro-batch and --sequence-length go together"
    if args.micro_batch is None and (args.activation_checkpointing or
                                     args.flash_attention):
        return ("--activation-checkpointing and --flash-attention describe "
                "a workload: give --micro-batch and --sequence-length")
    return None


def workload(args):
    """Client.layout's and Client.plan's workload dict, or None without
    one."""
    if args.micro_batch is None:
        return None
    return {"micro_batch": args.micro_batch,
            "sequence_length": args.sequence_length,
            "activation_checkpointing": args.activation_checkpointing,
            "flash_attention": args.flash_attention}


def parse_count(text):
    """An int >= 1 (e.g. --gpus-per-node); argparse.ArgumentTypeError
    otherwise."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a whole number >= 1, e.g. 8")
    return int(text)


def budget_problem(args):
    """A usage error in the budget flags' combination, as a sentence, or
    None: --host-memory needs --gpus-per-node."""
    if args.host_memory is not None and args.gpus_per_node is None:
        return "--host-memory needs --gpus-per-node (the ranks of a node)"
    return None


def verdict_of(args, degree, layout):
    """The Verdict (chunkplan.verdict) of `layout` at `degree` under the
    budget flags."""
    return verdict.of_layout(layout, degree, args.reserve,
                             args.device_memory, args.gpus_per_node,
                             args.host_memory)


def json_line(args, degree, layout):
    """--json's line for one degree: the LayoutResponse in protobuf's JSON
    mapping (field names as in the proto, every field printed, 64-bit
    integers as strings) with one more key, "verdict": the Verdict's
    to_json() under the budget flags."""
    fields = json_format.MessageToDict(
        layout.response, preserving_proto_field_name=True,
        including_default_value_fields=True)
    fields["verdict"] = verdict_of(args, degree, layout).to_json()
    return json.dumps(fields) + "\n"


def add_fixed_arguments(parser, title):
    """Adds GeminiPlugin's choices that are not the placement (--precision,
    --no-master-weights, --gradient-accumulation, --no-pin-memory,
    --optimizer; fixed_settings says them back) as an argument group named
    `title`, and returns the group."""
    gemini = parser.add_argument_group(title)
    gemini.add_argument("--precision", choices=PRECISIONS, default="fp16")
    gemini.add_argument("--no-master-weights", action="store_true",
                        help="no fp32 master copies (master_weights=False)")
    gemini.add_argument("--gradient-accumulation", action="store_true",
                        help="enable_gradient_accumulation=True")
    gemini.add_argument("--no-pin-memory", action="store_true",
                        help="no pinned host copies of the shards")
    gemini.add_argument("--optimizer", choices=OPTIMIZERS, default="adam",
                        help="the optimizer whose states count (default "
                        "adam)")
    return gemini


def add_choice_arguments(parser):
    """The flags layout and frontier share: --objective, --emit and the
    GeminiPlugin settings (gemini_keywords reads the latter back)."""
    parser.add_argument("--objective", choices=OBJECTIVES,
                        default="seed_waste",
                        help="what the chosen candidate minimises: the "
                        "waste by ColossalAI's search (default, its pick), "
                        "the layout's real padding "
                        "or the most loaded rank's bytes")
    parser.add_argument("--emit", choices=EMIT_FORMATS,
                        help="print only the chosen configuration, as "
                        "GeminiPlugin's chunk_config_dict (one line per "
                        "degree)")
    gemini = add_fixed_arguments(parser, "GeminiPlugin settings (default: "
                                 "GeminiPlugin's)")
    gemini.add_argument("--placement", choices=PLACEMENTS, default="static",
                        help="placement_policy (default static)")
    gemini.add_argument("--offload-optim-frac", type=float, default=0.0,
                        metavar="F", help="static: offload_optim_frac")
    gemini.add_argument("--offload-param-frac", type=float, default=0.0,
                        metavar="F", help="static: offload_param_frac")
    gemini.add_argument("--shard-param-frac", type=float, metavar="F",
                        help="static: shard_param_frac (default 1.0)")


def gemini_keywords(args):
    """The keywords Client.layout and Client.frontier share, from the
    command's flags: the GeminiPlugin settings, objective, engine and
    timeout."""
    keywords = dict(precision=args.precision,
                    master_weights=not args.no_master_weights,
                    gradient_accumulation=args.gradient_accumulation,
                    pin_memory=not args.no_pin_memory,
                    optimizer=args.optimizer, objective=args.objective,
                    engine=args.engine, timeout=args.timeout,
                    placement=args.placement,
                    shard_param_frac=args.shard_param_frac,
                    offload_optim_frac=args.offload_optim_frac,
                    offload_param_frac=args.offload_param_frac)
    device_memory = getattr(args, "device_memory", None)
    if args.placement == "auto" and device_memory is not None:
        keywords["device_memory_bytes"] = device_memory
    return keywords


def plugin_keywords(args):
    """GeminiPlugin's placement keywords for these flags, as one line of
    Python source: placement_policy and, under static, the three
    fractions."""
    if args.placement == "auto":
        return 'placement_policy="auto"'
    shard = 1.0 if args.shard_param_frac is None else args.shard_param_frac
    return ('placement_policy="static", shard_param_frac=%r, '
            'offload_optim_frac=%r, offload_param_frac=%r' % (
                shard, args.offload_optim_frac, args.offload_param_frac))


def layouts(client, model, args, interval):
    """[(degree, Layout)] for every degree of --dp, in order: one
    Client.layout call each with the command's settings; with a workload
    the model's config travels instead of its numels (the server reads the
    shape the estimate needs from it). Raises what Client.layout raises,
    OSError for a config that cannot be read."""
    params = model.numels
    if workload(args) is not None:
        params = models.model_config(args.hf_config, args.architecture)
    return [(degree, client.layout(
        params, args.search_range_m, interval, args.min_chunk_size_m,
        not args.no_filter, dp_degree=degree, workload=workload(args),
        **gemini_keywords(args))) for degree in args.dp]


def fixed_settings(args):
    """The GeminiPlugin choices that are not the placement, in words."""
    on_off = {True: "on", False: "off"}
    return ("%s, master weights %s, gradient accumulation %s, pin memory "
            "%s, optimizer %s" % (
                args.precision, on_off[not args.no_master_weights],
                on_off[args.gradient_accumulation],
                on_off[not args.no_pin_memory], args.optimizer))


def settings_line(args):
    """The "settings" line of the tables: the GeminiPlugin flags."""
    return "settings        %s, %s" % (fixed_settings(args),
                                       plugin_keywords(args))


def format_layout(model, args, degree, layout):
    """The table of one degree's layout (see the module docstring)."""
    lines = ["model           %s" % model.summary(),
             "dp degree       %d" % degree, settings_line(args), "",
             "dp degree  chunk size (elements)  keep gathered  chunks  "
             "padding (elements)"]
    for group in layout.groups:
        lines.append("%9d  %21d  %13s  %6d  %18d" % (
            group.dp_degree, group.chunk_size,
            "yes" if group.keep_gathered else "no", len(group.chunks),
            group.padding))
    lines.append("")
    if layout.search is not None:
        lines.append("search waste    %d elements (ColossalAI's search's "
                     "min_chunk_waste)" % layout.search.min_chunk_waste)
    lines += ["layout padding  %d elements (allocated as padding)" %
              layout.layout_padding, "",
              "GiB               most loaded rank  (best order)  "
              "least loaded rank"]
    best = layout.most_loaded_rank_least or layout.most_loaded_rank
    for name, part in _PARTS:
        lines.append("%-16s  %16s  %12s  %17s" % (
            name, verdict.gib(getattr(layout.most_loaded_rank, part)),
            verdict.gib(getattr(best, part)),
            verdict.gib(getattr(layout.least_loaded_rank, part))))
    lines += placement_lines(args, layout)
    lines += [""] + verdict.table_lines(verdict_of(args, degree, layout),
                                        layout.gathered_chunk_bytes,
                                        args.gpus_per_node, degree)
    lines += padding_warning(layout)
    return "\n".join(lines) + "\n"


def placement_lines(args, layout):
    """The placement's outcome, host bytes per node and notes."""
    p = layout.placement
    lines = ["", "offloaded       %d .. %d chunks (least .. most over every "
             "chunk order), %.1f%% of the fp16 chunk bytes" % (
                 p.offloaded_chunks, p.offloaded_chunks_max,
                 100 * p.effective_offload_optim_frac)]
    if p.gathered_at_run_time:
        lines.append("gathered        %d chunks kept whole at run time" %
                     p.gathered_at_run_time)
    if p.param_offloaded_chunks:
        lines.append("fp16 on host    %d chunks" % p.param_offloaded_chunks)
    lines += ["note            %s" % note for note in p.notes]
    return lines


def format_sweep(model, args, rows):
    """--offload-sweep's table: one row per (fraction, Layout)."""
    lines = ["model           %s" % model.summary(), settings_line(args), "",
             "offload_optim_frac  offloaded chunks  of fp16 bytes  "
             "device GiB (worst .. best order)  host GiB"]
    for fraction, layout in rows:
        p = layout.placement
        best = layout.most_loaded_rank_least or layout.most_loaded_rank
        lines.append("%18.2f  %16s  %12.1f%%  %32s  %8s" % (
            fraction, "%d .. %d" % (p.offloaded_chunks,
                                    p.offloaded_chunks_max),
            100 * p.effective_offload_optim_frac,
            "%s .. %s" % (verdict.gib(layout.most_loaded_rank.device_bytes),
                          verdict.gib(best.device_bytes)),
            verdict.gib(layout.most_loaded_rank.host_bytes)))
    return "\n".join(lines) + "\n"


def sweep(client, model, args, degree, layout):
    """[(fraction, Layout)] for SWEEP_FRACTIONS on `layout`'s configs (every
    parameter at `degree`) under static placement (the other flags as
    given)."""
    keywords = dict(gemini_keywords(args), placement="static",
                    objective="seed_waste")
    keywords.pop("device_memory_bytes", None)
    rows = []
    for fraction in SWEEP_FRACTIONS:
        keywords["offload_optim_frac"] = fraction
        rows.append((fraction, client.layout(
            model.numels, configs=layout.config_dict, dp_degree=degree,
            **keywords)))
    return rows


def format_rows(model, args, results):
    """One row per degree of [(degree, Layout)]: chunk size (the first
    group's: every parameter is at that degree), real padding, ColossalAI's
    search's waste, the most loaded rank's device total and device need
    (chunkplan.verdict), with --gpus-per-node the host bytes per node, with
    --device-memory / --host-memory the headroom and whether it fits."""
    lines = ["model           %s" % model.summary(), settings_line(args)]
    lines += verdict.budget_lines(args.reserve, args.device_memory,
                                  args.gpus_per_node, args.host_memory,
                                  results[0][1].activation_bytes)
    header = ("dp degree  chunk size (elements)  keep gathered  "
              "padding (elements)  search waste (elements)  device total "
              "GiB  device need GiB")
    columns = verdict.row_columns(args.device_memory, args.gpus_per_node,
                                  args.host_memory)
    lines += ["", header + "".join("  " + title for title, _ in columns)]
    for degree, layout in results:
        group = layout.groups[0]
        judged = verdict_of(args, degree, layout)
        row = "%9d  %21d  %13s  %18d  %23s  %16s  %15s" % (
            degree, group.chunk_size, "yes" if group.keep_gathered else "no",
            layout.layout_padding,
            "-" if layout.search is None else layout.search.min_chunk_waste,
            verdict.gib(layout.most_loaded_rank.device_bytes),
            verdict.gib(judged.device_need_bytes))
        lines.append(row + verdict.row_cells(columns, judged))
    for degree, layout in results:
        warning = padding_warning(layout)
        if warning:
            lines += ["", "dp degree %d:" % degree] + warning[1:]
    return "\n".join(lines) + "\n"
