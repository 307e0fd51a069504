"""The chunkplan command line is the C++ binary `chunkplan` (client/cli):
this module finds it, for LocalClient and for the `chunkplan` console
script that installing this package puts on PATH.

    chunkplan layout --hf-config config.json --dp 4,8,16 --local
    python3 -m chunkplan plan ...        # the same: this module's main()

main() replaces the Python process with the binary (os.execv), so that
its flags, output, standard input and exit codes are the binary's own:
one command line, written once, in C++. The binary is the first of
$CHUNKPLAN_CLI, the build tree's bin/chunkplan next to this package
(<build>/python/chunkplan -> <build>/bin/chunkplan), and `chunkplan` on
$PATH other than this console script itself. Without one, main() prints
"NOT_FOUND: ..." saying how to get it and exits 1.
"""

import os
import pathlib
import sys

# The environment variable naming the chunkplan binary.
CLI_ENV = "CHUNKPLAN_CLI"
# Set in the binary's environment by main(): a `chunkplan` found on PATH
# that is this console script again (under another name) stops there
# instead of starting itself for ever.
_STARTED_ENV = "CHUNKPLAN_CONSOLE_SCRIPT"
# Text that every console script of this module holds (pip writes
# "from chunkplan.binary import main"): such a file on PATH is not the
# binary.
_SCRIPT_MARK = b"chunkplan.binary"

HOW_TO_GET_IT = (
    "the chunkplan command line is a C++ binary that this Python package "
    "does not contain: build it (cmake --build build --target chunkplan, "
    "or scripts/run.sh) and put build/bin on PATH, use the image (docker "
    "run --rm chunkplan:0.1.0-cpu chunkplan ...), or set "
    f"{CLI_ENV}=/path/to/chunkplan")


class CliNotFoundError(FileNotFoundError):
    """No chunkplan command line to run (see find_cli)."""


def _is_console_script(path):
    """True for a file that is a console script of this module."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and _SCRIPT_MARK in head


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _on_path():
    """The first `chunkplan` on $PATH that is not a console script of this
    module, or None."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory or ".", "chunkplan")
        if _executable(candidate) and not _is_console_script(candidate):
            return candidate
    return None


def find_cli(cli=None):
    """The path of the chunkplan binary: `cli`, else $CHUNKPLAN_CLI, else
    <build>/bin/chunkplan beside this package's <build>/python, else
    `chunkplan` on $PATH (not a console script of this module). Raises
    CliNotFoundError naming where it looked and how to get the binary; a
    given path (argument or variable) must be an executable file."""
    for given, origin in ((cli, "cli"), (os.environ.get(CLI_ENV), CLI_ENV)):
        if given:
            if _executable(given):
                return str(given)
            raise CliNotFoundError(f"{origin}: {given} is not an executable "
                                   "file")
    beside = pathlib.Path(__file__).resolve().parents[2] / "bin" / "chunkplan"
    if _executable(beside):
        return str(beside)
    on_path = _on_path()
    if on_path:
        return on_path
    raise CliNotFoundError(f"no chunkplan binary at {beside} (a build "
                           f"tree's) nor on PATH: {HOW_TO_GET_IT}")


def main(argv=None):
    """The `chunkplan` console script: runs the binary with `argv` (default
    sys.argv[1:]) in place of this process. Returns only on failure, with
    exit status 1, having printed "NOT_FOUND: ..." (or, when the binary
    found is this script again or cannot be run, "FAILED_PRECONDITION:
    ...")."""
    args = sys.argv[1:] if argv is None else list(argv)
    if os.environ.get(_STARTED_ENV):
        sys.stderr.write(
            "FAILED_PRECONDITION: the chunkplan found is this Python "
            f"console script again, not the binary: {HOW_TO_GET_IT}\n")
        return 1
    try:
        cli = find_cli()
    except CliNotFoundError as error:
        sys.stderr.write(f"NOT_FOUND: {error}\n")
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(cli, [cli, *args], dict(os.environ, **{_STARTED_ENV: "1"}))
    except OSError as error:  # execve returns only by raising
        sys.stderr.write(f"FAILED_PRECONDITION: cannot run {cli}: {error}\n")
    return 1
