"""`python3 -m chunkplan search|layout|frontier|plan`: the chunk search, what
Gemini allocates for it, how it moves with the chunk size and what fits a
cluster, for a Hugging Face model, from a shell.

    python3 -m chunkplan search --hf-config config.json --dp 8 \\
        --server localhost:50051 [--json]
    python3 -m chunkplan layout --hf-config DIR --dp 4,8,16,32 \\
        --device-memory 80GiB --server localhost:50051 [--json]
    python3 -m chunkplan frontier --hf-config DIR --dp 8 \\
        --objective layout_padding --plot frontier.png [--emit colossalai]
    python3 -m chunkplan plan --hf-config DIR --device-memory 80GiB \\
        --gpus-per-node 8 --world-sizes 8,16,32 [--host-memory 1TiB]

has the server at --server describe the model's parameters from its
config.json (chunkplan.models: the server's Describe) and answer, or with
--local the chunkplan command line in a child process (chunkplan.local;
nothing is planned in Python: the commands are thin layers over
Client.describe, Client.search, Client.layout, Client.frontier and
Client.plan), and prints a table, or with --json (or --format json) the
response (layout: one line per degree, with its verdict) in protobuf's JSON
mapping (field names as in the proto, every field printed, 64-bit integers
as strings), as the `chunkplan` command line prints it, or with --emit
colossalai (layout, frontier and plan) only the chosen configuration as
GeminiPlugin's chunk_config_dict. The search interval is GeminiPlugin's
own: --hidden-dim when the trainer passes one, else 1024 (--search-interval
sets another); the table (or, with --json or --emit, standard error) says
which was used and why. The layout, frontier and plan commands' own flags
and tables: chunkplan.layout_command, chunkplan.frontier_command,
chunkplan.plan_command.

Exit status: 0 on success; 1 when a call fails (one line on stderr,
"CODE: message"); 2 for a usage error ("INVALID_ARGUMENT: ...").
"""

import argparse
import sys

import grpc
from google.protobuf import json_format

from chunkplan import (frontier_command, frontier_curve, frontier_plot,
                       layout_command, models, plan_command)
from chunkplan.client import DEFAULT_TARGET, Client
from chunkplan.colossalai_export import chunk_config_dict_literal
from chunkplan.errors import ChunkplanError
from chunkplan.local import CLI_ENV, LocalClient
from chunkplan.request import ENGINES

EXIT_FAILED = 1
EXIT_USAGE = 2

_ELEMENTS_PER_MI = float(1 << 20)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in the "CODE: message" form."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"INVALID_ARGUMENT: {message}\n")


def _add_model_arguments(parser):
    """The flags search and layout share: the model, the search, the server
    and TLS."""
    parser.add_argument("--hf-config", required=True, metavar="PATH",
                        help="the model's config.json (or its directory)")
    parser.add_argument("--architecture", metavar="CLASS",
                        help="the transformers class to list (default: the "
                        "config's \"architectures\", else the LM head class)")
    parser.add_argument("--server", metavar="TARGET",
                        help="host:port or unix:/path (default "
                        f"{DEFAULT_TARGET})")
    parser.add_argument("--local", action="store_true",
                        help="answer without a server: the chunkplan "
                        "command line's planner in a child process "
                        "(chunkplan.local)")
    parser.add_argument("--cli", metavar="PATH",
                        help="with --local: the chunkplan binary (default "
                        f"${CLI_ENV}, else <build>/bin/chunkplan beside "
                        "this package, else chunkplan on PATH)")
    parser.add_argument("--search-range-m", type=float, default=32.0,
                        metavar="M", help="sweep width in 2**20 elements "
                        "(default 32, GeminiPlugin's)")
    interval = parser.add_mutually_exclusive_group()
    interval.add_argument("--hidden-dim", type=int, metavar="H",
                          help="GeminiPlugin's hidden_dim, when the trainer "
                          "passes one: the search interval")
    interval.add_argument("--search-interval", type=int, metavar="N",
                          help="step between candidates (default: "
                          "--hidden-dim, else GeminiPlugin's 1024)")
    parser.add_argument("--min-chunk-size-m", type=float, default=32.0,
                        metavar="M", help="groups below this many 2**20 "
                        "elements stay gathered (default 32)")
    parser.add_argument("--no-filter", action="store_true",
                        help="keep extra-large parameters in the sweep")
    parser.add_argument("--engine", choices=ENGINES, default="auto")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="deadline of each call (default: none)")
    parser.add_argument("--json", action="store_true",
                        help="print the response as protobuf JSON (layout: "
                        "one line per degree, with its verdict)")
    parser.add_argument("--format", choices=("table", "json"),
                        default="table",
                        help="table for people (default), or json: as "
                        "--json")
    tls = parser.add_argument_group("TLS (default: plaintext)")
    tls.add_argument("--tls", action="store_true",
                     help="TLS, trusting the system's CAs")
    tls.add_argument("--tls-ca", metavar="PEM",
                     help="TLS, trusting this CA file")
    tls.add_argument("--tls-cert", metavar="PEM",
                     help="client certificate (mutual TLS); needs --tls-key")
    tls.add_argument("--tls-key", metavar="PEM",
                     help="the private key of --tls-cert")
    tls.add_argument("--tls-server-name", metavar="NAME",
                     help="the name the server's certificate must carry")


def _parser():
    parser = _Parser(prog="python3 -m chunkplan",
                     description="chunkplan's Python client.")
    commands = parser.add_subparsers(dest="command", required=True,
                                     parser_class=_Parser)
    search = commands.add_parser(
        "search", help="plan the chunks of a Hugging Face model",
        description="Plans the chunk configuration of the model that a "
        "Hugging Face config.json describes.")
    _add_model_arguments(search)
    search.add_argument("--dp", type=int, default=1, metavar="N",
                        help="data-parallel degree of every parameter "
                        "(default 1)")
    layout = commands.add_parser(
        "layout", help="what Gemini allocates for a Hugging Face model",
        description="Lays out the chunks Gemini allocates for the searched "
        "configuration of the model that a Hugging Face config.json "
        "describes, and the bytes of its most and least loaded rank (GiB: "
        "2**30 bytes).")
    _add_model_arguments(layout)
    layout_command.add_arguments(layout)
    frontier = commands.add_parser(
        "frontier", help="padding and memory against the chunk size",
        description="The search's candidates for the model that a Hugging "
        "Face config.json describes, scored by an objective: every one "
        "that sets a new least value, with its real padding and the bytes "
        "of the most loaded rank (GiB: 2**30 bytes).")
    _add_model_arguments(frontier)
    frontier_command.add_arguments(frontier)
    layout_command.add_choice_arguments(frontier)
    plan = commands.add_parser(
        "plan", help="the Gemini configurations that fit a cluster",
        description="Ranks the Gemini configurations (world size, chunk "
        "size, placement) of the model that a Hugging Face config.json "
        "describes on a cluster, those that fit first (docs/plan.md; GiB: "
        "2**30 bytes).")
    _add_model_arguments(plan)
    plan_command.add_arguments(plan)
    return parser


def _percent(part, whole):
    return "-" if whole == 0 else "%.2f%%" % (100.0 * part / whole)


def _nanos(nanos):
    if nanos < 1_000_000:
        return "%.1f µs" % (nanos / 1e3)
    return "%.2f ms" % (nanos / 1e6)


def format_table(model, result):
    """The readable answer: the model, the configs, total, waste and how the
    server found it."""
    lines = [
        "model         %s" % model.summary(),
        "",
        "dp degree  chunk size (elements)  chunk size (MiB)  keep gathered",
    ]
    for degree, config in result.config_dict.items():
        lines.append("%9d  %21d  %16.2f  %s" % (
            degree, config["chunk_size"],
            config["chunk_size"] / _ELEMENTS_PER_MI,
            "yes" if config["keep_gathered"] else "no"))
    lines += [
        "",
        "total params  %d" % result.total_param_size,
        "waste         %d elements (%s of total)" % (
            result.min_chunk_waste,
            _percent(result.min_chunk_waste, result.total_param_size)),
        "engine        %s" % result.engine,
        "candidates    %d" % result.candidates,
        "time          %s" % _nanos(result.search_nanos),
    ]
    return "\n".join(lines) + "\n"


class _UsageError(Exception):
    """A combination of flags that argparse cannot check."""


def _client(args):
    """A LocalClient with --local, else a Client of --server and TLS."""
    tls_flags = (args.tls, args.tls_ca, args.tls_cert, args.tls_key,
                 args.tls_server_name)
    if args.local:
        if args.server is not None or any(tls_flags):
            raise _UsageError("--local answers here: it takes no --server "
                              "or --tls* flag")
        return LocalClient(args.cli)
    if args.cli is not None:
        raise _UsageError("--cli goes with --local")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise _UsageError("--tls-cert and --tls-key go together")
    return Client(args.server or DEFAULT_TARGET, tls=args.tls,
                  root_certificates=args.tls_ca,
                  certificate_chain=args.tls_cert, private_key=args.tls_key,
                  tls_server_name=args.tls_server_name)


def _json_line(message):
    """A message as one line of protobuf JSON: field names as in the proto,
    every field printed, 64-bit integers as strings."""
    return json_format.MessageToJson(
        message, preserving_proto_field_name=True,
        including_default_value_fields=True, indent=None) + "\n"


# GeminiPlugin's defaults for the chunk search (search_range_m,
# min_chunk_size_m).
GEMINI_SEARCH_RANGE_M = 32.0
GEMINI_MIN_CHUNK_SIZE_M = 32.0


# GeminiPlugin's search interval when the trainer passes no hidden_dim.
GEMINI_SEARCH_INTERVAL = 1024


def search_interval(args):
    """(the search interval, why): --search-interval, else --hidden-dim
    (GeminiPlugin's hidden_dim), else GeminiPlugin's default 1024."""
    if args.search_interval is not None:
        return args.search_interval, "--search-interval"
    if args.hidden_dim is not None:
        return args.hidden_dim, "--hidden-dim: GeminiPlugin's hidden_dim"
    return GEMINI_SEARCH_INTERVAL, (
        "GeminiPlugin's default: no hidden_dim; set it with --hidden-dim "
        "when the trainer passes one")


def interval_line(args):
    """"search interval 1024 (why)", one line."""
    return "search interval %d (%s)\n" % search_interval(args)


def _model_and_interval(args, client):
    """The HfModel of --hf-config, as the server describes it, and the
    search interval (search_interval)."""
    model = models.describe(args.hf_config, args.architecture, client=client,
                            timeout=args.timeout)
    return model, search_interval(args)[0]


def _say_interval(args, out, err):
    """The interval line: in the table, or on `err` beside machine output."""
    machine = args.json or getattr(args, "emit", None) is not None
    (err if machine else out).write(interval_line(args))


def _search(args, out, err):
    with _client(args) as client:
        model, interval = _model_and_interval(args, client)
        result = client.search(
            model.numels, args.search_range_m, interval,
            args.min_chunk_size_m, not args.no_filter, timeout=args.timeout,
            dp_degree=args.dp, engine=args.engine)
    _say_interval(args, out, err)
    if args.json:
        out.write(_json_line(result.response))
    else:
        out.write(format_table(model, result))


def _plugin_line(args, config_dict):
    """--emit colossalai: the chunk_config_dict, then GeminiPlugin's
    keyword arguments with it."""
    literal = chunk_config_dict_literal(config_dict)
    return "%s\nGeminiPlugin(%s, chunk_config_dict=%s)\n" % (
        literal, layout_command.plugin_keywords(args), literal)


def _check_output_flags(args):
    if args.json and args.emit is not None:
        raise _UsageError("--json and --emit are two outputs: give one")


def _layout(args, out, err):
    _check_output_flags(args)
    problem = (layout_command.budget_problem(args) or
               layout_command.workload_problem(args))
    if problem:
        raise _UsageError(problem)
    with _client(args) as client:
        model, interval = _model_and_interval(args, client)
        results = layout_command.layouts(client, model, args, interval)
        if args.offload_sweep:
            for degree, layout in results:
                out.write(layout_command.format_sweep(
                    model, args, layout_command.sweep(client, model, args,
                                                      degree, layout)))
    _say_interval(args, out, err)
    if args.offload_sweep:
        return
    if args.emit is not None:
        for _, layout in results:
            out.write(_plugin_line(args, layout.config_dict))
    elif args.json:
        for degree, layout in results:
            out.write(layout_command.json_line(args, degree, layout))
    elif len(results) == 1:
        out.write(layout_command.format_layout(model, args, *results[0]))
    else:
        out.write(layout_command.format_rows(model, args, results))


def _frontier(args, out, err):
    _check_output_flags(args)
    keywords = layout_command.gemini_keywords(args)
    with _client(args) as client:
        model, interval = _model_and_interval(args, client)
        search = (model.numels, args.search_range_m, interval,
                  args.min_chunk_size_m, not args.no_filter)
        _say_interval(args, out, err)
        frontier = client.frontier(*search, dp_degree=args.dp, **keywords)
        if args.plot is not None:
            # ColossalAI's pick as GeminiPlugin makes it: its default range
            # and minimum (32 Mi elements each), the filter on, this
            # interval (GeminiPlugin's hidden_dim).
            seed_pick = client.frontier(
                model.numels, GEMINI_SEARCH_RANGE_M, interval,
                GEMINI_MIN_CHUNK_SIZE_M, True, dp_degree=args.dp,
                **dict(keywords, objective="seed_waste")).best
            frontier_plot.plot(
                args.plot, frontier, seed_pick, sum(model.numels),
                title="%s, dp %d, objective %s" % (
                    model.summary(), args.dp, args.objective),
                device_memory=args.device_memory,
                curve=frontier_curve.sample(client, frontier,
                                            timeout=args.timeout))
        if args.emit is not None:
            layout = client.layout(*search, dp_degree=args.dp, **keywords)
            out.write(_plugin_line(args, layout.config_dict))
            return
    if args.json:
        out.write(_json_line(frontier.response))
    else:
        out.write(frontier_command.format_frontier(
            model, layout_command.settings_line(args), args.objective,
            frontier, args.reserve))


def _plan(args, out, err):
    problem = plan_command.usage_problem(args)
    if problem:
        raise _UsageError(problem)
    with _client(args) as client:
        plan = plan_command.plan(client, args, search_interval(args)[0])
    _say_interval(args, out, err)
    if args.emit is not None:
        if not plan.options:
            raise ChunkplanError(grpc.StatusCode.NOT_FOUND,
                                 "Plan answered no option")
        out.write(plan_command.emit_lines(plan.best))
        if not plan.best.fits:
            err.write("option 1 does not fit: %s\n" % plan.best.why_not)
    elif args.json:
        out.write(_json_line(plan.response))
    else:
        out.write("model           %s\nsettings        %s\n%s" % (
            args.hf_config, layout_command.fixed_settings(args),
            plan.table()))


def _failure_code(error):
    """The status code name to print for an error that is not a
    ChunkplanError."""
    if isinstance(error, FileNotFoundError):
        return grpc.StatusCode.NOT_FOUND.name
    if isinstance(error, PermissionError):
        return grpc.StatusCode.PERMISSION_DENIED.name
    if isinstance(error, (ValueError, TypeError)):
        return grpc.StatusCode.INVALID_ARGUMENT.name
    return grpc.StatusCode.UNKNOWN.name


def main(argv=None, out=None, err=None):
    """Runs the command line; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = _parser().parse_args(argv)
    args.json = args.json or args.format == "json"
    try:
        {"search": _search, "layout": _layout, "frontier": _frontier,
         "plan": _plan}[args.command](args, out, err)
    except _UsageError as error:
        err.write(f"INVALID_ARGUMENT: {error}\n")
        return EXIT_USAGE
    except ChunkplanError as error:
        err.write(f"{error}\n")
        return EXIT_FAILED
    except frontier_plot.MatplotlibMissingError as error:
        err.write(f"{grpc.StatusCode.FAILED_PRECONDITION.name}: {error}\n")
        return EXIT_FAILED
    except (OSError, ValueError, TypeError) as error:
        err.write(f"{_failure_code(error)}: {error}\n")
        return EXIT_FAILED
    return 0
