#include "server/transport/channelz_sockets.h"

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>

#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
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

// `key` in snake case: "tcpipAddress" -> "tcpip_address".
std::string SnakeCase(absl::string_view key) {
  std::string snake;
  for (const char c : key) {
    if (c >= 'A' && c <= 'Z') {
      snake += '_';
      snake += static_cast<char>(c - 'A' + 'a');
    } else {
      snake += c;
    }
  }
  return snake;
}

// The member `key` of `object`, or null.
const Value* Member(const Struct& object, const std::string& key) {
  auto it = object.fields().find(key);
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

// The text after `"key":` in `json` (camel-case `key`, or its snake-case
// spelling, which gRPC 1.51 uses for some members); empty when absent.
// channelz's answers are machine-written: no spaces, no escapes in these
// members' names or values.
absl::string_view ValueAt(absl::string_view json, absl::string_view key) {
  for (const std::string& name : {std::string(key), SnakeCase(key)}) {
    const std::string quoted = absl::StrCat("\"", name, "\":");
    const size_t at = json.find(quoted);
    if (at != absl::string_view::npos) return json.substr(at + quoted.size());
  }
  return {};
}

// The object `"key":{...}` in `json`, braces included; empty when absent.
absl::string_view ObjectAt(absl::string_view json, absl::string_view key) {
  const absl::string_view value = ValueAt(json, key);
  if (value.empty() || value[0] != '{') return {};
  int depth = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '{') ++depth;
    if (value[i] == '}' && --depth == 0) return value.substr(0, i + 1);
  }
  return {};
}

// The string `"key":"..."` in `json`; empty when absent.
absl::string_view StringIn(absl::string_view json, absl::string_view key) {
  const absl::string_view value = ValueAt(json, key);
  if (value.empty() || value[0] != '"') return {};
  const size_t end = value.find('"', 1);
  return end == absl::string_view::npos ? absl::string_view()
                                        : value.substr(1, end - 1);
}

// The integer `"key":N` or `"key":"N"` in `json`: 0 when absent (proto3
// JSON leaves zeros out), -1 when unreadable.
int64_t CounterIn(absl::string_view json, absl::string_view key) {
  absl::string_view value = ValueAt(json, key);
  if (value.empty()) return 0;
  if (value[0] == '"') {
    value = StringIn(json, key);
  } else {
    value = value.substr(0, value.find_first_not_of("0123456789"));
  }
  int64_t out = -1;
  return absl::SimpleAtoi(value, &out) && out >= 0 ? out : -1;
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
  // Read by hand, not through Struct: protobuf's JSON parser takes ten
  // times as long as channelz takes to render the answer (docs/deploy.md).
  if (!absl::StartsWith(json, "{\"socket\":{")) {
    return absl::InvalidArgumentError("channelz answer without a socket");
  }
  SocketStreams out;
  const absl::string_view data = ObjectAt(json, "data");
  const int64_t started = CounterIn(data, "streamsStarted");
  const int64_t succeeded = CounterIn(data, "streamsSucceeded");
  const int64_t failed = CounterIn(data, "streamsFailed");
  if (started < 0 || succeeded < 0 || failed < 0) {
    return absl::InvalidArgumentError("channelz stream counts unreadable");
  }
  out.open_streams = started - succeeded - failed;
  const absl::string_view tcp =
      ObjectAt(ObjectAt(json, "remote"), "tcpipAddress");
  std::string bytes;
  if (absl::Base64Unescape(StringIn(tcp, "ipAddress"), &bytes)) {
    out.peer = PeerAddress(bytes, static_cast<int>(CounterIn(tcp, "port")));
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
