#include "server/transport/connection_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "server/transport/listen_socket.h"
#include "server/transport/peer_address.h"

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
    std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
    H2Relay* relay) {
  thread_ = std::thread([this, acceptor = std::move(acceptor), relay] {
    AcceptLoop(acceptor, relay);
  });
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
    std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
    H2Relay* relay) {
  pollfd listening{listen_fd_, POLLIN, 0};
  while (!stopping_.load()) {
    listening.revents = 0;
    if (poll(&listening, 1, kPollMs) <= 0) continue;
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof(peer);
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer),
                           &peer_length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (OutOfResources(errno)) std::this_thread::sleep_for(kRetryAfter);
      continue;  // EAGAIN, ECONNABORTED, EINTR, ...: the next one
    }
    if (fd >= max_descriptor_) {
      close(fd);
      refused_.fetch_add(1);
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::string address =
        PeerAddress(reinterpret_cast<const sockaddr*>(&peer), peer_length);
    int handed = fd;
    if (relay != nullptr) {
      absl::StatusOr<int> pair_end = relay->Adopt(fd, GrpcPeer(address));
      if (!pair_end.ok()) {
        refused_.fetch_add(1);
        continue;
      }
      handed = *pair_end;
    } else {
      Record(fd, std::move(address));
    }
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters
        connection;
    connection.listener_fd = listen_fd_;
    connection.fd = handed;
    acceptor->HandleNewConnection(&connection);
  }
}

void ConnectionGate::Record(int fd, std::string peer) {
  absl::MutexLock lock(&peers_mu_);
  if (peer_of_fd_.size() <= static_cast<size_t>(fd)) {
    peer_of_fd_.resize(fd + 1);
  }
  std::string& held = peer_of_fd_[fd];
  if (auto it = fd_of_peer_.find(held);
      it != fd_of_peer_.end() && it->second == fd) {
    fd_of_peer_.erase(it);
  }
  held = std::move(peer);
  if (!held.empty()) fd_of_peer_[held] = fd;
}

bool ConnectionGate::ShutDownPeer(const std::string& peer) {
  absl::MutexLock lock(&peers_mu_);
  auto it = fd_of_peer_.find(peer);
  if (peer.empty() || it == fd_of_peer_.end()) return false;
  // A descriptor of our own for the socket now behind the recorded one:
  // gRPC may close that and the number be reused meanwhile, but not this
  // socket's.
  const int own = fcntl(it->second, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return false;
  fd_of_peer_.erase(it);  // once: gRPC may take a while to close it
  bool done = false;
  if (PeerAddressOf(own) == peer) {
    // connect(AF_UNSPEC) aborts a TCP connection (RFC 793's ABORT): it
    // resets it, drops the bytes received and not yet read, and wakes gRPC
    // with ECONNRESET. shutdown() would let gRPC first read, and so open,
    // every stream still in the socket's buffer.
    sockaddr unspecified{};
    unspecified.sa_family = AF_UNSPEC;
    done = connect(own, &unspecified, sizeof(unspecified)) == 0 ||
           shutdown(own, SHUT_RDWR) == 0;
  }
  close(own);
  return done;
}

}  // namespace chunkplan::transport
