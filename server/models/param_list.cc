#include "server/models/param_list.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace chunkplan::models {
namespace {

using nlohmann::json;

constexpr char kField[] = "param_list_json: ";

// `value` as an integer from 0 to 2^64 - 1, or nullopt.
std::optional<uint64_t> Unsigned(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  return std::nullopt;
}

// The numel of one entry: {"name", "numel"} or [name, shape]; the name in
// `*name`, "requires_grad": false in `*frozen`. An error's words, without
// the field and index, in `*why`.
std::optional<uint64_t> Entry(const json& entry, std::string* name,
                              bool* frozen, std::string* why) {
  if (entry.is_object()) {
    auto n = entry.find("name");
    auto k = entry.find("numel");
    if (n == entry.end() || k == entry.end()) {
      *why = "an object needs \"name\" and \"numel\"";
      return std::nullopt;
    }
    if (!n->is_string()) {
      *why = "\"name\" is not a string";
      return std::nullopt;
    }
    *name = n->get<std::string>();
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

absl::StatusOr<ModelDescription> DescribeParamList(std::string_view text,
                                                   uint64_t max_params) {
  json list;
  try {
    list = json::parse(text.begin(), text.end());
  } catch (const json::exception& error) {
    // A syntax error or a number beyond a double: the parser's words.
    return absl::InvalidArgumentError(
        absl::StrCat(kField, "not a JSON list: ", error.what()));
  }
  if (!list.is_array() || list.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField, "expected a non-empty JSON list of parameters"));
  }
  if (list.size() > max_params) {
    return absl::ResourceExhaustedError(absl::StrCat(
        kField, "the list has ", list.size(), " parameters; more than ",
        max_params, ", the most a request may have (--max_params)"));
  }
  ModelDescription d;
  d.param_list = true;
  d.names.reserve(list.size());
  d.numels.reserve(list.size());
  std::vector<bool> frozen(list.size(), false);
  bool any_frozen = false;
  uint64_t trainable = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string name, why;
    bool is_frozen = false;
    std::optional<uint64_t> numel = Entry(list[i], &name, &is_frozen, &why);
    if (!numel) {
      return absl::InvalidArgumentError(
          absl::StrCat(kField, "entry ", i, ": ", why));
    }
    if (__builtin_add_overflow(d.total, *numel, &d.total)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, "entry ", i, ": the total passes 2^64 - 1 elements"));
    }
    if (!is_frozen) trainable += *numel;  // within d.total
    d.names.push_back(std::move(name));
    d.numels.push_back(*numel);
    frozen[i] = is_frozen;
    any_frozen = any_frozen || is_frozen;
  }
  if (any_frozen) d.frozen = std::move(frozen);
  d.trainable = trainable;
  return d;
}

}  // namespace chunkplan::models
