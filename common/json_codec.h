#ifndef CHUNKPLAN_COMMON_JSON_CODEC_H_
#define CHUNKPLAN_COMMON_JSON_CODEC_H_

// protobuf's JSON mapping for chunkplan.v1 messages, as the CLI, the tests
// and any protobuf-JSON tool speak it: field names as in the .proto
// (preserve_proto_field_names), every field printed (always_print_primitive_
// fields), 64-bit integers as strings.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace chunkplan::common {

// Parses `json` into `message` (cleared first). Unknown fields are an error.
// Errors: INVALID_ARGUMENT with the first line of protobuf's parser message.
absl::Status JsonToMessage(std::string_view json,
                           google::protobuf::Message* message);

// One line of JSON (or indented over several when `pretty`).
std::string MessageToJson(const google::protobuf::Message& message,
                          bool pretty = false);

}  // namespace chunkplan::common

#endif  // CHUNKPLAN_COMMON_JSON_CODEC_H_
