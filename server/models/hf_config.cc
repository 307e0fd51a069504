#include "server/models/hf_config.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chunkplan::models {
namespace {

using absl::StrCat;
using nlohmann::json;

// `text` cut to its first `max` bytes and "..." where it is longer.
std::string CutShort(std::string text, size_t max) {
  if (text.size() > max) text = StrCat(text.substr(0, max), "...");
  return text;
}

// The value as JSON text, cut to a length a message can carry.
std::string Shown(const json* value) {
  if (value == nullptr) return "nothing";
  constexpr size_t kMaxShown = 60;
  return CutShort(value->dump(), kMaxShown);
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

// The value as an integer from 0 to 2^64 - 1: a JSON integer, which the
// parser keeps as unsigned where it is >= 0 (the defaults' literals are
// signed). Beyond 2^64 the parser keeps a float, which is refused.
std::optional<uint64_t> NonNegative(const json* value) {
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  if (value->is_number_unsigned()) return value->get<uint64_t>();
  const int64_t signed_value = value->get<int64_t>();
  if (signed_value < 0) return std::nullopt;
  return static_cast<uint64_t>(signed_value);
}

// The object keys that lead to where the parser is, kept up to date from
// its callback, so that an error names the key whose value it was reading
// ("rope_scaling.factor"); arrays add no name of their own.
class KeyPath {
 public:
  void Visit(json::parse_event_t event, const json& value) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        keys_.emplace_back();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!keys_.empty()) keys_.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys_.empty() && value.is_string()) {
          keys_.back() = value.get<std::string>();
        }
        break;
      case json::parse_event_t::value:
        break;
    }
  }

  // "a.b" for the keys open now; empty at the top level.
  std::string Name() const {
    std::string name;
    for (const std::string& key : keys_) {
      if (key.empty()) continue;
      if (!name.empty()) name += '.';
      name += key;
    }
    return name;
  }

 private:
  std::vector<std::string> keys_;  // one per open container, "" for none
};

// At most this many bytes of the parser's own words, which quote the text
// it stopped at (a number of 500,000 digits, say).
constexpr size_t kMaxParserWords = 200;

// nlohmann's out_of_range error for a number the parser read but a double
// cannot hold (1e400, or an integer of hundreds of digits).
constexpr int kNumberOverflow = 406;

// INVALID_ARGUMENT for the parser's `error` at `path`: a number beyond a
// double names the key it is the value of (or sits in a list of); anything
// else is "config: not JSON" with the parser's words (which give the
// position), cut short.
absl::Status ParseFailure(const KeyPath& path, const json::exception& error) {
  if (dynamic_cast<const json::out_of_range*>(&error) != nullptr &&
      error.id == kNumberOverflow) {
    // A fuzzed key may run to thousands of bytes.
    const std::string key = CutShort(path.Name(), kMaxParserWords);
    return absl::InvalidArgumentError(
        StrCat(key.empty() ? "config" : StrCat("config ", key),
               ": a number beyond the range of a double (about 1.8e308)"));
  }
  return absl::InvalidArgumentError(
      StrCat("config: not JSON: ", CutShort(error.what(), kMaxParserWords)));
}

// A value that is absent or null.
bool Unset(const json* value) { return value == nullptr || value->is_null(); }

}  // namespace

absl::StatusOr<json> ParseConfigJson(absl::string_view text) {
  if (text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: ", text.size(), " bytes, more than the ",
                     kMaxConfigBytes, " a config.json may have"));
  }
  if (absl::Status depth = CheckDepth(text); !depth.ok()) return depth;
  json parsed;
  KeyPath path;
  try {
    parsed = json::parse(text.begin(), text.end(),
                         [&path](int, json::parse_event_t event, json& value) {
                           path.Visit(event, value);
                           return true;
                         });
  } catch (const json::exception& error) {
    // Every error the parser raises (a syntax error, a number beyond a
    // double, ...) ends here: none may leave the server's JSON edge.
    return ParseFailure(path, error);
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

absl::StatusOr<bool> OutputTied(const HfConfig& cfg, bool has_head) {
  if (!has_head) return true;
  return cfg.Flag("tie_word_embeddings");
}

const json* HfConfig::Find(absl::string_view key) const {
  const std::string_view name(key.data(), key.size());
  if (keys_read_.find(name) == keys_read_.end()) keys_read_.emplace(name);
  if (auto it = config_.find(name); it != config_.end()) return &*it;
  if (auto it = defaults_.find(name); it != defaults_.end()) return &*it;
  return nullptr;
}

absl::Status HfConfig::Refuse(absl::string_view key,
                              absl::string_view what) const {
  return ConfigError(key, what, Find(key));
}

absl::StatusOr<uint64_t> HfConfig::Count(absl::string_view key) const {
  const json* value = Find(key);
  std::optional<uint64_t> count = NonNegative(value);
  if (!count) {
    return ConfigError(key, "expected an integer from 0 to 2^64 - 1", value);
  }
  return *count;
}

absl::StatusOr<uint64_t> HfConfig::Size(absl::string_view key) const {
  const json* value = Find(key);
  std::optional<uint64_t> size = NonNegative(value);
  if (!size || *size == 0) {
    return ConfigError(key, "expected a positive integer below 2^64", value);
  }
  return *size;
}

absl::StatusOr<std::optional<uint64_t>> HfConfig::OptionalSize(
    absl::string_view key) const {
  if (Unset(Find(key))) return std::nullopt;
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

absl::StatusOr<bool> HfConfig::NonZeroProbability(absl::string_view key) const {
  absl::StatusOr<double> p = Fraction(key);
  if (!p.ok()) return p.status();
  return *p != 0.0;
}

absl::StatusOr<double> HfConfig::Fraction(absl::string_view key) const {
  const json* value = Find(key);
  if (Unset(value)) return 0.0;
  if (!value->is_number() || !(value->get<double>() >= 0.0) ||
      value->get<double>() > 1.0) {
    return ConfigError(key, "expected a probability in [0, 1]", value);
  }
  return value->get<double>();
}

absl::StatusOr<double> HfConfig::Number(absl::string_view key,
                                        double fallback) const {
  const json* value = Find(key);
  if (Unset(value)) return fallback;
  if (!value->is_number()) return ConfigError(key, "expected a number", value);
  return value->get<double>();
}

absl::StatusOr<bool> HfConfig::NumberNotNull(absl::string_view key,
                                             bool absent) const {
  const json* value = Find(key);
  if (value == nullptr) return absent;
  if (value->is_null()) return false;
  if (!value->is_number()) {
    return ConfigError(key, "expected a number or null", value);
  }
  return true;
}

absl::StatusOr<std::optional<std::string>> HfConfig::OptionalText(
    absl::string_view key) const {
  const json* value = Find(key);
  if (Unset(value)) return std::nullopt;
  if (!value->is_string()) return ConfigError(key, "expected a string", value);
  return value->get<std::string>();
}

bool HfConfig::Has(absl::string_view key) const { return !Unset(Find(key)); }

absl::StatusOr<std::vector<uint64_t>> HfConfig::IndexList(
    absl::string_view key) const {
  const json* value = Find(key);
  std::vector<uint64_t> indices;
  if (Unset(value)) return indices;
  if (!value->is_array()) {
    return ConfigError(key, "expected a list of integers", value);
  }
  for (const json& item : *value) {
    if (!item.is_number_integer()) {
      return ConfigError(key, "expected a list of integers", &item);
    }
    if (std::optional<uint64_t> index = NonNegative(&item)) {
      indices.push_back(*index);
    }
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

}  // namespace chunkplan::models
