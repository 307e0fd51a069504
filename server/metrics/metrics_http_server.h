#ifndef CHUNKPLAN_SERVER_METRICS_METRICS_HTTP_SERVER_H_
#define CHUNKPLAN_SERVER_METRICS_METRICS_HTTP_SERVER_H_

// Serves the Prometheus text exposition at GET /metrics over plain HTTP
// (cpp-httplib), on a thread of its own. Every other path: 404.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace chunkplan::metrics {

class MetricsHttpServer {
 public:
  // Binds `listen` ("HOST:PORT", "[V6HOST]:PORT"; port 0 picks a free one)
  // and serves `exposition()` at /metrics until destroyed. `exposition` is
  // called on the HTTP threads and must be thread-safe.
  // Errors: INVALID_ARGUMENT for an address that is not HOST:PORT;
  // UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::function<std::string()> exposition);

  // Stops serving and joins the HTTP thread.
  ~MetricsHttpServer();

  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The address served, with the port really bound.
  const std::string& address() const { return address_; }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  std::string address_;
};

}  // namespace chunkplan::metrics

#endif  // CHUNKPLAN_SERVER_METRICS_METRICS_HTTP_SERVER_H_
