#include "common/json_codec.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/util/json_util.h"

namespace chunkplan::common {
namespace {

// `key` as protobuf's JSON parser matches it to a field: the proto name
// and its lowerCamelCase json_name alike (underscores dropped, case
// ignored).
std::string FieldKey(absl::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c != '_') out += absl::ascii_tolower(static_cast<unsigned char>(c));
  }
  return out;
}

// `text` cut to kMaxEchoedBytes, ending in "..." when cut.
std::string Cut(absl::string_view text) {
  if (text.size() <= kMaxEchoedBytes) return std::string(text);
  return absl::StrCat(text.substr(0, kMaxEchoedBytes), "...");
}

// `reason` with each double-quoted run in it cut (Cut).
std::string CutQuoted(absl::string_view reason) {
  std::string out;
  while (true) {
    const size_t open = reason.find('"');
    const size_t close =
        open == reason.npos ? reason.npos : reason.find('"', open + 1);
    if (close == reason.npos) break;
    absl::StrAppend(&out, reason.substr(0, open + 1),
                    Cut(reason.substr(open + 1, close - open - 1)), "\"");
    reason.remove_prefix(close + 1);
  }
  absl::StrAppend(&out, reason);
  return out;
}

// One open object or array of the text CheckJsonShape scans.
struct Container {
  bool array;
  std::set<std::string> keys;  // objects: the keys seen (FieldKey)
};

}  // namespace

absl::Status CheckJsonShape(std::string_view json) {
  std::vector<Container> open;
  char last = 0;  // the last structural character: { [ , : or a value's end
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      const size_t start = i + 1;
      bool escaped = false;
      for (++i; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] == '\\') {
          escaped = true;
          ++i;
        }
      }
      const bool key =
          !open.empty() && !open.back().array && (last == '{' || last == ',');
      if (key) {
        const absl::string_view name(json.data() + start, i - start);
        if (escaped) {
          return absl::InvalidArgumentError(absl::StrCat(
              "key \"", Cut(name), "\" holds an escape; write the field name"));
        }
        if (!open.back().keys.insert(FieldKey(name)).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              "key \"", Cut(name), "\" appears twice in one object"));
        }
      }
      last = 'v';
    } else if (c == '[' || c == '{') {
      if (c == '[' && !open.empty() && open.back().array) {
        return absl::InvalidArgumentError(
            absl::StrCat("an array inside an array at byte ", i,
                         "; a field takes one array of values"));
      }
      open.push_back({c == '[', {}});
      last = c;
    } else if (c == ']' || c == '}') {
      if (open.empty()) return absl::OkStatus();  // protobuf says why
      open.pop_back();
      last = 'v';
    } else if (c == ',' || c == ':') {
      last = c;
    } else if (!absl::ascii_isspace(static_cast<unsigned char>(c))) {
      last = 'v';
    }
  }
  return absl::OkStatus();
}

absl::Status JsonToMessage(std::string_view json,
                           google::protobuf::Message* message) {
  message->Clear();
  if (absl::Status shape = CheckJsonShape(json); !shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("request is not valid ",
                                                   message->GetTypeName(),
                                                   " JSON: ", shape.message()));
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message,
      options);
  if (!status.ok()) {
    // The parser's first line says what is wrong; the lines after it quote
    // the input around the error, which would break a one-line message.
    const std::string reason = status.message().as_string();
    return absl::InvalidArgumentError(absl::StrCat(
        "request is not valid ", message->GetTypeName(), " JSON: ",
        CutQuoted(absl::string_view(reason).substr(0, reason.find('\n')))));
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
