#include "common/json_codec.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace chunkplan::common {

absl::Status JsonToMessage(std::string_view json,
                           google::protobuf::Message* message) {
  message->Clear();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message,
      options);
  if (!status.ok()) {
    // The parser's first line says what is wrong; the lines after it quote
    // the input around the error, which would break a one-line message.
    const std::string reason = status.message().as_string();
    return absl::InvalidArgumentError(
        absl::StrCat("request is not valid ", message->GetTypeName(),
                     " JSON: ", reason.substr(0, reason.find('\n'))));
  }
  return absl::OkStatus();
}

std::string MessageToJson(const google::protobuf::Message& message,
                          bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = pretty;
  std::string out;
  // Printing a valid message cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace chunkplan::common
