#include "server/models/hf_config.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace chunkplan::models {
namespace {

using nlohmann::json;

// The value as JSON text, cut to a length a message can carry.
std::string Shown(const json* value) {
  if (value == nullptr) return "nothing";
  constexpr size_t kMaxShown = 60;
  std::string text = value->dump();
  if (text.size() > kMaxShown)
    text = absl::StrCat(text.substr(0, kMaxShown), "...");
  return text;
}

// INVALID_ARGUMENT where `text` opens more than kMaxConfigDepth arrays and
// objects at once (brackets inside strings do not count). Runs before the
// parser so that no input makes it hold a deep stack of containers.
absl::Status CheckDepth(absl::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxConfigDepth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "config: nested more than ", kMaxConfigDepth, " deep at byte ", i));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<json> ParseConfigJson(absl::string_view text) {
  if (text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: ", text.size(), " bytes, more than the ",
                     kMaxConfigBytes, " a config.json may have"));
  }
  if (absl::Status depth = CheckDepth(text); !depth.ok()) return depth;
  json parsed;
  try {
    parsed = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: not JSON: ", error.what()));
  }
  if (!parsed.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: expected a JSON object, got ", Shown(&parsed)));
  }
  return parsed;
}

absl::Status ConfigError(absl::string_view key, absl::string_view what,
                         const json* value) {
  return absl::InvalidArgumentError(
      absl::StrCat("config ", key, ": ", what, ", got ", Shown(value)));
}

absl::StatusOr<uint64_t> Product(std::initializer_list<uint64_t> factors,
                                 absl::string_view what) {
  uint64_t product = 1;
  for (uint64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) {
      return absl::InvalidArgumentError(
          absl::StrCat("config ", what, ": passes 2^64 - 1"));
    }
  }
  return product;
}

absl::StatusOr<uint64_t> Divide(uint64_t numerator, uint64_t denominator,
                                absl::string_view what) {
  if (numerator % denominator != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("config ", what, ": ", numerator, " is not divisible by ",
                     denominator));
  }
  return numerator / denominator;
}

const json* HfConfig::Find(absl::string_view key) const {
  for (const json* object : {&config_, &defaults_}) {
    auto it = object->find(std::string_view(key.data(), key.size()));
    if (it != object->end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

bool HfConfig::Has(absl::string_view key) const {
  auto it = config_.find(std::string_view(key.data(), key.size()));
  return it != config_.end() && !it->is_null();
}

absl::Status HfConfig::Refuse(absl::string_view key,
                              absl::string_view what) const {
  return ConfigError(key, what, Find(key));
}

absl::StatusOr<uint64_t> HfConfig::Count(absl::string_view key) const {
  const json* value = Find(key);
  // number_unsigned: a JSON integer >= 0 below 2^64 (beyond that the parser
  // keeps a float, and negative integers are number_integer).
  if (value == nullptr || !value->is_number_unsigned()) {
    return ConfigError(key, "expected an integer from 0 to 2^64 - 1", value);
  }
  return value->get<uint64_t>();
}

absl::StatusOr<uint64_t> HfConfig::Size(absl::string_view key) const {
  const json* value = Find(key);
  if (value == nullptr || !value->is_number_unsigned() ||
      value->get<uint64_t>() == 0) {
    return ConfigError(key, "expected a positive integer below 2^64", value);
  }
  return value->get<uint64_t>();
}

absl::StatusOr<std::optional<uint64_t>> HfConfig::OptionalSize(
    absl::string_view key) const {
  if (Find(key) == nullptr) return std::nullopt;
  absl::StatusOr<uint64_t> size = Size(key);
  if (!size.ok()) return size.status();
  return *size;
}

absl::StatusOr<bool> HfConfig::Flag(absl::string_view key) const {
  const json* value = Find(key);
  if (value == nullptr || !value->is_boolean()) {
    return ConfigError(key, "expected true or false", value);
  }
  return value->get<bool>();
}

absl::StatusOr<std::optional<std::string>> HfConfig::OptionalText(
    absl::string_view key) const {
  const json* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) return ConfigError(key, "expected a string", value);
  return value->get<std::string>();
}

absl::StatusOr<std::vector<uint64_t>> HfConfig::IndexList(
    absl::string_view key) const {
  const json* value = Find(key);
  std::vector<uint64_t> indices;
  if (value == nullptr) return indices;
  if (!value->is_array()) {
    return ConfigError(key, "expected a list of integers", value);
  }
  indices.reserve(value->size());
  for (const json& item : *value) {
    if (!item.is_number_unsigned()) {
      return ConfigError(key, "expected a list of integers >= 0", &item);
    }
    indices.push_back(item.get<uint64_t>());
  }
  return indices;
}

}  // namespace chunkplan::models
