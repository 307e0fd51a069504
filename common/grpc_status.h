#ifndef CHUNKPLAN_COMMON_GRPC_STATUS_H_
#define CHUNKPLAN_COMMON_GRPC_STATUS_H_

// absl::Status <-> grpc::Status, the one converter: the server turns the
// planner's errors into the wire's (ToGrpcStatus), the CLI a call's status
// into its own (ToAbslStatus). The codes are the same numbers in both
// libraries (the canonical google.rpc.Code); the static_asserts below keep it
// so.

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace chunkplan::common {

namespace grpc_status_internal {

constexpr bool SameCode(absl::StatusCode a, grpc::StatusCode g) {
  return static_cast<int>(a) == static_cast<int>(g);
}

static_assert(SameCode(absl::StatusCode::kOk, grpc::StatusCode::OK));
static_assert(SameCode(absl::StatusCode::kCancelled,
                       grpc::StatusCode::CANCELLED));
static_assert(SameCode(absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN));
static_assert(SameCode(absl::StatusCode::kInvalidArgument,
                       grpc::StatusCode::INVALID_ARGUMENT));
static_assert(SameCode(absl::StatusCode::kDeadlineExceeded,
                       grpc::StatusCode::DEADLINE_EXCEEDED));
static_assert(SameCode(absl::StatusCode::kNotFound,
                       grpc::StatusCode::NOT_FOUND));
static_assert(SameCode(absl::StatusCode::kAlreadyExists,
                       grpc::StatusCode::ALREADY_EXISTS));
static_assert(SameCode(absl::StatusCode::kPermissionDenied,
                       grpc::StatusCode::PERMISSION_DENIED));
static_assert(SameCode(absl::StatusCode::kResourceExhausted,
                       grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(SameCode(absl::StatusCode::kFailedPrecondition,
                       grpc::StatusCode::FAILED_PRECONDITION));
static_assert(SameCode(absl::StatusCode::kAborted, grpc::StatusCode::ABORTED));
static_assert(SameCode(absl::StatusCode::kOutOfRange,
                       grpc::StatusCode::OUT_OF_RANGE));
static_assert(SameCode(absl::StatusCode::kUnimplemented,
                       grpc::StatusCode::UNIMPLEMENTED));
static_assert(SameCode(absl::StatusCode::kInternal,
                       grpc::StatusCode::INTERNAL));
static_assert(SameCode(absl::StatusCode::kUnavailable,
                       grpc::StatusCode::UNAVAILABLE));
static_assert(SameCode(absl::StatusCode::kDataLoss,
                       grpc::StatusCode::DATA_LOSS));
static_assert(SameCode(absl::StatusCode::kUnauthenticated,
                       grpc::StatusCode::UNAUTHENTICATED));

}  // namespace grpc_status_internal

// The grpc::Status with the same code and message as `status`. A code
// outside the canonical 0..16 (absl allows any int) becomes UNKNOWN.
inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const int code = static_cast<int>(status.code());
  const grpc::StatusCode grpc_code =
      code > 0 && code <= static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)
          ? static_cast<grpc::StatusCode>(code)
          : grpc::StatusCode::UNKNOWN;
  return grpc::Status(grpc_code, std::string(status.message()));
}

// The absl::Status with the same code and message as `status` (OK for OK).
inline absl::Status ToAbslStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace chunkplan::common

#endif  // CHUNKPLAN_COMMON_GRPC_STATUS_H_
