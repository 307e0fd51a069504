#ifndef CHUNKPLAN_SERVER_TRANSPORT_CONNECTION_GATE_H_
#define CHUNKPLAN_SERVER_TRANSPORT_CONNECTION_GATE_H_

// The server's own TCP accept loop, handing each connection to gRPC through
// an ExternalConnectionAcceptor. gRPC 1.51's accept loop stops for good after
// one accept4 fails with EMFILE (grpc/grpc#20418; measured again on Debian's
// 1.51.1, docs/deploy.md, "Limits"); this one never lets accept reach the
// descriptor limit and retries after any transient error.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "grpcpp/server_builder.h"

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

  // Starts the accept thread, which hands every admitted connection's
  // socket to `acceptor` (from ServerBuilder::experimental().
  // AddExternalConnectionAcceptor, FROM_FD, once the server has started);
  // gRPC owns it from then on. Call once.
  void Start(
      std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor);

  // Stops accepting and closes the listening socket: a new connection is
  // refused by the kernel. Connections already handed over are untouched.
  // Idempotent.
  void Close();

  // The port bound (the real one where `listen` asked for port 0).
  int port() const { return port_; }

  // Connections closed at once because the descriptor bound was reached.
  uint64_t refused() const { return refused_.load(); }

  // Accepts that failed for want of a resource (EMFILE, ENFILE, ENOBUFS,
  // ENOMEM: the descriptor bound above the process's limit, or the system
  // out of them); each is retried shortly after.
  uint64_t starved_accepts() const { return starved_accepts_.load(); }

 private:
  ConnectionGate(int listen_fd, int port, int max_descriptor)
      : listen_fd_(listen_fd), port_(port), max_descriptor_(max_descriptor) {}

  void AcceptLoop(
      std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor);

  const int listen_fd_;
  const int port_;
  const int max_descriptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> starved_accepts_{0};
  std::thread thread_;
};

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_CONNECTION_GATE_H_
