#ifndef CHUNKPLAN_CLIENT_CLI_GRPC_STATUS_H_
#define CHUNKPLAN_CLIENT_CLI_GRPC_STATUS_H_

// The client's one conversion from a gRPC call's status to absl::Status.

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace chunkplan::cli {

// Both enums number the canonical codes alike; the cast below relies on it.
static_assert(static_cast<int>(grpc::StatusCode::OK) ==
              static_cast<int>(absl::StatusCode::kOk));
static_assert(static_cast<int>(grpc::StatusCode::CANCELLED) ==
              static_cast<int>(absl::StatusCode::kCancelled));
static_assert(static_cast<int>(grpc::StatusCode::UNKNOWN) ==
              static_cast<int>(absl::StatusCode::kUnknown));
static_assert(static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT) ==
              static_cast<int>(absl::StatusCode::kInvalidArgument));
static_assert(static_cast<int>(grpc::StatusCode::DEADLINE_EXCEEDED) ==
              static_cast<int>(absl::StatusCode::kDeadlineExceeded));
static_assert(static_cast<int>(grpc::StatusCode::NOT_FOUND) ==
              static_cast<int>(absl::StatusCode::kNotFound));
static_assert(static_cast<int>(grpc::StatusCode::ALREADY_EXISTS) ==
              static_cast<int>(absl::StatusCode::kAlreadyExists));
static_assert(static_cast<int>(grpc::StatusCode::PERMISSION_DENIED) ==
              static_cast<int>(absl::StatusCode::kPermissionDenied));
static_assert(static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED) ==
              static_cast<int>(absl::StatusCode::kResourceExhausted));
static_assert(static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION) ==
              static_cast<int>(absl::StatusCode::kFailedPrecondition));
static_assert(static_cast<int>(grpc::StatusCode::ABORTED) ==
              static_cast<int>(absl::StatusCode::kAborted));
static_assert(static_cast<int>(grpc::StatusCode::OUT_OF_RANGE) ==
              static_cast<int>(absl::StatusCode::kOutOfRange));
static_assert(static_cast<int>(grpc::StatusCode::UNIMPLEMENTED) ==
              static_cast<int>(absl::StatusCode::kUnimplemented));
static_assert(static_cast<int>(grpc::StatusCode::INTERNAL) ==
              static_cast<int>(absl::StatusCode::kInternal));
static_assert(static_cast<int>(grpc::StatusCode::UNAVAILABLE) ==
              static_cast<int>(absl::StatusCode::kUnavailable));
static_assert(static_cast<int>(grpc::StatusCode::DATA_LOSS) ==
              static_cast<int>(absl::StatusCode::kDataLoss));
static_assert(static_cast<int>(grpc::StatusCode::UNAUTHENTICATED) ==
              static_cast<int>(absl::StatusCode::kUnauthenticated));

// The same code and message as an absl::Status (OK for OK).
inline absl::Status ToAbslStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_GRPC_STATUS_H_
