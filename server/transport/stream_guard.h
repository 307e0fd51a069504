#ifndef CHUNKPLAN_SERVER_TRANSPORT_STREAM_GUARD_H_
#define CHUNKPLAN_SERVER_TRANSPORT_STREAM_GUARD_H_

// Closes the connections of clients that hold more streams than the server
// advertised (SETTINGS_MAX_CONCURRENT_STREAMS). gRPC 1.51 enforces that
// limit only once the client has acknowledged it, so a client that never
// acknowledges can make the server hold any number of streams. A watch
// thread reads the process's resident memory every few milliseconds and,
// when it has grown or at a low rate, each connection's streams from
// channelz; it aborts the connections over the limit through the gate
// (ConnectionGate::ShutDownPeer; gRPC then closes them and frees their
// streams). docs/deploy.md, "Limits", gives what it bounds and its costs.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/transport/channelz_sockets.h"
#include "server/transport/connection_gate.h"

namespace chunkplan::transport {

struct StreamGuardOptions {
  // The limit advertised to every client (--max_concurrent_streams).
  int64_t max_streams = 32;
  // Streams beyond the limit, summed over all connections, left alone: a
  // conforming client can hold a few more than the limit for a moment (a
  // stream that closed on the wire is freed once its call has finished),
  // so only the largest excesses are closed, until the rest fit.
  int64_t excess_budget = 1024;
  // How often resident memory is read.
  absl::Duration poll = absl::Milliseconds(10);
  // Connections are read when resident memory has grown this much since
  // the last reading of them (at most a fifth of one core's time goes to
  // these readings, except while they find connections to close), and
  // every `rescan` or 50 readings' time, whichever is longer.
  int64_t growth_bytes = int64_t{2} << 20;
  absl::Duration rescan = absl::Seconds(1);
};

// Indexes into `sockets` of the connections to close: those holding more
// than `max_streams`, the largest excess first, until the excess of the
// rest sums to at most `excess_budget`. A connection whose peer is not
// known ("") is never picked.
std::vector<size_t> PickOverLimit(const std::vector<SocketStreams>& sockets,
                                  int64_t max_streams, int64_t excess_budget);

class StreamGuard {
 public:
  // What was closed: the peer and the streams it held.
  using OnClose = std::function<void(const SocketStreams&)>;

  // Starts the watch thread over the connections `gate` handed to gRPC;
  // `on_close` is called on that thread for each connection shut down.
  // `gate` must outlive this object.
  StreamGuard(ConnectionGate& gate, StreamGuardOptions options,
              OnClose on_close);

  // Stops and joins the watch thread.
  ~StreamGuard();

  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  // Connections shut down so far.
  uint64_t closed() const { return closed_.load(); }

 private:
  void Watch();
  // Reads every connection and aborts those PickOverLimit names; returns
  // how many it aborted.
  size_t Scan();

  ConnectionGate& gate_;
  const StreamGuardOptions options_;
  const OnClose on_close_;
  std::atomic<uint64_t> closed_{0};
  absl::Notification stop_;
  std::thread thread_;
};

// The process's resident memory in bytes (/proc/self/statm); 0 when it
// cannot be read.
int64_t ResidentBytes();

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_STREAM_GUARD_H_
