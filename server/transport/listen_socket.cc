#include "server/transport/listen_socket.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace chunkplan::transport {
namespace {

// The kernel's own cap (net.core.somaxconn) applies where it is lower.
constexpr int kBacklog = 4096;

absl::Status CannotListen(const std::string& listen, int error) {
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", listen, ": ", strerror(error)));
}

// The local port `fd` is bound to, or 0.
int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
}

// Binds and listens on `address` with a new socket; returns it or errno.
int BindAndListen(const addrinfo& address, int& error) {
  const int fd =
      socket(address.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = errno;
    return -1;
  }
  const int one = 1;
  const int zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (address.ai_family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  }
  if (bind(fd, address.ai_addr, address.ai_addrlen) != 0 ||
      listen(fd, kBacklog) != 0) {
    error = errno;
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(const std::string& listen,
                                       absl::string_view flag) {
  const size_t colon = listen.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " must be HOST:PORT, not '", listen, "'"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{std::move(host), static_cast<int>(port)};
}

std::string JoinHostPort(const std::string& host, int port) {
  return host.find(':') != std::string::npos
             ? absl::StrCat("[", host, "]:", port)
             : absl::StrCat(host, ":", port);
}

absl::StatusOr<ListeningSocket> ListenTcp(const std::string& listen,
                                          absl::string_view flag) {
  absl::StatusOr<HostPort> where = ParseHostPort(listen, flag);
  if (!where.ok()) return where.status();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(where->port);
  const int rc = getaddrinfo(where->host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " host in '", listen, "' does not resolve: ", gai_strerror(rc)));
  }
  int error = 0;
  const int fd = BindAndListen(*found, error);
  freeaddrinfo(found);
  if (fd < 0) return CannotListen(listen, error);
  return ListeningSocket{fd, BoundPort(fd)};
}

}  // namespace chunkplan::transport
