// Llama 4's text model (model_type "llama4_text"): transformers'
// Llama4TextModel and Llama4ForCausalLM over a Llama4TextConfig
// (modeling_llama4.py, 4.51.3). The layers in moe_layers (by default every
// interleave_moe_layer_step-th) hold a mixture whose routed experts are two
// fused 3-D parameters, as 4.51.3 stores them, beside a router and a shared
// expert; the other layers a dense MLP of intermediate_size_mlp. The
// attention's L2 norm (use_qk_norm) has no weight.

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

// Which layers are sparse: those listed in moe_layers where the config
// lists them, else every step-th from step - 1 (the config class's
// default); and the sizes the layers read.
struct Moe {
  uint64_t layers = 0, step = 1, experts = 0;
  bool listed = false;
  std::vector<uint64_t> sparse;  // moe_layers, sorted, where listed
  uint64_t inter = 0;            // an expert's and the shared expert's width
  uint64_t gate_up = 0;          // 2 * inter
  uint64_t dense_inter = 0;      // intermediate_size_mlp

  bool Sparse(uint64_t layer) const {
    if (listed) return std::binary_search(sparse.begin(), sparse.end(), layer);
    return (layer + 1) % step == 0;
  }
  bool AnySparse() const {
    if (listed) return !sparse.empty() && sparse.front() < layers;
    return step - 1 < layers;
  }
  bool AnyDense() const {
    if (!listed) return step > 1;
    uint64_t next = 0;  // the least layer not found in the list yet
    for (uint64_t layer : sparse) {
      if (layer > next || next >= layers) break;
      if (layer == next) ++next;
    }
    return next < layers;
  }
};

// The sizes only where a layer needs them, as the modules do.
absl::StatusOr<Moe> ReadMoe(const HfConfig& cfg, uint64_t layers) {
  Moe moe;
  moe.layers = layers;
  moe.listed = cfg.Has("moe_layers");
  if (moe.listed) {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.sparse, cfg.IndexList("moe_layers"));
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.step, cfg.Size("interleave_moe_layer_step"));
  }
  if (moe.AnySparse()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.experts, cfg.Size("num_local_experts"));
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.inter, cfg.Size("intermediate_size"));
    CHUNKPLAN_ASSIGN_OR_RETURN(
        moe.gate_up, Product({2, moe.inter}, "2 * intermediate_size"));
  }
  if (moe.AnyDense()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.dense_inter,
                               cfg.Size("intermediate_size_mlp"));
  }
  return moe;
}

// Llama4TextMoe: experts (Llama4TextExperts: gate_up_proj [experts, hidden,
// 2 * intermediate_size], down_proj [experts, intermediate_size, hidden]),
// router, shared_expert.
void SparseBlock(ParamBuilder& b, uint64_t h, const Moe& moe) {
  b.Add("experts.gate_up_proj", {moe.experts, h, moe.gate_up});
  b.Add("experts.down_proj", {moe.experts, moe.inter, h});
  Linear(b, "router", h, moe.experts, /*bias=*/false);
  b.In("shared_expert", [&] { GatedMlp(b, h, moe.inter, /*bias=*/false); });
}

// `key` as a flag, `fallback` where the config leaves it unset.
absl::StatusOr<bool> FlagOr(const HfConfig& cfg, absl::string_view key,
                            bool fallback) {
  if (!cfg.Has(key)) return fallback;
  return cfg.Flag(key);
}

// The activation estimate's traits of Llama 4's layer (docs/plan.md,
// "llama4_text"), as Llama4TextConfig reads them: the NoPE layers every
// no_rope_layer_interval-th (default 4; a listed no_rope_layers is
// refused), use_qk_norm (default true), attn_temperature_tuning (a flag or
// a number, non-zero on; default 4); the MoE layers counted (their block's
// keys: ModelSparseBlock). Errors: the key that does not read (the caller
// refuses with it).
absl::Status ReadLlama4Traits(const HfConfig& cfg, const Moe& moe,
                              DecoderTraits& t) {
  CHUNKPLAN_ASSIGN_OR_RETURN(std::vector<uint64_t> listed,
                             cfg.IndexList("no_rope_layers"));
  if (!listed.empty()) {
    t.not_estimated =
        "no_rope_layers listed: only no_rope_layer_interval's NoPE layers "
        "are modelled";
    return absl::OkStatus();
  }
  uint64_t interval = 4;
  if (cfg.Has("no_rope_layer_interval")) {
    CHUNKPLAN_ASSIGN_OR_RETURN(interval, cfg.Size("no_rope_layer_interval"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(t.l2_qk_norm, FlagOr(cfg, "use_qk_norm", true));
  t.temperature_tuning = true;
  if (cfg.Has("attn_temperature_tuning")) {
    const absl::StatusOr<bool> flag = cfg.Flag("attn_temperature_tuning");
    if (flag.ok()) {
      t.temperature_tuning = *flag;
    } else {
      CHUNKPLAN_ASSIGN_OR_RETURN(double scale,
                                 cfg.Number("attn_temperature_tuning", 4));
      t.temperature_tuning = scale != 0;
    }
  }
  uint64_t nope_layers = 0, moe_layers = 0, nope_moe_layers = 0;
  for (uint64_t layer = 0; layer < moe.layers; ++layer) {
    const bool nope = (layer + 1) % interval == 0;
    nope_layers += nope ? 1 : 0;
    moe_layers += moe.Sparse(layer) ? 1 : 0;
    nope_moe_layers += (nope && moe.Sparse(layer)) ? 1 : 0;
  }
  t.nope_layers = nope_layers;
  t.moe_layers = moe_layers;
  t.nope_moe_layers = nope_moe_layers;
  t.llama4 = true;
  return absl::OkStatus();
}

// Llama4TextDecoderLayer: self_attn (q, k, v, o with attention_bias),
// feed_forward, input_layernorm, post_attention_layernorm.
absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  Decoder decoder;
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.shape,
                             ReadDecoderShape(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.dims,
                             ReadHeadDims(cfg, decoder.shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(Moe moe, ReadMoe(cfg, decoder.shape.layers));
  // The shape fact: the dense MLP's width where some layer is dense.
  decoder.inter = moe.AnyDense() ? moe.dense_inter : moe.inter;
  const uint64_t h = decoder.shape.hidden;
  auto feed_forward = [&](uint64_t layer) {
    if (moe.Sparse(layer)) {
      SparseBlock(b, h, moe);
    } else {
      GatedMlp(b, h, moe.dense_inter, /*bias=*/false);
    }
  };
  // Llama4TextDecoderLayer.forward's operations (4.51.3): LLaMA's
  // attention (the L2 qk_norm has no weight), then Llama4TextMoe.forward's
  // router, the experts' two torch.bmm (every expert on every token) and
  // the shared expert's gate_proj, up_proj, down_proj; or, in a dense
  // layer, that MLP alone.
  auto feed_forward_ops = [&](uint64_t layer) {
    if (moe.Sparse(layer)) {
      for (const char* op :
           {"feed_forward.router", "feed_forward.experts.gate_up_proj",
            "feed_forward.experts.down_proj",
            "feed_forward.shared_expert.gate_proj",
            "feed_forward.shared_expert.up_proj",
            "feed_forward.shared_expert.down_proj"}) {
        b.Op({op});
      }
    } else {
      for (const char* op : {"feed_forward.gate_proj", "feed_forward.up_proj",
                             "feed_forward.down_proj"}) {
        b.Op({op});
      }
    }
  };
  const LayerStyle style{.qkv_bias = bias,
                         .o_bias = bias,
                         .feed_forward = "feed_forward",
                         .forward_ops = kLlamaAttentionOps,
                         .feed_forward_ops = feed_forward_ops};
  BuildDecoder(b, architecture, decoder, style, feed_forward, d);
  ModelLlamaLayer(cfg, "silu", d);
  if (!b.status().ok() || !d.traits.not_estimated.empty()) {
    return absl::OkStatus();
  }
  if (absl::Status st = ReadLlama4Traits(cfg, moe, d.traits); !st.ok()) {
    d.traits.not_estimated = std::string(st.message());
    return absl::OkStatus();
  }
  // num_experts_per_tok (default 1) and output_router_logits (default
  // false); no norm_topk_prob (the weights are sigmoid scores).
  ModelSparseBlock(cfg,
                   {.layers = d.traits.moe_layers,
                    .experts = moe.experts,
                    .expert_inter = moe.inter,
                    .always_norm_topk = true},
                   d);
  return absl::OkStatus();
}

}  // namespace

// Llama4TextConfig's defaults (configuration_llama4.py, 4.51.3: Llama 4
// Scout's text shape).
const Family& Llama4TextFamily() {
  static const Family family{"llama4_text",
                             {"Llama4ForCausalLM", "Llama4TextModel"},
                             R"({
        "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
        "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "attention_bias": false, "num_local_experts": 16,
        "moe_layers": null, "interleave_moe_layer_step": 1,
        "num_experts_per_tok": 1, "output_router_logits": false,
        "tie_word_embeddings": false})",
                             &Build};
  return family;
}

}  // namespace chunkplan::models
