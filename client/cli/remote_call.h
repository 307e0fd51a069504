#ifndef CHUNKPLAN_CLIENT_CLI_REMOTE_CALL_H_
#define CHUNKPLAN_CLIENT_CLI_REMOTE_CALL_H_

// What every remote command shares: the server's address, the call's
// deadline, and the insecure channel to it.

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace chunkplan::cli {

// A server and how long one call to it may take.
struct RemoteTarget {
  // Any gRPC target: "host:port", "unix:/path", "dns:///name:port", ...
  std::string address;
  // Relative to the start of the call; infinite means none.
  absl::Duration deadline = absl::InfiniteDuration();
};

// An insecure channel to `target.address`. Connects lazily: a server that
// cannot be reached shows up as UNAVAILABLE on the first call.
std::shared_ptr<grpc::Channel> OpenChannel(const RemoteTarget& target);

// Sets `target.deadline`, counted from now, on `context` (if finite).
void ApplyDeadline(const RemoteTarget& target, grpc::ClientContext* context);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_REMOTE_CALL_H_
