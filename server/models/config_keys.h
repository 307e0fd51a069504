#ifndef CHUNKPLAN_SERVER_MODELS_CONFIG_KEYS_H_
#define CHUNKPLAN_SERVER_MODELS_CONFIG_KEYS_H_

// Every key of a config.json accounted for: the keys a family read, the
// keys it ignored, the ignored keys every Hugging Face config carries
// (harmless), and a warning for an ignored key that looks like a key the
// family knows (a misspelled `num_hidden_layer` silently takes the
// default of `num_hidden_layers`).

#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "server/models/model_description.h"

namespace chunkplan::models {

// Accounts for `config`'s keys (a JSON object). `read`: every key the
// family asked for (present in the config or not); `defaults`: the
// family's config-class defaults (a JSON object), whose keys with `read`
// make the keys the family knows. An ignored key warns where it is not
// itself known and is within a small edit distance of a known key (1 for
// keys under 8 characters, 2 from 8 on; transpositions count 1), or is a
// proper prefix of one and at least half its length (4 characters at
// least).
ConfigKeys AccountForKeys(const nlohmann::json& config,
                          const std::set<std::string, std::less<>>& read,
                          const nlohmann::json& defaults);

// Whether `key` looks like `known` by the rule above (false when equal).
bool LooksLike(absl::string_view key, absl::string_view known);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_CONFIG_KEYS_H_
