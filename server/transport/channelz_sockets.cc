#include "server/transport/channelz_sockets.h"

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>

#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/transport/peer_address.h"

namespace chunkplan::transport {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

absl::StatusOr<Struct> ParseJson(absl::string_view json) {
  Struct parsed;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(std::string(json), &parsed,
                                                   options)
           .ok()) {
    return absl::InvalidArgumentError("channelz answer is not JSON");
  }
  return parsed;
}

// The member `key` of `object`, or null. gRPC 1.51 spells some members in
// snake case ("tcpip_address"), proto3 JSON in lower camel case
// ("tcpipAddress"): `key` is given in camel case and both are looked for.
const Value* Member(const Struct& object, const std::string& key) {
  auto it = object.fields().find(key);
  if (it != object.fields().end()) return &it->second;
  std::string snake;
  for (const char c : key) {
    if (c >= 'A' && c <= 'Z') {
      snake += '_';
      snake += static_cast<char>(c - 'A' + 'a');
    } else {
      snake += c;
    }
  }
  it = object.fields().find(snake);
  return it == object.fields().end() ? nullptr : &it->second;
}

// The object at `path` under `object`, or null.
const Struct* Object(const Struct& object,
                     std::initializer_list<const char*> path) {
  const Struct* at = &object;
  for (const char* key : path) {
    const Value* value = Member(*at, key);
    if (value == nullptr || !value->has_struct_value()) return nullptr;
    at = &value->struct_value();
  }
  return at;
}

// A channelz integer: a JSON string (int64) or number (int32); a missing
// member is 0 (proto3 JSON leaves zeros out); -1 for anything else.
int64_t Integer(const Struct& object, const std::string& key) {
  const Value* value = Member(object, key);
  if (value == nullptr) return 0;
  int64_t out = -1;
  if (value->has_string_value()) {
    if (!absl::SimpleAtoi(value->string_value(), &out)) return -1;
    return out;
  }
  if (value->kind_case() == Value::kNumberValue) {
    return static_cast<int64_t>(value->number_value());
  }
  return -1;
}

absl::StatusOr<ChannelzPage> ParsePage(absl::string_view json,
                                       const std::string& list, const char* ref,
                                       const char* id_key) {
  absl::StatusOr<Struct> parsed = ParseJson(json);
  if (!parsed.ok()) return parsed.status();
  ChannelzPage page;
  const Value* end = Member(*parsed, "end");
  page.end = end != nullptr && end->bool_value();
  const Value* items = Member(*parsed, list);
  if (items == nullptr) return page;  // an empty list is left out
  for (const Value& item : items->list_value().values()) {
    const Struct* holder = &item.struct_value();
    if (ref != nullptr) holder = Object(*holder, {ref});
    const int64_t id = holder == nullptr ? -1 : Integer(*holder, id_key);
    if (id <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("channelz ", list, " without an id"));
    }
    page.ids.push_back(id);
  }
  return page;
}

// An answer of the channelz C API, freed with gpr_free.
using ChannelzText = std::unique_ptr<char, decltype(&gpr_free)>;

ChannelzText Take(char* text) { return ChannelzText(text, &gpr_free); }

// Appends the connections of server `server_id` to `out`.
absl::Status ReadSocketsOf(int64_t server_id, std::vector<SocketStreams>& out) {
  int64_t start = 0;
  for (;;) {
    ChannelzText text = Take(grpc_channelz_get_server_sockets(
        static_cast<intptr_t>(server_id), static_cast<intptr_t>(start), 0));
    if (text == nullptr) return absl::OkStatus();  // the server is gone
    absl::StatusOr<ChannelzPage> page = ParseSocketPage(text.get());
    if (!page.ok()) return absl::InternalError(page.status().message());
    for (const int64_t id : page->ids) {
      ChannelzText socket =
          Take(grpc_channelz_get_socket(static_cast<intptr_t>(id)));
      if (socket == nullptr) continue;  // closed since the page
      absl::StatusOr<SocketStreams> streams = ParseSocket(socket.get());
      if (!streams.ok()) return absl::InternalError(streams.status().message());
      out.push_back(*std::move(streams));
    }
    if (page->end || page->ids.empty()) return absl::OkStatus();
    start = page->ids.back() + 1;
  }
}

}  // namespace

absl::StatusOr<SocketStreams> ParseSocket(absl::string_view json) {
  absl::StatusOr<Struct> parsed = ParseJson(json);
  if (!parsed.ok()) return parsed.status();
  const Struct* socket = Object(*parsed, {"socket"});
  if (socket == nullptr) {
    return absl::InvalidArgumentError("channelz answer without a socket");
  }
  SocketStreams out;
  if (const Struct* data = Object(*socket, {"data"}); data != nullptr) {
    const int64_t started = Integer(*data, "streamsStarted");
    const int64_t succeeded = Integer(*data, "streamsSucceeded");
    const int64_t failed = Integer(*data, "streamsFailed");
    if (started < 0 || succeeded < 0 || failed < 0) {
      return absl::InvalidArgumentError("channelz stream counts unreadable");
    }
    out.open_streams = started - succeeded - failed;
  }
  const Struct* tcp = Object(*socket, {"remote", "tcpipAddress"});
  if (tcp != nullptr) {
    const Value* ip = Member(*tcp, "ipAddress");
    std::string bytes;
    if (ip != nullptr && absl::Base64Unescape(ip->string_value(), &bytes)) {
      out.peer = PeerAddress(bytes, static_cast<int>(Integer(*tcp, "port")));
    }
  }
  return out;
}

absl::StatusOr<ChannelzPage> ParseServerPage(absl::string_view json) {
  return ParsePage(json, "server", "ref", "serverId");
}

absl::StatusOr<ChannelzPage> ParseSocketPage(absl::string_view json) {
  return ParsePage(json, "socketRef", nullptr, "socketId");
}

absl::StatusOr<std::vector<SocketStreams>> ReadServerSockets() {
  std::vector<SocketStreams> out;
  int64_t start = 0;
  for (;;) {
    ChannelzText text =
        Take(grpc_channelz_get_servers(static_cast<intptr_t>(start)));
    if (text == nullptr) return out;
    absl::StatusOr<ChannelzPage> page = ParseServerPage(text.get());
    if (!page.ok()) return absl::InternalError(page.status().message());
    for (const int64_t id : page->ids) {
      if (absl::Status s = ReadSocketsOf(id, out); !s.ok()) return s;
    }
    if (page->end || page->ids.empty()) return out;
    start = page->ids.back() + 1;
  }
}

}  // namespace chunkplan::transport
