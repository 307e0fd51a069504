#ifndef CHUNKPLAN_SERVER_TRANSPORT_H2_RELAY_H_
#define CHUNKPLAN_SERVER_TRANSPORT_H2_RELAY_H_

// The HTTP/2 pre-acknowledgement filter of plaintext connections: instead
// of the client's socket, gRPC gets one end of a local AF_UNIX pair, and one
// thread forwards bytes between the client and the pair's other end. Until
// the client acknowledges the server's SETTINGS it reads the client's
// framing (H2PreAckReader) and aborts (TCP reset) a client that opens more
// streams than gRPC advertised; from then on it only forwards. Each
// connection has one fixed buffer per direction; a side whose peer's buffer
// is full is not read. docs/deploy.md, "Limits", gives what it bounds and
// costs.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace chunkplan::transport {

struct H2RelayOptions {
  // Streams a client may open before acknowledging (the server's
  // --max_concurrent_streams).
  uint32_t max_streams = 32;
  // Bytes buffered per direction per connection.
  size_t buffer_bytes = size_t{64} << 10;
  // How long bytes gRPC wrote before closing its end may wait for a client
  // that does not read them; the connection is then closed.
  absl::Duration drain = absl::Seconds(5);
};

class H2Relay {
 public:
  // Called on the relay's thread for each connection aborted over the
  // limit: the client's address (as Adopt got it) and the streams it had
  // opened, the limit's included.
  using OnAbort = std::function<void(const std::string& peer, uint32_t)>;

  // Starts the relay's thread. Errors: UNAVAILABLE when the kernel refuses
  // an epoll or event descriptor.
  static absl::StatusOr<std::unique_ptr<H2Relay>> Start(H2RelayOptions options,
                                                        OnAbort on_abort);

  // Stops the thread and closes every connection (both sides).
  ~H2Relay();

  H2Relay(const H2Relay&) = delete;
  H2Relay& operator=(const H2Relay&) = delete;

  // Takes `client_fd` (a connected stream socket, non-blocking; owned from
  // here on, closed on error too) from `peer` (gRPC's spelling,
  // "ipv4:A.B.C.D:PORT") and returns the descriptor to hand to gRPC, the
  // caller's: one end of an AF_UNIX pair whose other end, bound to
  // RelayedPeerName(peer, ...), the relay forwards to and from the client.
  // Costs two descriptors beyond the client's. Errors: UNAVAILABLE when a
  // descriptor or the name cannot be had. Thread-safe.
  absl::StatusOr<int> Adopt(int client_fd, absl::string_view peer);

  // Connections held (adopted, not yet closed). Thread-safe.
  size_t live() const;
  // Connections aborted over the limit so far.
  uint64_t aborted() const { return aborted_.load(); }

  struct Connection;

 private:
  H2Relay(H2RelayOptions options, OnAbort on_abort, int epoll_fd, int wake_fd);

  void Loop();
  // Moves what `connection` can move after an event; closes it when done.
  void Pump(Connection& connection, bool client_ready, bool server_ready);
  // Watches each side for what it can do now.
  void Watch(Connection& connection);
  // Closes both sides (the client's with a reset when `reset`) and frees
  // the connection after the current batch of events.
  void Close(Connection& connection, bool reset);
  // Closes connections whose drain ran past options_.drain.
  void CloseStaleDrains(absl::Time now);

  const H2RelayOptions options_;
  const OnAbort on_abort_;
  const int epoll_fd_;
  const int wake_fd_;
  const std::string name_prefix_;  // unique to this relay
  std::atomic<uint64_t> next_name_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> aborted_{0};
  mutable absl::Mutex mu_;
  std::unordered_set<Connection*> connections_ ABSL_GUARDED_BY(mu_);
  // Closed in the current batch of events, freed after it (its other
  // side's events may follow); the relay's thread only.
  std::vector<Connection*> closed_;
  std::thread thread_;
};

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_H2_RELAY_H_
