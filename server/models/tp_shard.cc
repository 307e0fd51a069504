#include "server/models/tp_shard.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace chunkplan::models {
namespace {

// The rule whose module `module` ends with (at a component boundary).
const TpRule* FindRule(const TpPolicy& policy, absl::string_view module) {
  for (const TpRule& rule : policy.rules) {
    if (!absl::EndsWith(module, rule.module)) continue;
    const size_t start = module.size() - rule.module.size();
    if (start == 0 || module[start - 1] == '.') return &rule;
  }
  return nullptr;
}

absl::Status Refused(absl::string_view module, absl::string_view param,
                     absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("gemini.tp_size: ", module, ".", param, ": ", message));
}

// Linear1D_Col / Linear1D_Row.from_native_module: whole where features <
// tp, refused where tp does not divide them.
absl::StatusOr<bool> Splits(uint64_t features, absl::string_view what,
                            uint32_t tp, absl::string_view module,
                            absl::string_view param) {
  if (features < tp) return false;
  if (features % tp != 0) {
    return Refused(module, param,
                   absl::StrCat("The size of ", what, ":", features,
                                " is not integer multiples of tensor "
                                "parallel size: ",
                                tp, "!"));
  }
  return true;
}

}  // namespace

uint64_t PaddedVocab(uint64_t vocab, uint32_t tp) {
  const uint64_t multiple = kMakeVocabSizeDivisibleBy * tp;
  const uint64_t rest = vocab % multiple;
  return rest == 0 ? vocab : vocab + (multiple - rest);
}

absl::StatusOr<std::vector<uint64_t>> TpLocalDims(
    const TpPolicy& policy, uint32_t tp, absl::string_view module,
    absl::string_view param, const std::vector<uint64_t>& dims) {
  const TpRule* rule = FindRule(policy, module);
  if (rule == nullptr || dims.empty()) return dims;
  std::vector<uint64_t> local = dims;
  const bool bias = dims.size() == 1;
  switch (rule->layer) {
    case TpLayer::kColumn: {  // weight [out, in], bias [out]
      CHUNKPLAN_ASSIGN_OR_RETURN(
          bool split, Splits(dims[0], "out_features", tp, module, param));
      if (split) local[0] = dims[0] / tp;
      return local;
    }
    case TpLayer::kRow: {  // weight [out, in]; the bias stays whole
      if (bias) return local;
      CHUNKPLAN_ASSIGN_OR_RETURN(
          bool split, Splits(dims[1], "in_features", tp, module, param));
      if (split) local[1] = dims[1] / tp;
      return local;
    }
    case TpLayer::kVocab:  // rows [vocab, dim], a head's bias [vocab]
      if (dims[0] > UINT64_MAX - kMakeVocabSizeDivisibleBy * tp) {
        return Refused(module, param, "the padded vocabulary passes 2^64 - 1");
      }
      local[0] = PaddedVocab(dims[0], tp) / tp;
      return local;
    case TpLayer::kConv1DColumn: {  // weight [in, out], bias [out]
      const size_t out_dim = bias ? 0 : 1;
      const uint64_t out = dims[out_dim];
      CHUNKPLAN_ASSIGN_OR_RETURN(
          bool split, Splits(out, "out_features", tp, module, param));
      if (!split) return local;
      const uint64_t part = out / rule->fused_parts;
      if (part % tp != 0) {
        return Refused(module, param,
                       absl::StrCat("size ", part,
                                    " is not divisible by world_size ", tp));
      }
      local[out_dim] = out / tp;
      return local;
    }
    case TpLayer::kConv1DRow: {  // weight [in, out]; the bias stays whole
      if (bias) return local;
      CHUNKPLAN_ASSIGN_OR_RETURN(
          bool split, Splits(dims[0], "in_features", tp, module, param));
      if (split) local[0] = dims[0] / tp;
      return local;
    }
  }
  return local;
}

absl::Status CheckTpHeads(const TpPolicy& policy, absl::string_view family,
                          const HfConfig& cfg, uint32_t tp) {
  const auto refuse = [&](absl::string_view key, uint64_t value,
                          absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("gemini.tp_size: ", tp, ": ",
                                                   family, ": ", message, " (",
                                                   key, " = ", value, ")"));
  };
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size(policy.heads_key));
  if (heads % tp != 0) {
    return refuse(policy.heads_key, heads,
                  "The number of attention heads must be divisible by tensor "
                  "parallel size.");
  }
  if (policy.kv_heads_key.empty()) return absl::OkStatus();
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> kv_set,
                             cfg.OptionalSize(policy.kv_heads_key));
  const uint64_t kv = kv_set.value_or(heads);
  if (policy.kv_heads_at_least_tp) {
    if (kv < tp || kv % tp != 0) {
      return refuse(policy.kv_heads_key, kv,
                    "The number of key_value heads must be divisible by, and "
                    "must not be less than tensor parallel size.");
    }
  } else if (kv % tp != 0) {
    return refuse(policy.kv_heads_key, kv,
                  "The number of key_value heads must be divisible by tensor "
                  "parallel size.");
  }
  return absl::OkStatus();
}

std::vector<TpRule> FusedQkvTpRules() {
  return {{"self_attention.query_key_value", TpLayer::kColumn},
          {"self_attention.dense", TpLayer::kRow},
          {"mlp.dense_h_to_4h", TpLayer::kColumn},
          {"mlp.dense_4h_to_h", TpLayer::kRow},
          {"word_embeddings", TpLayer::kVocab},
          {"lm_head", TpLayer::kVocab}};
}

absl::Status CheckSequenceParallelism(const TpCausalLm& lm,
                                      absl::string_view family, uint32_t tp,
                                      std::optional<uint64_t> zero_x_extra_dp) {
  const std::string setting =
      absl::StrCat("gemini.enable_sequence_parallelism: model_type \"", family,
                   "\" at tp_size ", tp);
  if (!lm.sp_group_assert.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        setting,
        ": ColossalAI's attention forward asserts \"Must specify sp_size and "
        "sp_group for sequence parallel\" (shardformer/modeling/",
        lm.sp_group_assert,
        "): GeminiPlugin gives ShardConfig no "
        "sequence_parallel_process_group, so the first forward fails; turn "
        "enable_sequence_parallelism off"));
  }
  if (lm.sp_gathers_over_world && zero_x_extra_dp.has_value() &&
      *zero_x_extra_dp > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        setting, " with zero x extra_dp ", *zero_x_extra_dp,
        ": gpt2_model_forward splits the sequence over the tp group but "
        "gather_sp_output gathers it over sequence_parallel_process_group, "
        "which GeminiPlugin leaves None (the whole world), so "
        "dist_cross_entropy asserts \"label shape ... does not match logit "
        "shape ...\" (shardformer/layer/loss.py:324); it runs only where "
        "zero x extra_dp is 1 (the world is the tp group)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> TpIgnored(const TpPolicy& policy, const HfConfig& cfg) {
  if (policy.tp_ignored_when.empty()) return false;
  for (const TpFlag& flag : policy.tp_ignored_when) {
    CHUNKPLAN_ASSIGN_OR_RETURN(bool value, cfg.Flag(flag.key));
    if (value != flag.value) return false;
  }
  return true;
}

}  // namespace chunkplan::models
