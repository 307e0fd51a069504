#ifndef CHUNKPLAN_CLIENT_CLI_HEALTH_COMMAND_H_
#define CHUNKPLAN_CLIENT_CLI_HEALTH_COMMAND_H_

// `chunkplan health`: the standard gRPC health check (grpc.health.v1).

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cli/remote_call.h"
#include "grpc/health/v1/health.pb.h"

namespace chunkplan::cli {

using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

// The serving status that grpc.health.v1.Health/Check at `target` reports
// for `service` ("" asks about the server as a whole).
// Errors: the call's status (UNAVAILABLE when nothing answers, NOT_FOUND
// from servers that do not know `service`, DEADLINE_EXCEEDED, ...).
absl::StatusOr<ServingStatus> CheckHealth(const RemoteTarget& target,
                                          const std::string& service);

// "SERVING", "NOT_SERVING", "UNKNOWN", "SERVICE_UNKNOWN", or the number of a
// status this client does not know.
std::string ServingStatusName(ServingStatus status);

// OK for SERVING; otherwise UNAVAILABLE naming the target, the service and
// `status`: the failure that `chunkplan health` reports.
absl::Status RequireServing(const RemoteTarget& target,
                            const std::string& service, ServingStatus status);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_HEALTH_COMMAND_H_
