// Mistral (grouped-query attention, no biases) and Mixtral (its mixture of
// experts): transformers' *Model and *ForCausalLM (modeling_mistral.py,
// modeling_mixtral.py) as transformers 4.x builds them, one module per
// expert with w1, w2, w3.

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"
#include "server/models/moe_layer.h"

namespace chunkplan::models {
namespace {

// MistralDecoderLayer: self_attn, mlp, input_layernorm,
// post_attention_layernorm; forward in LLaMA's order (kLlamaLayerOps).
absl::Status BuildMistral(const HfConfig& cfg, absl::string_view architecture,
                          ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_RETURN_IF_ERROR(BuildGatedDecoder(cfg, architecture,
                                              {.forward_ops = kLlamaLayerOps},
                                              /*mlp_bias=*/false, b, d));
  ModelLlamaLayer(cfg, "silu", d);
  return absl::OkStatus();
}

// MixtralDecoderLayer: self_attn, block_sparse_moe (the router `gate`, then
// each expert's w1, w2, w3), input_layernorm, post_attention_layernorm.
// Forward: LLaMA's attention, then MixtralSparseMoeBlock.forward (4.51.3):
// gate, then every expert in turn (range(num_experts): one no token chose
// runs on an empty batch), act(w1(x)) * w3(x), then w2.
absl::Status BuildMixtral(const HfConfig& cfg, absl::string_view architecture,
                          ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(Decoder decoder, ReadDecoder(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t experts, cfg.Size("num_local_experts"));
  const uint64_t h = decoder.shape.hidden, inter = decoder.inter;
  auto moe = [&](uint64_t) {
    Linear(b, "gate", h, experts, /*bias=*/false);
    b.Repeat("experts", experts, [&](uint64_t) {
      Linear(b, "w1", h, inter, /*bias=*/false);
      Linear(b, "w2", inter, h, /*bias=*/false);
      Linear(b, "w3", h, inter, /*bias=*/false);
    });
  };
  auto moe_ops = [&](uint64_t) {
    b.Op({"block_sparse_moe.gate"});
    // Stops once the builder has refused (more experts than --max_params).
    for (uint64_t e = 0; e < experts && b.status().ok(); ++e) {
      const std::string expert = absl::StrCat("block_sparse_moe.experts.", e);
      for (const char* w : {".w1", ".w3", ".w2"}) {
        b.Op({absl::StrCat(expert, w)});
      }
    }
  };
  BuildDecoder(b, architecture, decoder,
               {.feed_forward = "block_sparse_moe",
                .forward_ops = kLlamaAttentionOps,
                .feed_forward_ops = moe_ops},
               moe, d);
  ModelLlamaLayer(cfg, "silu", d);
  if (b.status().ok()) {
    ModelSparseBlock(cfg,
                     {.layers = decoder.shape.layers,
                      .experts = experts,
                      .expert_inter = inter,
                      .always_norm_topk = true,
                      .jitter = true},
                     d);
  }
  return absl::OkStatus();
}

}  // namespace

// MistralConfig's defaults (configuration_mistral.py: Mistral-7B).
const Family& MistralFamily() {
  // ColossalAI's MistralPolicy (shardformer/policies/mistral.py).
  static const TpPolicy tp{
      .file = "mistral",
      .rules = DecoderTpRules(TpLayer::kVocab),
      .kv_heads_key = "num_key_value_heads",
      .ignores_sp =
          "Mistral doesn't support sequence parallelism now, will "
          "ignore the sequence parallelism flag.",
      // get_lm_forward_with_dist_cross_entropy (modeling/mistral.py):
      // logits.float(), the model's dtype for the loss.
      .causal_lm = {.modelled = true, .logits_fp32 = true}};
  static const Family family{"mistral",
                             {"MistralForCausalLM", "MistralModel"},
                             R"({
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": null,
        "tie_word_embeddings": false})",
                             &BuildMistral,
                             &tp};
  return family;
}

// MixtralConfig's defaults (configuration_mixtral.py: Mixtral-8x7B).
const Family& MixtralFamily() {
  // ColossalAI's MixtralPolicy (shardformer/policies/mixtral.py) without
  // an ep_group (GeminiPlugin makes none): the router is Linear1D_Col, the
  // experts stay whole, lm_head is a plain Linear1D_Col.
  static const TpPolicy tp{
      .file = "mixtral",
      .rules = {{"self_attn.q_proj", TpLayer::kColumn},
                {"self_attn.k_proj", TpLayer::kColumn},
                {"self_attn.v_proj", TpLayer::kColumn},
                {"self_attn.o_proj", TpLayer::kRow},
                {"block_sparse_moe.gate", TpLayer::kColumn},
                {"embed_tokens", TpLayer::kVocab},
                {"lm_head", TpLayer::kColumn}},
      .kv_heads_key = "num_key_value_heads",
      // No forward replaced: MixtralForCausalLM.forward on lm_head's and
      // the router's gathered outputs (gather_output=True), its own loss.
      .causal_lm = {.modelled = true,
                    .gathered_head = true,
                    .sp_group_assert = "mixtral.py:592-594"}};
  static const Family family{"mixtral",
                             {"MixtralForCausalLM", "MixtralModel"},
                             R"({
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": null, "num_local_experts": 8,
        "num_experts_per_tok": 2, "output_router_logits": false,
        "router_jitter_noise": 0.0, "tie_word_embeddings": false})",
                             &BuildMixtral,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
