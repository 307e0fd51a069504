#ifndef CHUNKPLAN_SERVER_TRANSPORT_CHANNELZ_SOCKETS_H_
#define CHUNKPLAN_SERVER_TRANSPORT_CHANNELZ_SOCKETS_H_

// The streams gRPC holds on each server connection, read from gRPC's
// channelz (its C API answers in JSON text; channelz is on by default).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chunkplan::transport {

// One server connection as channelz counts it.
struct SocketStreams {
  std::string peer;  // PeerAddress spelling; "" for a peer that is not TCP
  // Streams started less those succeeded or failed: the streams whose
  // memory gRPC still holds (a stream is counted as ended when gRPC frees
  // it, after it has closed on the wire and its call has finished).
  int64_t open_streams = 0;
};

// A page of channelz references: their ids and whether it is the last.
struct ChannelzPage {
  std::vector<int64_t> ids;
  bool end = false;
};

// Parses an answer of grpc_channelz_get_socket. Errors: INVALID_ARGUMENT
// for text that is not one.
absl::StatusOr<SocketStreams> ParseSocket(absl::string_view json);

// Parses an answer of grpc_channelz_get_servers (`list` "server", ids at
// ref.serverId) or grpc_channelz_get_server_sockets (`list` "socketRef",
// ids at socketId). Errors: INVALID_ARGUMENT for text that is not one.
absl::StatusOr<ChannelzPage> ParseServerPage(absl::string_view json);
absl::StatusOr<ChannelzPage> ParseSocketPage(absl::string_view json);

// Every connection of every gRPC server in this process. Costs a JSON
// rendering and parsing per connection (docs/deploy.md gives the time).
// Errors: INTERNAL when channelz answers something unreadable.
absl::StatusOr<std::vector<SocketStreams>> ReadServerSockets();

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_CHANNELZ_SOCKETS_H_
