#include "server/transport/stream_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace chunkplan::transport {

std::vector<size_t> PickOverLimit(const std::vector<SocketStreams>& sockets,
                                  int64_t max_streams, int64_t excess_budget) {
  std::vector<size_t> over;
  int64_t excess = 0;
  for (size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i].open_streams > max_streams && !sockets[i].peer.empty()) {
      over.push_back(i);
      excess += sockets[i].open_streams - max_streams;
    }
  }
  std::sort(over.begin(), over.end(), [&sockets](size_t a, size_t b) {
    return sockets[a].open_streams > sockets[b].open_streams;
  });
  size_t picked = 0;
  while (picked < over.size() && excess > excess_budget) {
    excess -= sockets[over[picked]].open_streams - max_streams;
    ++picked;
  }
  over.resize(picked);
  return over;
}

int64_t ResidentBytes() {
  // statm: size resident shared text lib data dt, in pages.
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  long long size = 0, resident = 0;
  if (n <= 0 || std::sscanf(text, "%lld %lld", &size, &resident) != 2) {
    return 0;
  }
  return resident * sysconf(_SC_PAGESIZE);
}

StreamGuard::StreamGuard(ConnectionGate& gate, StreamGuardOptions options,
                         OnClose on_close)
    : gate_(gate),
      options_(std::move(options)),
      on_close_(std::move(on_close)),
      thread_([this] { Watch(); }) {}

StreamGuard::~StreamGuard() {
  stop_.Notify();
  thread_.join();
}

void StreamGuard::Watch() {
  int64_t resident_at_scan = ResidentBytes();
  absl::Time scanned = absl::Now();
  absl::Duration pause = options_.poll;
  absl::Duration rescan = options_.rescan;
  while (!stop_.WaitForNotificationWithTimeout(pause)) {
    const int64_t resident = ResidentBytes();
    const absl::Time now = absl::Now();
    pause = options_.poll;
    if (resident - resident_at_scan < options_.growth_bytes &&
        now - scanned < rescan) {
      continue;
    }
    const size_t closed = Scan();
    const absl::Time done = absl::Now();
    // While scans find connections to close, the next follows a poll
    // later; otherwise growth-triggered scans take at most a fifth of one
    // core, and periodic ones a fiftieth.
    if (closed == 0) pause = std::max(options_.poll, 4 * (done - now));
    rescan = std::max(options_.rescan, 50 * (done - now));
    resident_at_scan = ResidentBytes();
    scanned = done;
  }
}

size_t StreamGuard::Scan() {
  absl::StatusOr<std::vector<SocketStreams>> sockets = ReadServerSockets();
  if (!sockets.ok()) return 0;
  size_t closed = 0;
  for (const size_t i :
       PickOverLimit(*sockets, options_.max_streams, options_.excess_budget)) {
    const SocketStreams& socket = (*sockets)[i];
    if (!gate_.ShutDownPeer(socket.peer)) continue;
    ++closed;
    closed_.fetch_add(1);
    if (on_close_) on_close_(socket);
  }
  return closed;
}

}  // namespace chunkplan::transport
