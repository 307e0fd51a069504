"""Answers without a server: the C++ command line's planner, in a child
process.

    with chunkplan.LocalClient() as client:      # as chunkplan.Client
        client.layout(numels, 32, 4096, dp_degree=8)

LocalClient has Client's search, layout, frontier, plan and *_request
methods and returns the same typed results. Each call sends the request,
built exactly as for a server, as protobuf JSON on the standard input of
`chunkplan search|layout|frontier|plan --local --request - --format json`
and reads the response back from its standard output: the answer is the one
`chunkplan-server` gives (both run the same planner and conversions). Exit
status 3 (the server's verdict: nothing fits) is an answer like 0: the
response on standard output carries the verdict.

Why a child process and not an extension module: the command line is
already built beside the package (<build>/bin/chunkplan next to
<build>/python), links the planner the server links, and needs no Python
headers, ABI or second build; its cost is one process start per call
(milliseconds), small beside a person's or a scheduler's wait.

The binary is the first of: the `cli` argument, $CHUNKPLAN_CLI, the build
tree's bin/chunkplan next to this package (<build>/python/chunkplan ->
<build>/bin/chunkplan), and `chunkplan` on $PATH (chunkplan.binary.find_cli,
which the `chunkplan` console script uses too).
"""

import subprocess

import grpc
from google.protobuf import json_format

from chunkplan.binary import CLI_ENV, CliNotFoundError, find_cli
from chunkplan.client import Client
from chunkplan.errors import error_for_code
from chunkplan.v1 import chunk_search_pb2

__all__ = ["CLI_ENV", "CliNotFoundError", "LocalClient", "find_cli"]

# The command line's exit status when the verdict says it does not fit (plan:
# no option fits; layout with a cluster: it does not): still an answer.
_EXIT_DOES_NOT_FIT = 3


def _error(stderr):
    """The ChunkplanError of a failed run's "CODE: message" line."""
    line = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    name, _, message = line.partition(": ")
    code = getattr(grpc.StatusCode, name, None)
    if not isinstance(code, grpc.StatusCode):
        code, message = grpc.StatusCode.UNKNOWN, line or "no output"
    return error_for_code(code, message)


class LocalClient(Client):
    """Client's calls answered by the chunkplan command line in a child
    process (see the module docstring); `cli` as find_cli. Raises
    CliNotFoundError when there is no command line to run."""

    def __init__(self, cli=None):  # pylint: disable=super-init-not-called
        self.cli = find_cli(cli)
        self.target = "local"

    def close(self):
        """Nothing to close: every call is its own process."""

    def _run(self, command, request, response, timeout):
        """`chunkplan COMMAND --local` on `request`; `response` (a new
        message) filled from its JSON. timeout: seconds, None for none;
        beyond it DeadlineExceededError."""
        return self._run_cli(command, ["--request", "-"],
                             json_format.MessageToJson(request), response,
                             timeout)

    def _run_cli(self, command, flags, stdin, response, timeout):
        """`chunkplan COMMAND --local FLAGS --format json` with `stdin`;
        as _run."""
        try:
            done = subprocess.run(
                [self.cli, command, "--local", *flags, "--format", "json"],
                input=stdin, capture_output=True, text=True, timeout=timeout,
                check=False)
        except subprocess.TimeoutExpired:
            raise error_for_code(grpc.StatusCode.DEADLINE_EXCEEDED,
                                 f"chunkplan {command} --local ran past "
                                 f"{timeout} s") from None
        if done.returncode not in (0, _EXIT_DOES_NOT_FIT):
            raise _error(done.stderr)
        return json_format.Parse(done.stdout, response)

    def describe_request(self, config, *, timeout=None,
                         wait_for_ready=False):
        """`chunkplan describe --local` on a ModelConfig: the model families
        of the command line, the server's own."""
        del wait_for_ready  # nothing to wait for
        flags = ["--hf-config", "-"]
        if config.architecture:
            flags += ["--architecture", config.architecture]
        return self._run_cli("describe", flags, config.hf_config_json,
                             chunk_search_pb2.ModelDescription(), timeout)

    def search_request(self, request, *, timeout=None, wait_for_ready=False):
        del wait_for_ready  # nothing to wait for
        return self._run("search", request,
                         chunk_search_pb2.ChunkSearchResponse(), timeout)

    def layout_request(self, request, *, timeout=None, wait_for_ready=False):
        del wait_for_ready
        return self._run("layout", request,
                         chunk_search_pb2.LayoutResponse(), timeout)

    def frontier_request(self, request, *, timeout=None,
                         wait_for_ready=False):
        del wait_for_ready
        return self._run("frontier", request,
                         chunk_search_pb2.FrontierResponse(), timeout)

    def plan_request(self, request, *, timeout=None, wait_for_ready=False):
        del wait_for_ready
        return self._run("plan", request, chunk_search_pb2.PlanResponse(),
                         timeout)
