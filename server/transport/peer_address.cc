#include "server/transport/peer_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace chunkplan::transport {
namespace {

constexpr absl::string_view kRelayedPrefix = "chunkplan-relay/";
constexpr absl::string_view kAbstractScheme = "unix-abstract:";

// `text` with each "%XX" (two hex digits) replaced by its byte: gRPC 1.51
// writes a Unix socket's name into its peer URI percent-encoded.
std::string PercentDecoded(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        absl::ascii_isxdigit(text[i + 1]) &&
        absl::ascii_isxdigit(text[i + 2])) {
      out += static_cast<char>(
          std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

constexpr unsigned char kV4MappedPrefix[12] = {0, 0, 0, 0, 0,    0,
                                               0, 0, 0, 0, 0xff, 0xff};

}  // namespace

std::string PeerAddress(absl::string_view ip_bytes, int port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (ip_bytes.size() == 16 &&
      std::memcmp(ip_bytes.data(), kV4MappedPrefix, 12) == 0) {
    ip_bytes.remove_prefix(12);
  }
  if (ip_bytes.size() == 4) {
    inet_ntop(AF_INET, ip_bytes.data(), text, sizeof(text));
    return absl::StrCat(text, ":", port);
  }
  if (ip_bytes.size() == 16) {
    inet_ntop(AF_INET6, ip_bytes.data(), text, sizeof(text));
    return absl::StrCat("[", text, "]:", port);
  }
  return "";
}

std::string PeerAddress(const sockaddr* address, socklen_t length) {
  if (address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    return PeerAddress(
        absl::string_view(reinterpret_cast<const char*>(&v4->sin_addr), 4),
        ntohs(v4->sin_port));
  }
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    return PeerAddress(
        absl::string_view(reinterpret_cast<const char*>(&v6->sin6_addr), 16),
        ntohs(v6->sin6_port));
  }
  return "";
}

std::string PeerAddressOf(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return "";
  }
  return PeerAddress(reinterpret_cast<const sockaddr*>(&address), length);
}

std::string GrpcPeer(absl::string_view peer_address) {
  if (peer_address.empty()) return "";
  if (!absl::StartsWith(peer_address, "[")) {
    return absl::StrCat("ipv4:", peer_address);
  }
  // gRPC writes the brackets of an IPv6 address percent-encoded.
  return absl::StrReplaceAll(absl::StrCat("ipv6:", peer_address),
                             {{"[", "%5B"}, {"]", "%5D"}});
}

std::string RelayedPeerName(absl::string_view unique,
                            absl::string_view grpc_peer) {
  return absl::StrCat(kRelayedPrefix, unique, "/", grpc_peer);
}

std::string ClientPeer(absl::string_view grpc_peer) {
  absl::string_view name = grpc_peer;
  if (!absl::ConsumePrefix(&name, kAbstractScheme) ||
      !absl::ConsumePrefix(&name, kRelayedPrefix)) {
    return std::string(grpc_peer);
  }
  const size_t slash = name.find('/');
  if (slash == absl::string_view::npos) return std::string(grpc_peer);
  return PercentDecoded(name.substr(slash + 1));
}

}  // namespace chunkplan::transport
