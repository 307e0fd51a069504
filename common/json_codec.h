#ifndef CHUNKPLAN_COMMON_JSON_CODEC_H_
#define CHUNKPLAN_COMMON_JSON_CODEC_H_

// protobuf's JSON mapping for chunkplan.v1 messages, as the CLI, the tests
// and any protobuf-JSON tool speak it: field names as in the .proto
// (preserve_proto_field_names), every field printed (always_print_primitive_
// fields), 64-bit integers as strings.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace chunkplan::common {

// Parses `json` into `message` (cleared first). Unknown fields are an error,
// and so is what protobuf's parser would take leniently (CheckJsonShape).
// Errors: INVALID_ARGUMENT with CheckJsonShape's message, or with the first
// line of protobuf's parser message, each quoted value in it cut to
// kMaxEchoedBytes.
absl::Status JsonToMessage(std::string_view json,
                           google::protobuf::Message* message);

// What JSON text may have that protobuf's parser (3.21) takes leniently, and
// our messages never need: OK unless an object holds a key twice (protobuf
// concatenates a repeated field's values and keeps a scalar's last; keys
// are compared as the parser matches field names: "search_range_m" and
// "searchRangeM" alike), a key holds an escape, or an array sits directly in
// an array (protobuf flattens it into the outer one). INVALID_ARGUMENT naming
// the key, or the byte where the inner array starts. Leaves every other
// error (text that is no JSON) to protobuf's parser.
absl::Status CheckJsonShape(std::string_view json);

// The most bytes of an input value that an error message quotes; a longer
// one is cut, ending in "...".
inline constexpr size_t kMaxEchoedBytes = 64;

// One line of JSON (or indented over several when `pretty`).
std::string MessageToJson(const google::protobuf::Message& message,
                          bool pretty = false);

}  // namespace chunkplan::common

#endif  // CHUNKPLAN_COMMON_JSON_CODEC_H_
