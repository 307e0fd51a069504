#include "server/models/config_keys.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace chunkplan::models {
namespace {

using nlohmann::json;

// PretrainedConfig's own keys (configuration_utils.py: generation
// settings, labels, token ids, bookkeeping) and the hyperparameters that no
// family's parameters depend on: every config carries some of them, and
// ignoring them changes no count. Sorted.
constexpr std::string_view kHarmless[] = {
    "_attn_implementation",
    "_commit_hash",
    "_name_or_path",
    "add_cross_attention",
    "architectures",
    "attention_dropout",
    "attention_probs_dropout_prob",
    "attn_pdrop",
    "auto_map",
    "bad_words_ids",
    "begin_suppress_tokens",
    "bos_token_id",
    "chunk_size_feed_forward",
    "cross_attention_hidden_size",
    "decoder_start_token_id",
    "diversity_penalty",
    "do_sample",
    "early_stopping",
    "embd_pdrop",
    "encoder_no_repeat_ngram_size",
    "eos_token_id",
    "exponential_decay_length_penalty",
    "finetuning_task",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "hidden_act",
    "hidden_dropout",
    "hidden_dropout_prob",
    "id2label",
    "initializer_range",
    "is_decoder",
    "is_encoder_decoder",
    "label2id",
    "layer_norm_eps",
    "layer_norm_epsilon",
    "length_penalty",
    "max_length",
    "min_length",
    "model_type",
    "no_repeat_ngram_size",
    "num_beam_groups",
    "num_beams",
    "num_labels",
    "num_return_sequences",
    "output_attentions",
    "output_hidden_states",
    "output_scores",
    "pad_token_id",
    "prefix",
    "problem_type",
    "pruned_heads",
    "quantization_config",
    "remove_invalid_values",
    "repetition_penalty",
    "resid_pdrop",
    "return_dict",
    "return_dict_in_generate",
    "rms_norm_eps",
    "rope_scaling",
    "rope_theta",
    "sep_token_id",
    "suppress_tokens",
    "task_specific_params",
    "temperature",
    "tf_legacy_loss",
    "tie_encoder_decoder",
    "tokenizer_class",
    "top_k",
    "top_p",
    "torch_dtype",
    "torchscript",
    "transformers_version",
    "typical_p",
    "use_bfloat16",
    "use_cache",
};

bool Harmless(std::string_view key) {
  return std::binary_search(std::begin(kHarmless), std::end(kHarmless), key);
}

// The optimal-string-alignment distance (Levenshtein with adjacent
// transpositions), or `limit` + 1 once it is known to pass `limit`.
size_t Distance(absl::string_view a, absl::string_view b, size_t limit) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  std::vector<size_t> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    current[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min(
          {previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[m];
}

// The default a known key took, as JSON text, or "" when it has none.
std::string DefaultText(const json& defaults, const std::string& known) {
  auto it = defaults.find(known);
  if (it == defaults.end()) return "";
  std::string text = it->dump();
  if (text.size() > 40) text = absl::StrCat(text.substr(0, 40), "...");
  return text;
}

}  // namespace

bool LooksLike(absl::string_view key, absl::string_view known) {
  if (key == known) return false;
  const size_t limit = known.size() < 8 ? 1 : 2;
  if (Distance(key, known, limit) <= limit) return true;
  return key.size() >= 4 && 2 * key.size() >= known.size() &&
         key.size() < known.size() && known.substr(0, key.size()) == key;
}

ConfigKeys AccountForKeys(const json& config,
                          const std::set<std::string, std::less<>>& read,
                          const json& defaults) {
  std::set<std::string, std::less<>> known = read;
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    known.insert(it.key());
  }
  ConfigKeys keys;
  // nlohmann's object keeps its keys sorted: the lists come out sorted.
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string& key = it.key();
    if (read.count(key) != 0) {
      keys.read.push_back(key);
      continue;
    }
    if (Harmless(key)) {
      keys.harmless.push_back(key);
      continue;
    }
    keys.ignored.push_back(key);
    if (known.count(key) != 0) continue;  // known, not needed here
    std::vector<std::string> alike;
    for (const std::string& candidate : known) {
      if (LooksLike(key, candidate)) alike.push_back(candidate);
    }
    if (alike.empty()) continue;
    std::string warning =
        absl::StrCat("config key \"", key, "\" was ignored; did you mean \"",
                     absl::StrJoin(alike, "\" or \""), "\"?");
    if (alike.size() == 1 && config.find(alike[0]) == config.end()) {
      const std::string taken = DefaultText(defaults, alike[0]);
      if (!taken.empty()) {
        absl::StrAppend(&warning, " (\"", alike[0], "\" took its default, ",
                        taken, ")");
      }
    }
    keys.warnings.push_back(std::move(warning));
  }
  return keys;
}

}  // namespace chunkplan::models
