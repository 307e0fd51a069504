#ifndef CHUNKPLAN_SERVER_TRANSPORT_LISTEN_SOCKET_H_
#define CHUNKPLAN_SERVER_TRANSPORT_LISTEN_SOCKET_H_

// Listening TCP sockets for "HOST:PORT" addresses, as the server's --listen
// and --metrics_listen take them.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chunkplan::transport {

struct HostPort {
  std::string host;  // without brackets: "::1", "0.0.0.0", "localhost"
  int port = 0;      // 0..65535
};

// Splits "HOST:PORT" or "[V6HOST]:PORT". Errors: INVALID_ARGUMENT naming
// `flag` when `listen` is not of that form.
absl::StatusOr<HostPort> ParseHostPort(const std::string& listen,
                                       absl::string_view flag);

// "HOST:PORT", with brackets around an IPv6 host.
std::string JoinHostPort(const std::string& host, int port);

struct ListeningSocket {
  int fd = -1;   // non-blocking, close-on-exec; the caller owns it
  int port = 0;  // the port bound (the real one for port 0)
};

// Binds `listen` ("HOST:PORT"; a host name binds its first address; "[::]"
// serves IPv4 too), without SO_REUSEPORT, and listens.
// Errors: INVALID_ARGUMENT naming `flag` for an address that is not
// HOST:PORT or does not resolve; UNAVAILABLE when it cannot be bound.
absl::StatusOr<ListeningSocket> ListenTcp(const std::string& listen,
                                          absl::string_view flag);

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_LISTEN_SOCKET_H_
