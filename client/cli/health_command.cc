#include "client/cli/health_command.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace chunkplan::cli {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

absl::StatusOr<ServingStatus> CheckHealth(const RemoteTarget& target,
                                          const std::string& service) {
  const auto stub = grpc::health::v1::Health::NewStub(OpenChannel(target));
  grpc::ClientContext context;
  ApplyDeadline(target, &context);
  HealthCheckRequest request;
  request.set_service(service);
  HealthCheckResponse response;
  CHUNKPLAN_RETURN_IF_ERROR(
      common::ToAbslStatus(stub->Check(&context, request, &response)));
  return response.status();
}

std::string ServingStatusName(ServingStatus status) {
  const std::string& name = HealthCheckResponse::ServingStatus_Name(status);
  return name.empty() ? absl::StrCat(static_cast<int>(status)) : name;
}

absl::Status RequireServing(const RemoteTarget& target,
                            const std::string& service, ServingStatus status) {
  if (status == HealthCheckResponse::SERVING) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(target.address, " reports ",
                                             ServingStatusName(status),
                                             " for service \"", service, "\""));
}

}  // namespace chunkplan::cli
