#ifndef CHUNKPLAN_SERVER_TRANSPORT_PEER_ADDRESS_H_
#define CHUNKPLAN_SERVER_TRANSPORT_PEER_ADDRESS_H_

// One spelling of a TCP peer's address, shared by the accept loop (which
// has a sockaddr) and gRPC's channelz (which gives the address's bytes and
// port), so that the two can be matched.

#include <sys/socket.h>

#include <string>

#include "absl/strings/string_view.h"

namespace chunkplan::transport {

// "A.B.C.D:PORT" or "[V6]:PORT" for an AF_INET or AF_INET6 address (an
// IPv4-mapped IPv6 address as its IPv4 one, as gRPC names it); "" for any
// other family or a short `length`.
std::string PeerAddress(const sockaddr* address, socklen_t length);

// The same spelling from the address's bytes in network order (4 for
// IPv4, 16 for IPv6) and its port; "" for any other byte count.
std::string PeerAddress(absl::string_view ip_bytes, int port);

// PeerAddress of `fd`'s connected peer (getpeername); "" when it has none.
std::string PeerAddressOf(int fd);

// gRPC 1.51's spelling of a TCP peer (ServerContext::peer()) from
// PeerAddress's: "ipv4:A.B.C.D:PORT" or "ipv6:%5BV6%5D:PORT"; "" for "".
std::string GrpcPeer(absl::string_view peer_address);

// The abstract AF_UNIX name (without its leading NUL) that H2Relay binds
// its end of a pair to, so that gRPC, which names a connection by its
// peer's address, names it "unix-abstract:" + this: `unique` (no '/'; no
// two names bound at once may share it), then `grpc_peer`.
std::string RelayedPeerName(absl::string_view unique,
                            absl::string_view grpc_peer);

// The client's address behind gRPC's `grpc_peer` (ServerContext::peer()):
// the `grpc_peer` spelled in a relayed connection's name (which gRPC 1.51
// percent-encodes: "%5B" arrives as "%255B"), or `grpc_peer` itself for any
// other connection.
std::string ClientPeer(absl::string_view grpc_peer);

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_PEER_ADDRESS_H_
