#include "server/metrics/metrics_http_server.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "server/transport/listen_socket.h"

namespace chunkplan::metrics {
namespace {

using Clock = std::chrono::steady_clock;

// The text exposition format's media type (Prometheus 0.0.4).
constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";
// How often the thread looks at the stop flag and the deadlines.
constexpr int kPollMs = 50;

struct Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string in;   // the request head so far
  std::string out;  // the response, once the head is complete
  size_t sent = 0;
};

std::string Response(absl::string_view status, absl::string_view content_type,
                     absl::string_view body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n\r\n", body);
}

std::string Plain(absl::string_view status) {
  return Response(status, "text/plain", absl::StrCat(status, "\n"));
}

// Whether the head announces a body (any but "Content-Length: 0").
bool HasBody(absl::string_view head) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const std::string name = absl::AsciiStrToLower(line.substr(0, colon));
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (name == "transfer-encoding") return true;
    if (name == "content-length" && value != "0") return true;
  }
  return false;
}

// The response to a complete request head (without its blank line).
std::string Respond(absl::string_view head,
                    const std::function<std::string()>& exposition) {
  const absl::string_view request_line = head.substr(0, head.find("\r\n"));
  const std::vector<absl::string_view> parts =
      absl::StrSplit(request_line, ' ', absl::SkipEmpty());
  if (parts.size() != 3 || !absl::StartsWith(parts[2], "HTTP/1.")) {
    return Plain("400 Bad Request");
  }
  if (HasBody(head)) return Plain("413 Payload Too Large");
  if (parts[0] != "GET") return Plain("405 Method Not Allowed");
  const absl::string_view path = parts[1].substr(0, parts[1].find('?'));
  if (path != "/metrics") return Plain("404 Not Found");
  return Response("200 OK", kContentType, exposition());
}

// Reads what `c` has sent; once its head is complete (or too long), sets
// its response. Returns false when the peer has closed or failed.
bool ReadRequest(Connection& c,
                 const std::function<std::string()>& exposition) {
  char buffer[4096];
  const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
  if (n == 0) return false;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  c.in.append(buffer, static_cast<size_t>(n));
  const size_t end = c.in.find("\r\n\r\n");
  if (end != std::string::npos && end <= MetricsHttpServer::kMaxRequestHead) {
    c.out = Respond(absl::string_view(c.in).substr(0, end), exposition);
  } else if (c.in.size() > MetricsHttpServer::kMaxRequestHead) {
    c.out = Plain("431 Request Header Fields Too Large");
  }
  return true;
}

// Sends what it can of `c`'s response; returns false once all is sent or
// the peer has failed.
bool WriteResponse(Connection& c) {
  const ssize_t n =
      send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  c.sent += static_cast<size_t>(n);
  return c.sent < c.out.size();
}

// One step of `c` after poll; false once it is done with.
bool Advance(Connection& c, short revents,
             const std::function<std::string()>& exposition) {
  if (c.out.empty()) {
    if ((revents & (POLLIN | POLLHUP | POLLERR)) == 0) return true;
    if (!ReadRequest(c, exposition)) return false;
    if (c.out.empty()) return true;
  }
  return WriteResponse(c);
}

void CloseConnection(Connection& c) {
  shutdown(c.fd, SHUT_RDWR);
  close(c.fd);
}

// Accepts every pending connection; beyond kMaxConnections the oldest goes.
void AcceptAll(int listen_fd, std::deque<Connection>& open) {
  for (;;) {
    const int fd =
        accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or EMFILE and the like: next round
    if (open.size() >= MetricsHttpServer::kMaxConnections) {
      CloseConnection(open.front());
      open.pop_front();
    }
    Connection c;
    c.fd = fd;
    c.deadline = Clock::now() + MetricsHttpServer::kExchangeDeadline;
    open.push_back(std::move(c));
  }
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(int listen_fd, std::string address,
                                     std::function<std::string()> exposition)
    : listen_fd_(listen_fd),
      address_(std::move(address)),
      exposition_(std::move(exposition)) {}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::function<std::string()> exposition) {
  absl::StatusOr<transport::HostPort> where =
      transport::ParseHostPort(listen, "--metrics_listen");
  if (!where.ok()) return where.status();
  absl::StatusOr<transport::ListeningSocket> socket =
      transport::ListenTcp(listen, "--metrics_listen");
  if (!socket.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for metrics on ", listen));
  }
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer(
      socket->fd, transport::JoinHostPort(where->host, socket->port),
      std::move(exposition)));
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void MetricsHttpServer::Serve() {
  std::deque<Connection> open;  // oldest first
  std::vector<pollfd> polled;
  while (!stopping_.load()) {
    polled.assign(1, pollfd{listen_fd_, POLLIN, 0});
    for (const Connection& c : open) {
      const short events = c.out.empty() ? POLLIN : POLLOUT;
      polled.push_back(pollfd{c.fd, events, 0});
    }
    if (poll(polled.data(), polled.size(), kPollMs) < 0) continue;
    const Clock::time_point now = Clock::now();
    std::deque<Connection> kept;
    for (size_t i = 0; i < open.size(); ++i) {
      if (now < open[i].deadline &&
          Advance(open[i], polled[i + 1].revents, exposition_)) {
        kept.push_back(std::move(open[i]));
      } else {
        CloseConnection(open[i]);
      }
    }
    open = std::move(kept);
    if (polled[0].revents & POLLIN) AcceptAll(listen_fd_, open);
  }
  for (Connection& c : open) CloseConnection(c);
}

}  // namespace chunkplan::metrics
