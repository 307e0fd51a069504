"""Every gRPC status becomes its typed exception, with the code and the
server's message. A stand-in server (Python's gRPC, the package's own stubs)
answers with each code in turn; no chunkplan-server needed."""

import pickle
import socket
import threading

import grpc
import pytest

import chunkplan
from chunkplan import errors
from fake_server import FakeServer

# Every status code but OK, with the class it must raise (written out here,
# not read from the package, so that a wrong entry there fails).
EXPECTED = {
    grpc.StatusCode.CANCELLED: chunkplan.CancelledError,
    grpc.StatusCode.UNKNOWN: chunkplan.UnknownError,
    grpc.StatusCode.INVALID_ARGUMENT: chunkplan.InvalidArgumentError,
    grpc.StatusCode.DEADLINE_EXCEEDED: chunkplan.DeadlineExceededError,
    grpc.StatusCode.NOT_FOUND: chunkplan.NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: chunkplan.AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: chunkplan.PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: chunkplan.ResourceExhaustedError,
    grpc.StatusCode.FAILED_PRECONDITION: chunkplan.FailedPreconditionError,
    grpc.StatusCode.ABORTED: chunkplan.AbortedError,
    grpc.StatusCode.OUT_OF_RANGE: chunkplan.OutOfRangeError,
    grpc.StatusCode.UNIMPLEMENTED: chunkplan.UnimplementedError,
    grpc.StatusCode.INTERNAL: chunkplan.InternalError,
    grpc.StatusCode.UNAVAILABLE: chunkplan.UnavailableError,
    grpc.StatusCode.DATA_LOSS: chunkplan.DataLossError,
    grpc.StatusCode.UNAUTHENTICATED: chunkplan.UnauthenticatedError,
}
CODES_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}
# Bound on every call, so that a stuck call fails instead of hanging.
TIMEOUT_S = 60


def abort_with_code(request, context):
    """Aborts with the status numbered search_interval, message naming it."""
    code = CODES_BY_NUMBER[request.search_interval]
    context.abort(code, f"fake {code.name} for {len(request.numels)} numels")


def test_every_code_has_a_class():
    assert set(EXPECTED) == set(grpc.StatusCode) - {grpc.StatusCode.OK}


@pytest.fixture(scope="module")
def aborting_server():
    with FakeServer(abort_with_code) as server:
        yield server


@pytest.mark.parametrize("code", sorted(EXPECTED, key=lambda c: c.value[0]),
                         ids=lambda c: c.name)
def test_status_becomes_typed_exception(aborting_server, code):
    with chunkplan.Client(aborting_server.target) as client:
        with pytest.raises(chunkplan.ChunkplanError) as raised:
            client.search_chunk_configuration([1, 2, 3], 1, code.value[0],
                                              timeout=TIMEOUT_S)
    error = raised.value
    assert type(error) is EXPECTED[code]
    assert error.code == code
    assert error.message == f"fake {code.name} for 3 numels"
    assert str(error) == f"{code.name}: fake {code.name} for 3 numels"
    assert isinstance(error.__cause__, grpc.RpcError)


def test_module_function_raises_the_same(aborting_server):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(chunkplan.ResourceExhaustedError) as raised:
        chunkplan.search_chunk_configuration(
            [4], 1, code.value[0], target=aborting_server.target,
            timeout=TIMEOUT_S)
    assert raised.value.message == "fake RESOURCE_EXHAUSTED for 1 numels"


def test_invalid_argument_is_a_value_error():
    assert issubclass(chunkplan.InvalidArgumentError, ValueError)
    assert not issubclass(chunkplan.UnavailableError, ValueError)


def test_errors_survive_pickling():
    error = errors.error_for_code(grpc.StatusCode.INVALID_ARGUMENT,
                                  "dp_degrees[3]: 0")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is chunkplan.InvalidArgumentError
    assert (copy.code, copy.message) == (error.code, error.message)


def test_nothing_listening_is_unavailable():
    with socket.socket() as sock:  # bound, not listening: refuses
        sock.bind(("127.0.0.1", 0))
        target = "127.0.0.1:%d" % sock.getsockname()[1]
        with pytest.raises(chunkplan.UnavailableError) as raised:
            chunkplan.search_chunk_configuration([1], 1, 1, target=target,
                                                 timeout=TIMEOUT_S)
    assert raised.value.code == grpc.StatusCode.UNAVAILABLE
    assert raised.value.message


def test_unix_socket_without_server_is_unavailable(tmp_path):
    target = "unix:" + str(tmp_path / "absent.sock")
    with pytest.raises(chunkplan.UnavailableError):
        chunkplan.search_chunk_configuration([1], 1, 1, target=target,
                                             timeout=TIMEOUT_S)


def test_deadline_while_the_server_works():
    release = threading.Event()

    def hang(request, context):
        release.wait(TIMEOUT_S)
        context.abort(grpc.StatusCode.INTERNAL, "released")

    with FakeServer(hang) as server:
        try:
            with pytest.raises(chunkplan.DeadlineExceededError) as raised:
                chunkplan.search_chunk_configuration(
                    [1], 1, 1, target=server.target, timeout=0.2)
        finally:
            release.set()
    assert raised.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_wait_for_ready_waits_for_the_timeout():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        target = "127.0.0.1:%d" % sock.getsockname()[1]
        with chunkplan.Client(target) as client:
            # Without a server, waiting ends with the deadline, not at once.
            with pytest.raises(chunkplan.DeadlineExceededError):
                client.search([1], 1, 1, timeout=0.3, wait_for_ready=True)
