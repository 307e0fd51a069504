"""`python3 -m chunkplan plan`: the Gemini configurations that fit a
cluster, ranked, for a Hugging Face model, from a shell; a thin layer over
Client.plan (docs/plan.md).

    python3 -m chunkplan plan --hf-config FILE --device-memory 80GiB \\
        --host-memory 1TiB --gpus-per-node 8 --world-sizes 8,16,32 \\
        [--reserve 20GiB] [--micro-batch 1 --sequence-length 4096 \\
        --activation-checkpointing --flash-attention] [--max-options N] \\
        [--format table|json] [--emit colossalai] [--local]

sends the model's config.json itself (the server describes it: search.model)
with the cluster and, given --micro-batch and --sequence-length, the
workload whose activations the server ESTIMATES; and prints the table of
Plan.table() (one row per option: world size, placement and fractions,
chunk size and where it came from, device need and host bytes per node in
GiB, "fits" or Plan's why_not), or with --format json the PlanResponse as
one line of protobuf JSON, or with --emit colossalai the first option as
its chunk_config_dict and its GeminiPlugin(...) line (standard error says
when that option does not fit).
"""

from chunkplan import layout_command, models
from chunkplan.colossalai_export import EMIT_FORMATS, chunk_config_dict_literal


def add_arguments(parser):
    """Adds the plan command's own flags to `parser` (the model, search,
    server and TLS flags are the search command's)."""
    parser.add_argument("--world-sizes", type=layout_command.parse_degrees,
                        required=True, metavar="N[,N...]",
                        help="the data-parallel degrees the job may use, "
                        "e.g. 8,16,32")
    layout_command.add_budget_arguments(parser, required=True)
    parser.add_argument("--max-options", type=int, default=0, metavar="N",
                        help="at most N options (default: the server's 10)")
    parser.add_argument("--emit", choices=EMIT_FORMATS,
                        help="print only the first option, as "
                        "GeminiPlugin's chunk_config_dict and keyword "
                        "arguments")
    layout_command.add_workload_arguments(parser)
    layout_command.add_fixed_arguments(
        parser, "GeminiPlugin's fixed choices (default: GeminiPlugin's; "
        "Plan chooses the placement)")


def usage_problem(args):
    """A usage error in the flags' combination, as a sentence, or None."""
    problem = (layout_command.budget_problem(args) or
               layout_command.workload_problem(args))
    if problem:
        return problem
    if args.json and args.emit is not None:
        return "--json and --emit are two outputs: give one"
    return None


def plan(client, args, interval):
    """Client.plan with the command's flags: the Plan. Raises what
    Client.plan raises, OSError for a config that cannot be read."""
    return client.plan(
        models.model_config(args.hf_config, args.architecture),
        device_memory_bytes=args.device_memory, world_sizes=args.world_sizes,
        gpus_per_node=args.gpus_per_node,
        host_memory_bytes=args.host_memory or 0, reserve_bytes=args.reserve,
        search_range_m=args.search_range_m, search_interval=interval,
        min_chunk_size_m=args.min_chunk_size_m,
        filter_exlarge_params=not args.no_filter,
        precision=args.precision, master_weights=not args.no_master_weights,
        gradient_accumulation=args.gradient_accumulation,
        pin_memory=not args.no_pin_memory, optimizer=args.optimizer,
        workload=layout_command.workload(args), max_options=args.max_options,
        engine=args.engine, timeout=args.timeout)


def emit_lines(option):
    """--emit colossalai: the option's chunk_config_dict, then
    GeminiPlugin(...) with its keyword arguments."""
    return "%s\nGeminiPlugin(%s)\n" % (
        chunk_config_dict_literal(option.config_dict), option.colossalai)
