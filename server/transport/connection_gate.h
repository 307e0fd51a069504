#ifndef CHUNKPLAN_SERVER_TRANSPORT_CONNECTION_GATE_H_
#define CHUNKPLAN_SERVER_TRANSPORT_CONNECTION_GATE_H_

// The server's own TCP accept loop, handing each connection to gRPC through
// an ExternalConnectionAcceptor. gRPC 1.51's accept loop stops for good after
// one accept4 fails with EMFILE (grpc/grpc#20418); this one never lets
// accept reach the descriptor limit and retries after any transient error.
// docs/deploy.md, "Limits", says what applies.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_builder.h"
#include "server/transport/h2_relay.h"

namespace chunkplan::transport {

class ConnectionGate {
 public:
  // Binds and listens on `listen` ("HOST:PORT", "[V6HOST]:PORT"; port 0
  // picks a free one; a host name binds its first address). A connection
  // accepted while `max_descriptor` or more descriptors are open (its
  // descriptor's number is at least `max_descriptor`: Linux hands out the
  // lowest free number) is closed at once, so descriptors above it stay free
  // for everything else the process opens.
  // Errors: INVALID_ARGUMENT for an address that is not HOST:PORT or does
  // not resolve; UNAVAILABLE when it cannot be bound (in use: no
  // SO_REUSEPORT).
  static absl::StatusOr<std::unique_ptr<ConnectionGate>> Listen(
      const std::string& listen, int max_descriptor);

  // Stops accepting (Close) and joins the accept thread.
  ~ConnectionGate();

  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Starts the accept thread, which hands every admitted connection to
  // `acceptor` (from ServerBuilder::experimental().
  // AddExternalConnectionAcceptor, FROM_FD, once the server has started):
  // the client's socket itself, or, with a `relay` (which must outlive the
  // thread, until Close), the relay's pair end for it (H2Relay::Adopt; a
  // connection the relay cannot take is closed and counted in refused()).
  // ShutDownPeer knows only connections handed over without a relay.
  void Start(
      std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
      H2Relay* relay = nullptr);

  // Stops accepting and closes the listening socket: a new connection is
  // refused by the kernel. Connections already handed over are untouched.
  // Idempotent.
  void Close();

  // The port bound (the real one where `listen` asked for port 0).
  int port() const { return port_; }

  // Connections closed at once because the descriptor bound was reached.
  uint64_t refused() const { return refused_.load(); }

  // Aborts (resets; gRPC then closes it and frees its streams) the
  // connection handed over from `peer` (a PeerAddress), if its descriptor
  // still belongs to that peer: gRPC closes connections without telling the
  // gate, and their numbers are reused. Bytes it has received that gRPC has
  // not read are dropped. Returns whether it did, once per connection.
  // Thread-safe.
  bool ShutDownPeer(const std::string& peer);

 private:
  ConnectionGate(int listen_fd, int port, int max_descriptor)
      : listen_fd_(listen_fd), port_(port), max_descriptor_(max_descriptor) {}

  void AcceptLoop(
      std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
      H2Relay* relay);
  // Remembers that `fd` now holds the connection from `peer`.
  void Record(int fd, std::string peer);

  const int listen_fd_;
  const int port_;
  const int max_descriptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> refused_{0};
  std::thread thread_;
  absl::Mutex peers_mu_;
  // The peer of each descriptor handed over (by number), and back.
  std::vector<std::string> peer_of_fd_ ABSL_GUARDED_BY(peers_mu_);
  std::unordered_map<std::string, int> fd_of_peer_ ABSL_GUARDED_BY(peers_mu_);
};

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_CONNECTION_GATE_H_
