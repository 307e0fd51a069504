// Falcon (model_type "falcon"): transformers' FalconModel and
// FalconForCausalLM (modeling_falcon.py, 4.51.3), all three attention
// layouts: Falcon-7B's multi-query, Falcon-40B/180B's new decoder
// architecture (grouped key/value heads, two norms per layer) and
// Falcon-RW's multi-head with sequential attention and MLP.

#include <optional>
#include <string>

#include "common/status_macros.h"
#include "server/models/falcon_traits.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"
#include "server/models/tp_shard.h"

namespace chunkplan::models {
namespace {

struct Shape {
  uint64_t h = 0, heads = 0, head_dim = 0, qkv = 0, ffn = 0, vocab = 0;
  uint64_t layers = 0;
  bool bias = false, parallel = true, two_norms = false, tied = true;
  bool new_arch = false;
};

// FalconAttention's fused query_key_value width: new architecture
// (heads + 2 * num_kv_heads) * head_dim, multi-query hidden + 2 * head_dim,
// else 3 * hidden.
absl::StatusOr<uint64_t> QkvWidth(const HfConfig& cfg, const Shape& s,
                                  bool new_arch) {
  if (new_arch) {
    CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> kv,
                               cfg.OptionalSize("num_kv_heads"));
    CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t kv_width,
                               Product({2, kv.value_or(s.heads), s.head_dim},
                                       "2 * num_kv_heads * head_dim"));
    uint64_t width = 0;
    if (__builtin_add_overflow(kv_width, s.h, &width)) {
      return cfg.Refuse("num_kv_heads", "the fused width passes 2^64 - 1");
    }
    return width;
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(bool multi_query, cfg.Flag("multi_query"));
  if (multi_query) {
    // head_dim <= hidden: 3 * hidden bounds it.
    CHUNKPLAN_RETURN_IF_ERROR(Product({3, s.h}, "3 * hidden_size").status());
    return s.h + 2 * s.head_dim;
  }
  return Product({3, s.h}, "3 * hidden_size");
}

absl::StatusOr<Shape> ReadShape(const HfConfig& cfg,
                                absl::string_view architecture) {
  // FalconConfig takes a legacy n_embed over hidden_size, but derives the
  // default ffn_hidden_size from hidden_size: not modelled.
  if (cfg.Has("n_embed")) {
    return cfg.Refuse("n_embed", "not supported (give hidden_size)");
  }
  Shape s;
  CHUNKPLAN_ASSIGN_OR_RETURN(s.h, cfg.Size("hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      s.head_dim, Divide(s.h, s.heads, "hidden_size / num_attention_heads"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool new_arch,
                             cfg.Flag("new_decoder_architecture"));
  s.new_arch = new_arch;
  CHUNKPLAN_ASSIGN_OR_RETURN(s.qkv, QkvWidth(cfg, s, new_arch));
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> ffn,
                             cfg.OptionalSize("ffn_hidden_size"));
  if (ffn) {
    s.ffn = *ffn;
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(s.ffn, Product({4, s.h}, "4 * hidden_size"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(s.vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.layers, cfg.Size("num_hidden_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.bias, cfg.Flag("bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.parallel, cfg.Flag("parallel_attn"));
  // FalconDecoderLayer sets a null num_ln_in_parallel_attn to 2 under the
  // new architecture; only 2 gives a parallel layer its two norms.
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> norms,
                             cfg.OptionalSize("num_ln_in_parallel_attn"));
  s.two_norms = norms.value_or(new_arch ? 2 : 1) == 2;
  CHUNKPLAN_ASSIGN_OR_RETURN(
      s.tied, OutputTied(cfg, architecture == "FalconForCausalLM"));
  return s;
}

// One FalconLinear's operations: `input @ self.weight.T` (the weight's
// transpose is the torch function that takes it) and, where biased,
// `+ self.bias`: two operations, each gathering its own parameter.
void FalconLinearOps(ParamBuilder& b, absl::string_view module, bool bias) {
  const std::string path(module);
  b.Op({path + ".weight"});
  if (bias) b.Op({path + ".bias"});
}

// FalconDecoderLayer.forward's operations in order: its norms first (ln_attn
// and ln_mlp, both on the layer's input, or input_layernorm), the
// attention's query_key_value and dense, post_attention_layernorm where the
// attention and the MLP run one after the other, the MLP's dense_h_to_4h and
// dense_4h_to_h.
void LayerOps(ParamBuilder& b, const Shape& s) {
  if (s.parallel && s.two_norms) {
    b.Op({"ln_attn"});
    b.Op({"ln_mlp"});
  } else {
    b.Op({"input_layernorm"});
  }
  FalconLinearOps(b, "self_attention.query_key_value", s.bias);
  FalconLinearOps(b, "self_attention.dense", s.bias);
  if (!s.parallel) b.Op({"post_attention_layernorm"});
  FalconLinearOps(b, "mlp.dense_h_to_4h", s.bias);
  FalconLinearOps(b, "mlp.dense_4h_to_h", s.bias);
}

// FalconDecoderLayer: self_attention (query_key_value, dense), mlp
// (dense_h_to_4h, dense_4h_to_h), then its norms: post_attention_layernorm
// and input_layernorm (in that order) where the attention and the MLP run
// one after the other; else ln_attn and ln_mlp, or input_layernorm alone.
void Layer(ParamBuilder& b, const Shape& s) {
  b.In("self_attention", [&] {
    Linear(b, "query_key_value", s.h, s.qkv, s.bias);
    Linear(b, "dense", s.h, s.h, s.bias);
  });
  b.In("mlp", [&] {
    Linear(b, "dense_h_to_4h", s.h, s.ffn, s.bias);
    Linear(b, "dense_4h_to_h", s.ffn, s.h, s.bias);
  });
  if (!s.parallel) {
    LayerNorm(b, "post_attention_layernorm", s.h);
    LayerNorm(b, "input_layernorm", s.h);
  } else if (s.two_norms) {
    LayerNorm(b, "ln_attn", s.h);
    LayerNorm(b, "ln_mlp", s.h);
  } else {
    LayerNorm(b, "input_layernorm", s.h);
  }
  LayerOps(b, s);
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(Shape s, ReadShape(cfg, architecture));
  d.hidden_size = s.h;
  d.decoder_only = true;
  d.num_layers = s.layers;
  d.num_attention_heads = s.heads;
  d.num_key_value_heads = (s.qkv - s.h) / (2 * s.head_dim);
  d.intermediate_size = s.ffn;
  d.vocab_size = s.vocab;
  SetFalconTraits(cfg,
                  {.head_dim = s.head_dim,
                   .heads = s.heads,
                   .new_arch = s.new_arch,
                   .parallel = s.parallel,
                   .two_norms = s.two_norms,
                   .tied = s.tied},
                  d.traits);
  const bool lm_head = architecture == "FalconForCausalLM";
  // FalconModel: word_embeddings, h, ln_f (forward in that order).
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "word_embeddings", s.vocab, s.h);
    b.Op({"word_embeddings"});
    b.Repeat("h", s.layers, [&](uint64_t) { Layer(b, s); });
    LayerNorm(b, "ln_f", s.h);
    b.Op({"ln_f"});
  });
  // FalconForCausalLM: lm_head, unless tied to word_embeddings.
  if (lm_head && !s.tied) Linear(b, "lm_head", s.h, s.vocab, false);
  if (lm_head) b.Op({s.tied ? "transformer.word_embeddings" : "lm_head"});
  return absl::OkStatus();
}

}  // namespace

// FalconConfig's defaults (configuration_falcon.py, 4.51.3: Falcon-7B), and
// PretrainedConfig's tie_word_embeddings.
const Family& FalconFamily() {
  // ColossalAI's FalconPolicy (shardformer/policies/falcon.py): tensor
  // parallelism off (a warning) for the old multi-query layout.
  static const TpPolicy tp{
      .file = "falcon",
      .rules = FusedQkvTpRules(),
      .kv_heads_key = "num_kv_heads",
      .tp_ignored_when = {{"new_decoder_architecture", false},
                          {"multi_query", true}},
      .ignores_sp =
          "Falcon doesn't support sequence parallelism now, will "
          "ignore the sequence parallelism flag.",
      // get_lm_forward_with_dist_cross_entropy (modeling/falcon.py:742-815):
      // 16-bit logits into cross_entropy_1d in the model's dtype.
      .causal_lm = {.modelled = true}};
  static const Family family{"falcon",
                             {"FalconForCausalLM", "FalconModel"},
                             R"({
        "vocab_size": 65024, "hidden_size": 4544, "num_hidden_layers": 32,
        "num_attention_heads": 71, "num_ln_in_parallel_attn": null,
        "num_kv_heads": null, "new_decoder_architecture": false,
        "multi_query": true, "parallel_attn": true, "bias": false,
        "ffn_hidden_size": null, "tie_word_embeddings": true,
        "alibi": false, "activation": "gelu", "hidden_dropout": 0.0,
        "attention_dropout": 0.0})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
