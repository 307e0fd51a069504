#include "server/transport/h2_relay.h"

#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/transport/h2_preack_reader.h"
#include "server/transport/peer_address.h"

namespace chunkplan::transport {

// One direction's bytes read and not yet written.
struct RelayBuffer {
  explicit RelayBuffer(size_t size) : data(new char[size]), size(size) {}
  std::unique_ptr<char[]> data;
  size_t size;
  size_t begin = 0;
  size_t end = 0;
  bool empty() const { return begin == end; }
  bool full() const { return end == size; }
};

// One end of a relayed connection, the client's or the pair's.
struct RelaySide {
  H2Relay::Connection* connection = nullptr;
  int fd = -1;
  bool eof = false;      // read its end
  bool gone = false;     // closed, not only shut for writing (EPOLLHUP)
  bool shut = false;     // its write side shut down after the other's end
  uint32_t watched = 0;  // events epoll watches it for
  bool registered = false;
};

struct H2Relay::Connection {
  Connection(const H2RelayOptions& options, std::string peer)
      : up(options.buffer_bytes),
        down(options.buffer_bytes),
        reader(options.max_streams),
        peer(std::move(peer)) {}
  RelaySide client;
  RelaySide server;  // the relay's end of the pair gRPC holds
  RelayBuffer up;    // client to gRPC
  RelayBuffer down;  // gRPC to client
  H2PreAckReader reader;
  bool watching = true;  // reading the client's framing
  bool closed = false;
  absl::Time drain_deadline = absl::InfiniteFuture();
  std::string peer;
};

namespace {

// How long the loop waits at most, so that stale drains are seen.
constexpr int kSweepMs = 1000;
constexpr int kEventsPerWait = 64;

enum class Io { kMoved, kWouldBlock, kEnd, kError };

// Reads from `fd` into the free end of `buffer` (compacting it first).
Io ReadInto(int fd, RelayBuffer& buffer, size_t* got) {
  if (buffer.empty()) buffer.begin = buffer.end = 0;
  if (buffer.full() && buffer.begin > 0) {
    std::memmove(buffer.data.get(), buffer.data.get() + buffer.begin,
                 buffer.end - buffer.begin);
    buffer.end -= buffer.begin;
    buffer.begin = 0;
  }
  *got = 0;
  if (buffer.full()) return Io::kWouldBlock;
  const ssize_t n =
      read(fd, buffer.data.get() + buffer.end, buffer.size - buffer.end);
  if (n > 0) {
    *got = static_cast<size_t>(n);
    buffer.end += *got;
    return Io::kMoved;
  }
  if (n == 0) return Io::kEnd;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
             ? Io::kWouldBlock
             : Io::kError;
}

// Writes what `buffer` holds to `fd`.
Io WriteFrom(int fd, RelayBuffer& buffer) {
  if (buffer.empty()) return Io::kWouldBlock;
  const ssize_t n = send(fd, buffer.data.get() + buffer.begin,
                         buffer.end - buffer.begin, MSG_NOSIGNAL);
  if (n >= 0) {
    buffer.begin += static_cast<size_t>(n);
    return Io::kMoved;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
             ? Io::kWouldBlock
             : Io::kError;
}

// A prefix no other process's relay shares: the pid and a random number.
std::string UniquePrefix() {
  std::random_device random;
  return absl::StrCat(getpid(), "-", random(), random());
}

// Binds `fd` (AF_UNIX) to the abstract `name`.
bool BindAbstract(int fd, const std::string& name) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const socklen_t length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return bind(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<H2Relay>> H2Relay::Start(H2RelayOptions options,
                                                        OnAbort on_abort) {
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return absl::UnavailableError("epoll_create1 failed");
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    close(epoll_fd);
    return absl::UnavailableError("eventfd failed");
  }
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.ptr = nullptr;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &wake);
  std::unique_ptr<H2Relay> relay(
      new H2Relay(options, std::move(on_abort), epoll_fd, wake_fd));
  relay->thread_ = std::thread([r = relay.get()] { r->Loop(); });
  // Its CPU shows apart in top -H and /proc/PID/task (docs/deploy.md).
  pthread_setname_np(relay->thread_.native_handle(), "chunkplan-relay");
  return relay;
}

H2Relay::H2Relay(H2RelayOptions options, OnAbort on_abort, int epoll_fd,
                 int wake_fd)
    : options_(options),
      on_abort_(std::move(on_abort)),
      epoll_fd_(epoll_fd),
      wake_fd_(wake_fd),
      name_prefix_(UniquePrefix()) {}

H2Relay::~H2Relay() {
  stopping_.store(true);
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  thread_.join();
  absl::MutexLock lock(&mu_);
  for (Connection* connection : connections_) {
    close(connection->client.fd);
    close(connection->server.fd);
    delete connection;
  }
  connections_.clear();
  close(wake_fd_);
  close(epoll_fd_);
}

absl::StatusOr<int> H2Relay::Adopt(int client_fd, absl::string_view peer) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
                 pair) != 0) {
    close(client_fd);
    return absl::UnavailableError("no descriptors for the relay's pair");
  }
  const std::string name = RelayedPeerName(
      absl::StrCat(name_prefix_, "-", next_name_.fetch_add(1)), peer);
  if (!BindAbstract(pair[0], name)) {
    close(pair[0]);
    close(pair[1]);
    close(client_fd);
    return absl::UnavailableError(
        absl::StrCat("cannot bind the relay's end for ", peer));
  }
  auto* connection = new Connection(options_, std::string(peer));
  connection->client = {connection, client_fd};
  connection->server = {connection, pair[0]};
  {
    absl::MutexLock lock(&mu_);
    connections_.insert(connection);
  }
  // Registered last, the client's side after gRPC's (which has no event
  // before gRPC holds its end): from the client's registration on, the
  // relay's thread owns the connection.
  for (RelaySide* side : {&connection->server, &connection->client}) {
    side->watched = EPOLLIN;
    side->registered = true;
  }
  for (RelaySide* side : {&connection->server, &connection->client}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = side;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, side->fd, &event);
  }
  return pair[1];
}

size_t H2Relay::live() const {
  absl::MutexLock lock(&mu_);
  return connections_.size();
}

void H2Relay::Loop() {
  epoll_event events[kEventsPerWait];
  absl::Time next_sweep = absl::Now() + absl::Milliseconds(kSweepMs);
  while (!stopping_.load()) {
    const int n = epoll_wait(epoll_fd_, events, kEventsPerWait, kSweepMs);
    for (int i = 0; i < n; ++i) {
      auto* side = static_cast<RelaySide*>(events[i].data.ptr);
      if (side == nullptr) continue;  // the wake-up: look at stopping_
      Connection& connection = *side->connection;
      if (connection.closed) continue;
      const bool ready =
          (events[i].events & (EPOLLIN | EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0;
      if (side == &connection.server && (events[i].events & EPOLLHUP) != 0) {
        side->gone = true;
      }
      Pump(connection, ready && side == &connection.client,
           ready && side == &connection.server);
    }
    const absl::Time now = absl::Now();
    if (now >= next_sweep) {
      CloseStaleDrains(now);
      next_sweep = now + absl::Milliseconds(kSweepMs);
    }
    if (closed_.empty()) continue;
    absl::MutexLock lock(&mu_);
    for (Connection* connection : closed_) {
      connections_.erase(connection);
      delete connection;
    }
    closed_.clear();
  }
}

void H2Relay::Pump(Connection& c, bool client_ready, bool server_ready) {
  size_t got = 0;
  if (client_ready && !c.client.eof) {
    const Io io = ReadInto(c.client.fd, c.up, &got);
    if (io == Io::kError) return Close(c, /*reset=*/true);
    c.client.eof = io == Io::kEnd;
    if (got > 0 && c.watching) {
      const absl::StatusOr<bool> acknowledged = c.reader.Feed(
          absl::string_view(c.up.data.get() + c.up.end - got, got));
      if (!acknowledged.ok()) {
        // Not HTTP/2: closed as gRPC would close it. Over the limit: reset,
        // so that the client's bytes in flight are dropped unread.
        const bool over = absl::IsResourceExhausted(acknowledged.status());
        if (over) {
          aborted_.fetch_add(1);
          if (on_abort_) on_abort_(c.peer, c.reader.streams_opened());
        }
        return Close(c, /*reset=*/over);
      }
      c.watching = !*acknowledged;
    }
  }
  if (server_ready && !c.server.eof) {
    const Io io = ReadInto(c.server.fd, c.down, &got);
    if (io == Io::kError) return Close(c, /*reset=*/true);
    c.server.eof = io == Io::kEnd;
    if (got > 0) c.reader.ServerSpoke();
  }
  if (c.server.gone && c.drain_deadline == absl::InfiniteFuture()) {
    c.drain_deadline = absl::Now() + options_.drain;
  }
  if (WriteFrom(c.server.fd, c.up) == Io::kError ||
      WriteFrom(c.client.fd, c.down) == Io::kError) {
    return Close(c, /*reset=*/true);
  }
  if (c.client.eof && c.up.empty() && !c.server.shut) {
    shutdown(c.server.fd, SHUT_WR);
    c.server.shut = true;
  }
  // All gRPC wrote has reached the client's socket, and gRPC has closed
  // its end, or both sides have ended and all they sent was delivered.
  if (c.server.eof && c.down.empty() &&
      (c.server.gone || (c.client.eof && c.up.empty()))) {
    return Close(c, /*reset=*/false);
  }
  Watch(c);
}

void H2Relay::Watch(Connection& c) {
  const auto has_room = [](const RelayBuffer& b) {
    return b.end - b.begin < b.size;
  };
  const uint32_t client_wants =
      (!c.client.eof && has_room(c.up) ? EPOLLIN : 0u) |
      (!c.down.empty() ? EPOLLOUT : 0u);
  const uint32_t server_wants =
      (!c.server.eof && has_room(c.down) ? EPOLLIN : 0u) |
      (!c.up.empty() ? EPOLLOUT : 0u);
  for (auto [side, wants] : {std::pair{&c.client, client_wants},
                             std::pair{&c.server, server_wants}}) {
    // gRPC's end, shut for writing but not closed, stays watched for
    // nothing but EPOLLHUP (always reported): its close.
    const bool await_hup = side == &c.server && c.server.eof && !c.server.gone;
    const bool keep = wants != 0 || await_hup;
    if (keep == side->registered && (!keep || side->watched == wants)) {
      continue;
    }
    epoll_event event{};
    event.events = wants;
    event.data.ptr = side;
    if (!keep) {
      // Unwatched: a side closed would report EPOLLHUP on every wait.
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, side->fd, &event);
      side->registered = false;
    } else {
      epoll_ctl(epoll_fd_, side->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
                side->fd, &event);
      side->registered = true;
    }
    side->watched = wants;
  }
}

void H2Relay::Close(Connection& c, bool reset) {
  if (reset) {
    // SO_LINGER 0: close() sends a reset and drops what was not read.
    const linger abort{1, 0};
    setsockopt(c.client.fd, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  }
  close(c.client.fd);
  close(c.server.fd);
  c.closed = true;
  closed_.push_back(&c);
}

void H2Relay::CloseStaleDrains(absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (Connection* c : connections_) {
    if (!c->closed && c->drain_deadline <= now) Close(*c, /*reset=*/false);
  }
}

}  // namespace chunkplan::transport
