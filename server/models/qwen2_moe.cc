// Qwen2-MoE and Qwen1.5-MoE (model_type "qwen2_moe"): transformers'
// Qwen2MoeModel and Qwen2MoeForCausalLM (modeling_qwen2_moe.py) as
// transformers 4.x builds them, one module per expert: routed experts
// beside a shared expert and its gate, in the layers that mlp_only_layers
// and decoder_sparse_step make sparse; the others have a dense MLP.

#include <algorithm>
#include <vector>

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// Qwen2MoeConfig's defaults (configuration_qwen2_moe.py: Qwen1.5-MoE-A2.7B's
// shape).
const nlohmann::json& Defaults() {
  static const nlohmann::json* const defaults =
      new nlohmann::json{{"vocab_size", 151936},
                         {"hidden_size", 2048},
                         {"intermediate_size", 5632},
                         {"num_hidden_layers", 24},
                         {"num_attention_heads", 16},
                         {"num_key_value_heads", 16},
                         {"head_dim", nullptr},
                         {"qkv_bias", true},
                         {"decoder_sparse_step", 1},
                         {"moe_intermediate_size", 1408},
                         {"shared_expert_intermediate_size", 5632},
                         {"num_experts", 60},
                         {"mlp_only_layers", nullptr},
                         {"tie_word_embeddings", false}};
  return *defaults;
}

// What a sparse layer reads; experts == 0 makes every layer dense.
struct Moe {
  uint64_t experts = 0, step = 1, expert_inter = 0, shared_inter = 0;
  std::vector<uint64_t> dense_only;  // mlp_only_layers, sorted

  bool Sparse(uint64_t layer) const {
    return experts > 0 && (layer + 1) % step == 0 &&
           !std::binary_search(dense_only.begin(), dense_only.end(), layer);
  }
};

// The sizes are read only where a layer needs them, as the modules do.
absl::StatusOr<Moe> ReadMoe(const HfConfig& cfg) {
  Moe moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.dense_only, cfg.IndexList("mlp_only_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.experts, cfg.Count("num_experts"));
  if (moe.experts == 0) return moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.step, cfg.Size("decoder_sparse_step"));
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.expert_inter,
                             cfg.Size("moe_intermediate_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.shared_inter,
                             cfg.Size("shared_expert_intermediate_size"));
  return moe;
}

// Qwen2MoeSparseMoeBlock: gate, experts.<e>, shared_expert,
// shared_expert_gate.
void SparseBlock(ParamBuilder& b, uint64_t h, const Moe& moe) {
  Linear(b, "gate", h, moe.experts, /*bias=*/false);
  b.Repeat("experts", moe.experts,
           [&](uint64_t) { GatedMlp(b, h, moe.expert_inter, false); });
  b.In("shared_expert", [&] { GatedMlp(b, h, moe.shared_inter, false); });
  Linear(b, "shared_expert_gate", h, 1, /*bias=*/false);
}

absl::Status Build(const nlohmann::json& config, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  const HfConfig cfg(config, Defaults());
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(HeadDims dims, ReadHeadDims(cfg, shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool qkv_bias, cfg.Flag("qkv_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(Moe moe, ReadMoe(cfg));
  // The dense MLP's size is read where some layer is dense.
  uint64_t inter = 0;
  const bool any_dense =
      moe.experts == 0 || moe.step > 1 ||
      (!moe.dense_only.empty() && moe.dense_only[0] < shape.layers);
  if (any_dense) {
    CHUNKPLAN_ASSIGN_OR_RETURN(inter, cfg.Size("intermediate_size"));
  }
  // The shape fact: the dense MLP's width, else an expert's.
  SetDecoderFacts(shape, dims, any_dense ? inter : moe.expert_inter, d);
  // Qwen2MoeDecoderLayer: self_attn, mlp, input_layernorm,
  // post_attention_layernorm.
  CausalLm(b, architecture, shape, [&](uint64_t layer) {
    Attention(b, dims, shape.hidden, qkv_bias, /*o_bias=*/false);
    b.In("mlp", [&] {
      if (moe.Sparse(layer)) {
        SparseBlock(b, shape.hidden, moe);
      } else {
        GatedMlp(b, shape.hidden, inter, /*bias=*/false);
      }
    });
    Norms(b, shape.hidden, {"input_layernorm", "post_attention_layernorm"});
  });
  return absl::OkStatus();
}

}  // namespace

const Family& Qwen2MoeFamily() {
  static const Family family{
      "qwen2_moe", {"Qwen2MoeForCausalLM", "Qwen2MoeModel"}, &Build};
  return family;
}

}  // namespace chunkplan::models
