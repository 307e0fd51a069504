// Mistral (grouped-query attention, no biases) and Mixtral (its mixture of
// experts): transformers' *Model and *ForCausalLM (modeling_mistral.py,
// modeling_mixtral.py) as transformers 4.x builds them, one module per
// expert with w1, w2, w3.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// MistralConfig's defaults (configuration_mistral.py: Mistral-7B).
const nlohmann::json& MistralDefaults() {
  static const nlohmann::json* const defaults = new nlohmann::json{
      {"vocab_size", 32000},        {"hidden_size", 4096},
      {"intermediate_size", 14336}, {"num_hidden_layers", 32},
      {"num_attention_heads", 32},  {"num_key_value_heads", 8},
      {"head_dim", nullptr},        {"tie_word_embeddings", false}};
  return *defaults;
}

// MixtralConfig's defaults (configuration_mixtral.py: Mixtral-8x7B):
// Mistral-7B's and 8 experts.
const nlohmann::json& MixtralDefaults() {
  static const nlohmann::json* const defaults = [] {
    auto* all = new nlohmann::json(MistralDefaults());
    (*all)["num_local_experts"] = 8;
    return all;
  }();
  return *defaults;
}

// Builds either family: a MistralDecoderLayer / MixtralDecoderLayer is
// self_attn (no biases), the feed-forward part (mlp, or block_sparse_moe
// where `experts` is set), input_layernorm, post_attention_layernorm.
absl::Status BuildDecoder(const HfConfig& cfg, absl::string_view architecture,
                          bool moe, ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(HeadDims dims, ReadHeadDims(cfg, shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  uint64_t experts = 0;
  if (moe) {
    CHUNKPLAN_ASSIGN_OR_RETURN(experts, cfg.Size("num_local_experts"));
  }
  SetDecoderFacts(shape, dims, inter, d);
  const uint64_t h = shape.hidden;
  CausalLm(b, architecture, shape, [&](uint64_t) {
    Attention(b, dims, h, /*qkv_bias=*/false, /*o_bias=*/false);
    if (!moe) {
      b.In("mlp", [&] { GatedMlp(b, h, inter, /*bias=*/false); });
    } else {
      // The router `gate`, then each MixtralBlockSparseTop2MLP.
      b.In("block_sparse_moe", [&] {
        Linear(b, "gate", h, experts, /*bias=*/false);
        b.Repeat("experts", experts, [&](uint64_t) {
          Linear(b, "w1", h, inter, /*bias=*/false);
          Linear(b, "w2", inter, h, /*bias=*/false);
          Linear(b, "w3", h, inter, /*bias=*/false);
        });
      });
    }
    Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
  });
  return absl::OkStatus();
}

absl::Status BuildMistral(const nlohmann::json& config,
                          absl::string_view architecture, ParamBuilder& b,
                          ModelDescription& d) {
  return BuildDecoder(HfConfig(config, MistralDefaults()), architecture,
                      /*moe=*/false, b, d);
}

absl::Status BuildMixtral(const nlohmann::json& config,
                          absl::string_view architecture, ParamBuilder& b,
                          ModelDescription& d) {
  return BuildDecoder(HfConfig(config, MixtralDefaults()), architecture,
                      /*moe=*/true, b, d);
}

}  // namespace

const Family& MistralFamily() {
  static const Family family{
      "mistral", {"MistralForCausalLM", "MistralModel"}, &BuildMistral};
  return family;
}

const Family& MixtralFamily() {
  static const Family family{
      "mixtral", {"MixtralForCausalLM", "MixtralModel"}, &BuildMixtral};
  return family;
}

}  // namespace chunkplan::models
