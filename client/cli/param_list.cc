#include "client/cli/param_list.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/request_file.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace chunkplan::cli {
namespace {

using nlohmann::json;

// `value` as an integer from 0 to 2^64 - 1, or nullopt.
std::optional<uint64_t> Unsigned(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  return std::nullopt;
}

// The numel of one entry: {"name", "numel"} or [name, shape]; the name in
// `*name`. An error's words, without the source and index, in `*why`.
std::optional<uint64_t> Entry(const json& entry, std::string* name,
                              bool* frozen, std::string* why) {
  const json* name_value = nullptr;
  if (entry.is_object()) {
    auto n = entry.find("name");
    auto k = entry.find("numel");
    if (n == entry.end() || k == entry.end()) {
      *why = "an object needs \"name\" and \"numel\"";
      return std::nullopt;
    }
    name_value = &*n;
    if (!name_value->is_string()) {
      *why = "\"name\" is not a string";
      return std::nullopt;
    }
    *name = name_value->get<std::string>();
    if (auto g = entry.find("requires_grad"); g != entry.end()) {
      if (!g->is_boolean()) {
        *why = "\"requires_grad\" is not true or false";
        return std::nullopt;
      }
      *frozen = !g->get<bool>();
    }
    std::optional<uint64_t> numel = Unsigned(*k);
    if (!numel) *why = "\"numel\" is not an integer from 0 to 2^64 - 1";
    return numel;
  }
  if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() ||
      !entry[1].is_array()) {
    *why = "expected {\"name\": NAME, \"numel\": N} or [NAME, SHAPE]";
    return std::nullopt;
  }
  *name = entry[0].get<std::string>();
  uint64_t numel = 1;
  for (const json& size : entry[1]) {
    std::optional<uint64_t> s = Unsigned(size);
    if (!s) {
      *why = "a size of the shape is not an integer from 0 to 2^64 - 1";
      return std::nullopt;
    }
    if (__builtin_mul_overflow(numel, *s, &numel)) {
      *why = "the shape's product passes 2^64 - 1";
      return std::nullopt;
    }
  }
  return numel;
}

}  // namespace

absl::StatusOr<ParamList> ParseParamList(absl::string_view text,
                                         absl::string_view source) {
  json list;
  try {
    list = json::parse(text.begin(), text.end());
  } catch (const json::exception& error) {
    // A syntax error or a number beyond a double: the parser's words.
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a JSON list: ", error.what()));
  }
  if (!list.is_array() || list.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": expected a non-empty JSON list of parameters"));
  }
  ParamList out;
  out.names.reserve(list.size());
  out.numels.reserve(list.size());
  std::vector<bool> frozen(list.size(), false);
  bool any_frozen = false;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string name, why;
    bool is_frozen = false;
    std::optional<uint64_t> numel = Entry(list[i], &name, &is_frozen, &why);
    if (!numel) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": entry ", i, ": ", why));
    }
    out.names.push_back(std::move(name));
    out.numels.push_back(*numel);
    frozen[i] = is_frozen;
    any_frozen = any_frozen || is_frozen;
  }
  if (any_frozen) out.frozen = std::move(frozen);
  return out;
}

absl::StatusOr<ParamList> ReadParamList(const std::string& path) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const std::string text, common::ReadInput(path));
  return ParseParamList(text, path);
}

}  // namespace chunkplan::cli
