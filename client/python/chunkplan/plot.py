"""`python3 -m chunkplan.plot`: the frontier's picture, the one part of the
command line that needs Python (matplotlib). Every other command is the
chunkplan binary's (`chunkplan frontier` prints the same points as a table).

    python3 -m chunkplan.plot --hf-config config.json --dp 8 \\
        [--architecture NAME] [--hidden-dim H] \\
        [--objective seed_waste|layout_padding|peak_rank_bytes] \\
        [--device-memory-bytes N] [--samples 200] \\
        (--server HOST:PORT | --local) frontier.png

has the server at --server (or, with --local, the chunkplan binary:
LocalClient) describe the model and answer its Frontier at GeminiPlugin's
search (range 32 Mi elements, interval --hidden-dim or else 1024, minimum
32 Mi, the filter on, every parameter at degree --dp) and ColossalAI's pick
(the same search's seed_waste best), and draws Frontier.plot: padding and
the most loaded rank's GiB against the chunk size, the pick, the
objective's best, the device memory's line (bytes: e.g. $((80 << 30))),
over a faint sample of --samples candidates (one Layout call each). Prints
one line naming the file and the points drawn.

Exit status: 0 on success; 1 when a call fails or the picture cannot be
drawn (one line on stderr, "CODE: message"); 2 for a usage error.
"""

import argparse
import sys

from chunkplan import models
from chunkplan.client import Client
from chunkplan.errors import ChunkplanError
from chunkplan.frontier_curve import DEFAULT_SAMPLES
from chunkplan.frontier_plot import MatplotlibMissingError
from chunkplan.layout_request import OBJECTIVES
from chunkplan.local import LocalClient

# GeminiPlugin's search: range and minimum in 2**20 elements, and its
# interval without a hidden_dim.
GEMINI_SEARCH_RANGE_M = 32.0
GEMINI_SEARCH_INTERVAL = 1024

EXIT_FAILED = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in the "CODE: message" form."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"INVALID_ARGUMENT: {message}\n")


def _parser():
    parser = _Parser(prog="python3 -m chunkplan.plot",
                     description="Draws a model's frontier to a PNG.")
    parser.add_argument("output", metavar="PNG", help="the file to write")
    parser.add_argument("--hf-config", required=True, metavar="PATH",
                        help="the model's config.json (or its directory)")
    parser.add_argument("--architecture", metavar="CLASS",
                        help="the class to list (default: the config's)")
    parser.add_argument("--dp", type=int, default=1, metavar="N",
                        help="data-parallel degree of every parameter")
    parser.add_argument("--hidden-dim", type=int, metavar="H",
                        help="GeminiPlugin's hidden_dim: the interval")
    parser.add_argument("--objective", choices=OBJECTIVES,
                        default="seed_waste")
    parser.add_argument("--device-memory-bytes", type=int, metavar="N",
                        help="one device's memory, drawn as a line")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES,
                        metavar="N", help="candidates drawn faintly")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--server", metavar="TARGET",
                        help="host:port or unix:/path")
    target.add_argument("--local", action="store_true",
                        help="answer with the chunkplan binary, no server")
    return parser


def draw(client, args):
    """Draws args.output through `client`; returns the line to print."""
    model = models.describe(args.hf_config, args.architecture, client=client)
    search = (model.numels, GEMINI_SEARCH_RANGE_M,
              args.hidden_dim or GEMINI_SEARCH_INTERVAL)
    frontier = client.frontier(*search, dp_degree=args.dp,
                               objective=args.objective)
    pick = (frontier if args.objective == "seed_waste" else
            client.frontier(*search, dp_degree=args.dp)).best
    frontier.plot(args.output, pick, device_memory=args.device_memory_bytes,
                  title="%s, dp %d, objective %s" % (
                      model.summary(), args.dp, args.objective),
                  client=client, samples=args.samples)
    return ("%s: %d frontier points; ColossalAI's pick at C' = %d, the "
            "objective's best at C' = %d\n" % (
                args.output, len(frontier.points), pick.chunk_size,
                frontier.best.chunk_size))


def main(argv=None, out=None, err=None):
    """Runs the command; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = _parser().parse_args(argv)
    try:
        with (LocalClient() if args.local else Client(args.server)) as client:
            out.write(draw(client, args))
    except ChunkplanError as error:
        err.write(f"{error}\n")
        return EXIT_FAILED
    except (MatplotlibMissingError, OSError) as error:
        err.write(f"FAILED_PRECONDITION: {error}\n")
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
