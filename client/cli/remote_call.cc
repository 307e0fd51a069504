#include "client/cli/remote_call.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace chunkplan::cli {

std::shared_ptr<grpc::Channel> OpenChannel(const RemoteTarget& target) {
  return grpc::CreateChannel(target.address,
                             grpc::InsecureChannelCredentials());
}

void ApplyDeadline(const RemoteTarget& target, grpc::ClientContext* context) {
  if (target.deadline == absl::InfiniteDuration()) return;
  context->set_deadline(absl::ToChronoTime(absl::Now() + target.deadline));
}

}  // namespace chunkplan::cli
