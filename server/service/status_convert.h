#ifndef CHUNKPLAN_SERVER_SERVICE_STATUS_CONVERT_H_
#define CHUNKPLAN_SERVER_SERVICE_STATUS_CONVERT_H_

// absl::Status -> grpc::Status, the one place where the planner's errors
// become the wire's. The codes are the same numbers in both libraries (the
// canonical google.rpc.Code); the static_asserts below keep it so.

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace chunkplan::service {

namespace status_convert_internal {

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

}  // namespace status_convert_internal

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

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_STATUS_CONVERT_H_
