#ifndef CHUNKPLAN_SERVER_MODELS_HF_CONFIG_H_
#define CHUNKPLAN_SERVER_MODELS_HF_CONFIG_H_

// Reading a Hugging Face config.json: the text, bounded, parsed into a DOM
// (nlohmann-json: exact unsigned 64-bit integers apart from negative and
// fractional numbers, so that every type is checked; packaged by Debian;
// protobuf's JSON utilities need a schema, and a config.json has none), and
// typed values with the config class's defaults for the keys it leaves out.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace chunkplan::models {

// The most text, and the deepest nesting, a config may have: a config.json
// is a few KB, nested 3 or 4 deep.
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;
inline constexpr int kMaxConfigDepth = 64;

// Parses `text` into a JSON object. INVALID_ARGUMENT for text over
// kMaxConfigBytes or nested deeper than kMaxConfigDepth (both checked before
// parsing), for text that is not JSON (with the parser's position), and for
// JSON that is not an object.
absl::StatusOr<nlohmann::json> ParseConfigJson(absl::string_view text);

// Typed access to a parsed config. A key the config leaves out takes its
// value from `defaults` (a JSON object: the transformers config class's
// defaults, null where the class defaults to None); a key set to null is
// None, as the config class takes it: an optional value is then unset, any
// other refuses it. Every accessor answers INVALID_ARGUMENT naming the key
// and the value found where the value has the wrong type or range. Both
// objects must outlive this view.
class HfConfig {
 public:
  HfConfig(const nlohmann::json& config, const nlohmann::json& defaults)
      : config_(config), defaults_(defaults) {}

  // A positive integer below 2^64: a dimension or a count.
  absl::StatusOr<uint64_t> Size(absl::string_view key) const;
  // A positive integer, or nullopt where config and defaults leave it unset.
  absl::StatusOr<std::optional<uint64_t>> OptionalSize(
      absl::string_view key) const;
  // An integer >= 0.
  absl::StatusOr<uint64_t> Count(absl::string_view key) const;
  absl::StatusOr<bool> Flag(absl::string_view key) const;
  // Whether a probability (a number in [0, 1]; unset: 0) is not 0.
  absl::StatusOr<bool> NonZeroProbability(absl::string_view key) const;
  // A fraction: a number in [0, 1] (unset: 0).
  absl::StatusOr<double> Fraction(absl::string_view key) const;
  // A number, integer or not ("expected a number" otherwise), or
  // `fallback` where config and defaults leave it unset.
  absl::StatusOr<double> Number(absl::string_view key, double fallback) const;
  // Whether a number or null ("expected a number or null" otherwise) is a
  // number; `absent` where config and defaults leave the key out (a config
  // class whose default is a number, e.g. Gemma-2's soft-capping).
  absl::StatusOr<bool> NumberNotNull(absl::string_view key, bool absent) const;
  // A string, or nullopt where config and defaults leave it unset.
  absl::StatusOr<std::optional<std::string>> OptionalText(
      absl::string_view key) const;
  // Whether the config (or, where it leaves the key out, the defaults) gives
  // `key` a value other than null.
  bool Has(absl::string_view key) const;
  // A list of integers (null: empty), sorted; negative ones, which match
  // no layer index, left out.
  absl::StatusOr<std::vector<uint64_t>> IndexList(absl::string_view key) const;
  // INVALID_ARGUMENT "config <key>: <what>, got <the key's value>".
  absl::Status Refuse(absl::string_view key, absl::string_view what) const;

  // Every key asked for through this view so far (whether the config has
  // it or not): what the family read.
  const std::set<std::string, std::less<>>& keys_read() const {
    return keys_read_;
  }

 private:
  // The config's value of `key` if it has the key, else the default's;
  // nullptr when neither has it. Null values are returned as they are.
  const nlohmann::json* Find(absl::string_view key) const;

  const nlohmann::json& config_;
  const nlohmann::json& defaults_;
  mutable std::set<std::string, std::less<>> keys_read_;
};

// tie_word_embeddings for a class with an output head (`has_head`); a
// class without one (a base model) has nothing to tie and never reads the
// key, which is then ignored: true. Errors: HfConfig::Flag's.
absl::StatusOr<bool> OutputTied(const HfConfig& cfg, bool has_head);

// INVALID_ARGUMENT "config <key>: <what>, got <value>", the value shown
// short (a hostile string may be long).
absl::Status ConfigError(absl::string_view key, absl::string_view what,
                         const nlohmann::json* value);

// The product of `factors`; INVALID_ARGUMENT naming `what` where it passes
// 2^64 - 1.
absl::StatusOr<uint64_t> Product(std::initializer_list<uint64_t> factors,
                                 absl::string_view what);

// numerator / denominator; INVALID_ARGUMENT naming `what` where it does not
// divide evenly (as transformers' constructors refuse).
absl::StatusOr<uint64_t> Divide(uint64_t numerator, uint64_t denominator,
                                absl::string_view what);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_HF_CONFIG_H_
