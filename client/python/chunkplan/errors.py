"""Typed exceptions for chunkplan's gRPC status codes.

Every failed call raises a subclass of ChunkplanError named for its status
code (InvalidArgumentError for INVALID_ARGUMENT, and so on), carrying the
grpc.StatusCode and the server's message. Arguments that cannot be put on
the wire at all (a negative size, a size beyond 64 bits) raise
InvalidArgumentError before any call, as the server would.
"""

import grpc

__all__ = [
    "ChunkplanError",
    "CancelledError",
    "UnknownError",
    "InvalidArgumentError",
    "DeadlineExceededError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "AbortedError",
    "OutOfRangeError",
    "UnimplementedError",
    "InternalError",
    "UnavailableError",
    "DataLossError",
    "UnauthenticatedError",
    "error_for_code",
    "from_rpc_error",
]


class ChunkplanError(Exception):
    """A chunkplan call that failed: `code` is its grpc.StatusCode, `message`
    the server's (or gRPC's) text. str() gives "CODE: message", the form the
    `chunkplan` command line prints."""

    # The status code of the subclass; the base class takes it from __init__.
    code_for_class = None

    def __init__(self, code, message):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self):
        return f"{self.code.name}: {self.message}"


class CancelledError(ChunkplanError):
    code_for_class = grpc.StatusCode.CANCELLED


class UnknownError(ChunkplanError):
    code_for_class = grpc.StatusCode.UNKNOWN


class InvalidArgumentError(ChunkplanError, ValueError):
    """The request is malformed; the message names the field and index."""
    code_for_class = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceededError(ChunkplanError):
    """The call's timeout passed, before or during the search."""
    code_for_class = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFoundError(ChunkplanError):
    code_for_class = grpc.StatusCode.NOT_FOUND


class AlreadyExistsError(ChunkplanError):
    code_for_class = grpc.StatusCode.ALREADY_EXISTS


class PermissionDeniedError(ChunkplanError):
    code_for_class = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhaustedError(ChunkplanError):
    """The request is beyond the server's configured limits, or the server
    is at its limit of concurrent searches."""
    code_for_class = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPreconditionError(ChunkplanError):
    """The server cannot run the engine asked for (e.g. CUDA without a GPU)."""
    code_for_class = grpc.StatusCode.FAILED_PRECONDITION


class AbortedError(ChunkplanError):
    code_for_class = grpc.StatusCode.ABORTED


class OutOfRangeError(ChunkplanError):
    code_for_class = grpc.StatusCode.OUT_OF_RANGE


class UnimplementedError(ChunkplanError):
    code_for_class = grpc.StatusCode.UNIMPLEMENTED


class InternalError(ChunkplanError):
    code_for_class = grpc.StatusCode.INTERNAL


class UnavailableError(ChunkplanError):
    """No server answers at the target (not started, unreachable, TLS
    handshake refused)."""
    code_for_class = grpc.StatusCode.UNAVAILABLE


class DataLossError(ChunkplanError):
    code_for_class = grpc.StatusCode.DATA_LOSS


class UnauthenticatedError(ChunkplanError):
    code_for_class = grpc.StatusCode.UNAUTHENTICATED


_CLASS_BY_CODE = {
    cls.code_for_class: cls
    for cls in (CancelledError, UnknownError, InvalidArgumentError,
                DeadlineExceededError, NotFoundError, AlreadyExistsError,
                PermissionDeniedError, ResourceExhaustedError,
                FailedPreconditionError, AbortedError, OutOfRangeError,
                UnimplementedError, InternalError, UnavailableError,
                DataLossError, UnauthenticatedError)
}


def error_for_code(code, message):
    """The ChunkplanError subclass instance for `code` (a grpc.StatusCode
    other than OK) with `message`; a code without a subclass gives the base
    class."""
    return _CLASS_BY_CODE.get(code, ChunkplanError)(code, message)


def from_rpc_error(error):
    """The ChunkplanError for a grpc.RpcError raised by a call."""
    code = error.code() if hasattr(error, "code") else None
    if not isinstance(code, grpc.StatusCode):
        code = grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else None
    return error_for_code(code, details if details is not None else str(error))
