"""Fixtures of the Python client's tests (run by ctest through pytest, with
PYTHONPATH=<build>/python so that `import chunkplan` is the built package).

Environment:
  CHUNKPLAN_SERVER     the chunkplan-server binary; tests that need it skip,
                       saying "chunkplan-server not built", where it is missing
  CHUNKPLAN_HELD_SERVER  chunkplan-held-server (its engines hold a search
                       marked with HELD_NUMEL until the call is stopped), for
                       tests that need a call still running; they skip the
                       same way without it
  CHUNKPLAN_TEST_SEED  the seed of the random requests (default: fresh)
"""

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from server_process import ServerProcess  # noqa: E402


# The parameter size that marks a search for chunkplan-held-server
# (testing/held_engine.h, kHeldNumel).
HELD_NUMEL = 999_999_937


def server_binary(variable="CHUNKPLAN_SERVER"):
    """The chunkplan-server path (or `variable`'s binary), or a skip where
    it is not built."""
    path = os.environ.get(variable, "")
    if not os.access(path, os.X_OK):
        pytest.skip(f"chunkplan-server not built ({variable}={path!r})")
    return path


@pytest.fixture(scope="session")
def server():
    """The real server on a free loopback port, for the whole session."""
    with ServerProcess(server_binary(), "--threads=2") as process:
        yield process


@pytest.fixture(scope="session")
def held_server():
    """chunkplan-held-server on a free loopback port, for the whole
    session: searches with HELD_NUMEL run until their call is stopped."""
    with ServerProcess(server_binary("CHUNKPLAN_HELD_SERVER"),
                       "--threads=2") as process:
        yield process


@pytest.fixture(scope="session")
def limited_server():
    """The real server with a limit of 8 parameters per request."""
    with ServerProcess(server_binary(), "--threads=1",
                       "--max_params=8") as process:
        yield process
