#include "server/transport/connection_gate.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "server/transport/listen_socket.h"

namespace chunkplan::transport {
namespace {

// How long the accept thread waits between looks at the stop flag, and
// after an accept that failed for want of a resource (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) before it tries again.
constexpr int kPollMs = 50;
constexpr auto kRetryAfter = std::chrono::milliseconds(10);

bool OutOfResources(int error) {
  return error == EMFILE || error == ENFILE || error == ENOBUFS ||
         error == ENOMEM;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConnectionGate>> ConnectionGate::Listen(
    const std::string& listen, int max_descriptor) {
  absl::StatusOr<ListeningSocket> socket = ListenTcp(listen, "--listen");
  if (!socket.ok()) return socket.status();
  return std::unique_ptr<ConnectionGate>(
      new ConnectionGate(socket->fd, socket->port, max_descriptor));
}

ConnectionGate::~ConnectionGate() { Close(); }

void ConnectionGate::Start(
    std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor) {
  thread_ = std::thread(
      [this, acceptor = std::move(acceptor)] { AcceptLoop(acceptor); });
}

void ConnectionGate::Close() {
  if (closed_.exchange(true)) return;
  stopping_.store(true);
  // Takes the socket out of LISTEN: connections in its backlog are reset
  // and new ones refused, while the accept thread still holds the number.
  shutdown(listen_fd_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void ConnectionGate::AcceptLoop(
    std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor) {
  pollfd listening{listen_fd_, POLLIN, 0};
  while (!stopping_.load()) {
    listening.revents = 0;
    if (poll(&listening, 1, kPollMs) <= 0) continue;
    const int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (OutOfResources(errno)) {
        starved_accepts_.fetch_add(1);
        std::this_thread::sleep_for(kRetryAfter);
      }
      continue;  // EAGAIN, ECONNABORTED, EINTR, ...: the next one
    }
    if (fd >= max_descriptor_) {
      refused_.fetch_add(1);
      close(fd);
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters
        connection;
    connection.listener_fd = listen_fd_;
    connection.fd = fd;
    acceptor->HandleNewConnection(&connection);
  }
}

}  // namespace chunkplan::transport
