// Qwen2-MoE and Qwen1.5-MoE (model_type "qwen2_moe") and Qwen3-MoE
// ("qwen3_moe"): transformers' Qwen2MoeModel / Qwen2MoeForCausalLM
// (modeling_qwen2_moe.py) and Qwen3MoeModel / Qwen3MoeForCausalLM
// (modeling_qwen3_moe.py, 4.51.3) as transformers 4.x builds them, one
// module per expert: routed experts (beside a shared expert and its gate in
// Qwen2-MoE) in the layers that mlp_only_layers and decoder_sparse_step make
// sparse; the others have a dense MLP. Qwen3-MoE's attention is Qwen3's.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"
#include "server/models/moe_layer.h"

namespace chunkplan::models {
namespace {

// Which layers are sparse, and what a sparse layer reads; experts == 0
// makes every layer dense.
struct Moe {
  bool shared = true;  // Qwen2-MoE's shared expert (Qwen3-MoE has none)
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

// The sizes are read only where a layer needs them, as the modules do;
// shared_expert_intermediate_size only where there is a shared expert.
absl::StatusOr<Moe> ReadMoe(const HfConfig& cfg, uint64_t layers, bool shared) {
  Moe moe;
  moe.shared = shared;
  moe.layers = layers;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.dense_only, cfg.IndexList("mlp_only_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.experts, cfg.Count("num_experts"));
  if (moe.experts == 0) return moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.step, cfg.Size("decoder_sparse_step"));
  if (!moe.AnySparse()) return moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.expert_inter,
                             cfg.Size("moe_intermediate_size"));
  if (!shared) return moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.shared_inter,
                             cfg.Size("shared_expert_intermediate_size"));
  return moe;
}

// Qwen2MoeSparseMoeBlock: gate, experts.<e>, shared_expert,
// shared_expert_gate; Qwen3MoeSparseMoeBlock: gate, experts.<e>.
void SparseBlock(ParamBuilder& b, uint64_t h, const Moe& moe) {
  Linear(b, "gate", h, moe.experts, /*bias=*/false);
  b.Repeat("experts", moe.experts,
           [&](uint64_t) { GatedMlp(b, h, moe.expert_inter, false); });
  if (!moe.shared) return;
  b.In("shared_expert", [&] { GatedMlp(b, h, moe.shared_inter, false); });
  Linear(b, "shared_expert_gate", h, 1, /*bias=*/false);
}

// Layer `layer`'s MLP operations in forward order: a dense layer's
// gate_proj, up_proj, down_proj; a sparse block's (4.51.3) gate, then every
// expert in turn (range(num_experts): one no token chose runs on an empty
// batch), its gate_proj, up_proj, down_proj, then Qwen2-MoE's
// shared_expert and shared_expert_gate
// (sigmoid(shared_expert_gate(x)) * shared_expert(x), the expert first).
void MlpOps(ParamBuilder& b, const Moe& moe, uint64_t layer) {
  if (!moe.Sparse(layer)) return GatedMlpOps(b, "mlp");
  RouterAndExpertOps(b, moe.experts);
  if (!moe.shared) return;
  GatedMlpOps(b, "mlp.shared_expert");
  b.Op({"mlp.shared_expert_gate"});
}

// Either family, its attention in `style`: a layer is self_attn, mlp
// (sparse or dense), input_layernorm, post_attention_layernorm.
absl::Status BuildMoe(const HfConfig& cfg, absl::string_view architecture,
                      const LayerStyle& style, bool shared, ParamBuilder& b,
                      ModelDescription& d) {
  Decoder decoder;
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.shape,
                             ReadDecoderShape(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.dims,
                             ReadHeadDims(cfg, decoder.shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(Moe moe,
                             ReadMoe(cfg, decoder.shape.layers, shared));
  // The dense MLP's width is read where some layer is dense; the shape
  // fact is that width, else an expert's.
  decoder.inter = moe.expert_inter;
  if (moe.AnyDense()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(decoder.inter, cfg.Size("intermediate_size"));
  }
  const uint64_t h = decoder.shape.hidden;
  auto mlp = [&](uint64_t layer) {
    if (moe.Sparse(layer)) {
      SparseBlock(b, h, moe);
    } else {
      GatedMlp(b, h, decoder.inter, /*bias=*/false);
    }
  };
  LayerStyle with_ops = style;
  with_ops.feed_forward_ops = [&](uint64_t layer) { MlpOps(b, moe, layer); };
  BuildDecoder(b, architecture, decoder, with_ops, mlp, d);
  ModelLlamaLayer(cfg, "silu", d);
  if (!b.status().ok()) return absl::OkStatus();
  uint64_t sparse_layers = 0;
  for (uint64_t layer = 0; layer < moe.layers; ++layer) {
    sparse_layers += moe.Sparse(layer) ? 1 : 0;
  }
  ModelSparseBlock(cfg,
                   {.layers = sparse_layers,
                    .experts = moe.experts,
                    .expert_inter = moe.expert_inter,
                    .shared_inter = moe.shared ? moe.shared_inter : 0},
                   d);
  return absl::OkStatus();
}

// Qwen2MoeAttention: biases on q, k and v where qkv_bias.
absl::Status BuildQwen2Moe(const HfConfig& cfg, absl::string_view architecture,
                           ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(bool qkv_bias, cfg.Flag("qkv_bias"));
  return BuildMoe(cfg, architecture,
                  {.qkv_bias = qkv_bias, .forward_ops = kLlamaAttentionOps},
                  /*shared=*/true, b, d);
}

// Qwen3MoeDecoderLayer.forward up to the MLP: input_layernorm, then
// Qwen3MoeAttention's q_norm(q_proj(x)), k_norm(k_proj(x)), v_proj(x),
// o_proj, then post_attention_layernorm (Qwen3's order).
constexpr absl::string_view kQwen3AttentionOps[] = {
    "input_layernorm",  "self_attn.q_proj",        "self_attn.q_norm",
    "self_attn.k_proj", "self_attn.k_norm",        "self_attn.v_proj",
    "self_attn.o_proj", "post_attention_layernorm"};

// Qwen3MoeAttention: Qwen3's (every projection biased where attention_bias,
// then q_norm and k_norm). Qwen3MoeConfig has no head_dim of its own: the
// attention takes hidden / heads unless the config gives one.
absl::Status BuildQwen3Moe(const HfConfig& cfg, absl::string_view architecture,
                           ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  const LayerStyle style{.qkv_bias = bias,
                         .o_bias = bias,
                         .qk_norm = true,
                         .forward_ops = kQwen3AttentionOps};
  CHUNKPLAN_RETURN_IF_ERROR(
      BuildMoe(cfg, architecture, style, /*shared=*/false, b, d));
  d.traits.qk_norm = true;  // Qwen3MoeAttention: q_norm, k_norm per head
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
        "num_experts_per_tok": 4, "norm_topk_prob": false,
        "output_router_logits": false, "mlp_only_layers": null,
        "tie_word_embeddings": false})",
                             &BuildQwen2Moe};
  return family;
}

// Qwen3MoeConfig's defaults (configuration_qwen3_moe.py, 4.51.3): no
// head_dim key (hidden / heads unless the config gives one).
const Family& Qwen3MoeFamily() {
  static const Family family{"qwen3_moe",
                             {"Qwen3MoeForCausalLM", "Qwen3MoeModel"},
                             R"({
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
        "num_hidden_layers": 24, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": null, "attention_bias": false,
        "decoder_sparse_step": 1, "moe_intermediate_size": 768,
        "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": false,
        "output_router_logits": false, "mlp_only_layers": null,
        "tie_word_embeddings": false})",
                             &BuildQwen3Moe};
  return family;
}

}  // namespace chunkplan::models
