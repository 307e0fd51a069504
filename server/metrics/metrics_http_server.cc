#include "server/metrics/metrics_http_server.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"

namespace chunkplan::metrics {
namespace {

// The text exposition format's media type (Prometheus 0.0.4).
constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

struct HostPort {
  std::string host;  // without brackets
  int port = 0;
};

absl::StatusOr<HostPort> ParseHostPort(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_listen must be HOST:PORT, not '", listen, "'"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{std::move(host), static_cast<int>(port)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::function<std::string()> exposition) {
  absl::StatusOr<HostPort> where = ParseHostPort(listen);
  if (!where.ok()) return where.status();

  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer());
  server->http_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *server->http_;
  http.Get("/metrics",
           [exposition = std::move(exposition)](const httplib::Request&,
                                                httplib::Response& response) {
             response.set_content(exposition(), kContentType);
           });
  int port = where->port;
  if (port == 0) {
    port = http.bind_to_any_port(where->host);
  } else if (!http.bind_to_port(where->host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for metrics on ", listen));
  }
  const bool bracketed = where->host.find(':') != std::string::npos;
  server->address_ = bracketed ? absl::StrCat("[", where->host, "]:", port)
                               : absl::StrCat(where->host, ":", port);
  // stop() only stops a server that is already running, so Start returns
  // once the thread serves (or has given up), never before.
  auto finished = std::make_shared<std::atomic<bool>>(false);
  server->thread_ = std::thread([&http, finished] {
    http.listen_after_bind();
    finished->store(true);
  });
  while (!http.is_running() && !finished->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (finished->load()) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", server->address_));
  }
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (http_ != nullptr) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace chunkplan::metrics
