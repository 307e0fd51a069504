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

// Which layers are sparse, and what a sparse layer reads; experts == 0
// makes every layer dense.
struct Moe {
  uint64_t layers = 0, experts = 0, step = 1;
  uint64_t expert_inter = 0, shared_inter = 0;
  std::vector<uint64_t> dense_only;  // mlp_only_layers, sorted

  // As Qwen2MoeDecoderLayer chooses: not in mlp_only_layers, experts, and
  // (layer + 1) a multiple of decoder_sparse_step.
  bool Sparse(uint64_t layer) const {
    return experts > 0 && (layer + 1) % step == 0 &&
           !std::binary_search(dense_only.begin(), dense_only.end(), layer);
  }
  // Whether some layer is sparse: the first multiple of the step outside
  // mlp_only_layers (at most dense_only.size() + 1 tries).
  bool AnySparse() const {
    if (experts == 0) return false;
    for (uint64_t layer = step - 1; layer < layers; layer += step) {
      if (Sparse(layer)) return true;
      if (layers - layer <= step) break;  // layer + step would pass layers
    }
    return false;
  }
  // Whether some layer is dense: with a step past 1, layer 0 is.
  bool AnyDense() const {
    return experts == 0 || step > 1 ||
           (!dense_only.empty() && dense_only.front() < layers);
  }
};

// The sizes are read only where a layer needs them, as the modules do.
absl::StatusOr<Moe> ReadMoe(const HfConfig& cfg, uint64_t layers) {
  Moe moe;
  moe.layers = layers;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.dense_only, cfg.IndexList("mlp_only_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.experts, cfg.Count("num_experts"));
  if (moe.experts == 0) return moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.step, cfg.Size("decoder_sparse_step"));
  if (!moe.AnySparse()) return moe;
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

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  Decoder decoder;
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.dims,
                             ReadHeadDims(cfg, decoder.shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool qkv_bias, cfg.Flag("qkv_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(Moe moe, ReadMoe(cfg, decoder.shape.layers));
  // The dense MLP's width is read where some layer is dense; the shape
  // fact is that width, else an expert's.
  decoder.inter = moe.expert_inter;
  if (moe.AnyDense()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(decoder.inter, cfg.Size("intermediate_size"));
  }
  const uint64_t h = decoder.shape.hidden;
  // Qwen2MoeDecoderLayer: self_attn, mlp, input_layernorm,
  // post_attention_layernorm.
  auto mlp = [&](uint64_t layer) {
    if (moe.Sparse(layer)) {
      SparseBlock(b, h, moe);
    } else {
      GatedMlp(b, h, decoder.inter, /*bias=*/false);
    }
  };
  BuildDecoder(b, architecture, decoder, {.qkv_bias = qkv_bias}, mlp, d);
  return absl::OkStatus();
}

}  // namespace

// Qwen2MoeConfig's defaults (configuration_qwen2_moe.py: Qwen1.5-MoE-A2.7B's
// shape).
const Family& Qwen2MoeFamily() {
  static const Family family{"qwen2_moe",
                             {"Qwen2MoeForCausalLM", "Qwen2MoeModel"},
                             R"({
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632,
        "num_hidden_layers": 24, "num_attention_heads": 16,
        "num_key_value_heads": 16, "head_dim": null, "qkv_bias": true,
        "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632, "num_experts": 60,
        "mlp_only_layers": null, "tie_word_embeddings": false})",
                             &Build};
  return family;
}

}  // namespace chunkplan::models
