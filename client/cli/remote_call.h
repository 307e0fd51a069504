#ifndef CHUNKPLAN_CLIENT_CLI_REMOTE_CALL_H_
#define CHUNKPLAN_CLIENT_CLI_REMOTE_CALL_H_

// What every remote command shares: the server's address, the call's
// deadline, the transport security, and the channel to it.

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace chunkplan::cli {

// PEM contents for a TLS channel.
struct TlsPem {
  std::string root_certs;   // CA(s) to verify the server; empty: system roots
  std::string private_key;  // client key for mutual TLS; empty: none
  std::string cert_chain;   // client certificate for mutual TLS; empty: none
};

// A server, how long one call to it may take, and how to secure it.
struct RemoteTarget {
  // Any gRPC target: "host:port", "unix:/path", "dns:///name:port", ...
  std::string address;
  // Relative to the start of the call; infinite means none.
  absl::Duration deadline = absl::InfiniteDuration();
  // TLS when set, else plaintext.
  std::optional<TlsPem> tls;
  // With TLS: the name the server's certificate must carry, where it is not
  // the address's host; empty: the host.
  std::string tls_server_name;
};

// The TLS settings from --tls (TLS trusting the system's roots) and the
// paths of --tls_ca, --tls_cert and --tls_key (empty: not given): nullopt
// when none is given (plaintext).
// Errors: INVALID_ARGUMENT when only one of `cert_path` and `key_path` is
// given; the file's errno as a canonical code naming the path when a file
// cannot be read.
absl::StatusOr<std::optional<TlsPem>> ReadTlsFiles(bool tls,
                                                   absl::string_view ca_path,
                                                   absl::string_view cert_path,
                                                   absl::string_view key_path);

// A channel to `target.address`, over TLS when `target.tls` is set, else
// plaintext, with the client configuration of docs/deploy.md that fits a
// one-shot command: round_robin over the target's addresses, a ChunkSearch
// call that meets UNAVAILABLE tried again (5 attempts in all), messages up
// to 64 MiB both ways; with TLS, `target.tls_server_name` (where given)
// overrides the name checked in the server's certificate. Connects lazily: a
// server that cannot be reached, or a TLS handshake that fails, shows up as
// UNAVAILABLE on the first call.
std::shared_ptr<grpc::Channel> OpenChannel(const RemoteTarget& target);

// Sets `target.deadline`, counted from now, on `context` (if finite).
void ApplyDeadline(const RemoteTarget& target, grpc::ClientContext* context);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_REMOTE_CALL_H_
