#ifndef CHUNKPLAN_SERVER_METRICS_METRICS_HTTP_SERVER_H_
#define CHUNKPLAN_SERVER_METRICS_METRICS_HTTP_SERVER_H_

// Serves the Prometheus text exposition at GET /metrics over plain HTTP/1.1,
// one request per connection, on one thread of its own. Bounded whatever
// the peers do (docs/deploy.md, "The metrics endpoint"): at most
// kMaxConnections open (a new one beyond that closes the oldest), a request
// head of at most kMaxRequestHead bytes, no request body (413), and
// kExchangeDeadline for the whole exchange of each connection, so slow or
// silent peers cannot hold it. Another method: 405; another path: 404.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace chunkplan::metrics {

class MetricsHttpServer {
 public:
  static constexpr size_t kMaxConnections = 16;
  static constexpr size_t kMaxRequestHead = 8 << 10;
  static constexpr std::chrono::seconds kExchangeDeadline{5};

  // Binds `listen` ("HOST:PORT", "[V6HOST]:PORT"; port 0 picks a free one)
  // and serves `exposition()` at /metrics until destroyed. `exposition` is
  // called on the server's thread.
  // Errors: INVALID_ARGUMENT for an address that is not HOST:PORT;
  // UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::function<std::string()> exposition);

  // Stops serving, closes every connection and joins the thread.
  ~MetricsHttpServer();

  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The address served, with the port really bound.
  const std::string& address() const { return address_; }

 private:
  MetricsHttpServer(int listen_fd, std::string address,
                    std::function<std::string()> exposition);
  void Serve();

  const int listen_fd_;
  const std::string address_;
  const std::function<std::string()> exposition_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace chunkplan::metrics

#endif  // CHUNKPLAN_SERVER_METRICS_METRICS_HTTP_SERVER_H_
