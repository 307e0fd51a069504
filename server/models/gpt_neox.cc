// GPT-NeoX and Pythia (model_type "gpt_neox"): transformers' GPTNeoXModel
// and GPTNeoXForCausalLM (modeling_gpt_neox.py).

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"
#include "server/models/mlp_activation.h"

namespace chunkplan::models {
namespace {

// GPTNeoXLayer as the activation estimate models it (transformers 4.51.3):
// LayerNorm, the fused query_key_value whose V is a strided view, RoPE over
// int(head_size * rotary_pct) dimensions (cos and sin as wide as the even
// width the rotary embedding's inv_freq gives), an fp32 softmax, the
// non-gated MLP, use_parallel_residual, dropout where attention_dropout and
// hidden_dropout (after the embedding too) are not 0. An activation not
// modelled, a rotary width of 0 or past head_size, or a value of the wrong
// type leaves traits.not_estimated set with the reason.
void SetGptNeoXTraits(const HfConfig& cfg, uint64_t head_size, bool tied,
                      ModelDescription& d) {
  DecoderTraits& t = d.traits;
  t.head_dim = head_size;
  t.norm = "layer_norm";
  t.gated_mlp = false;
  t.tied_embeddings = tied;
  t.fused_qkv = t.value_view = true;
  const absl::StatusOr<std::optional<std::string>> act =
      cfg.OptionalText("hidden_act");
  const absl::StatusOr<double> pct = cfg.Fraction("rotary_pct");
  const absl::StatusOr<bool> parallel = cfg.Flag("use_parallel_residual");
  const absl::StatusOr<bool> attn = cfg.NonZeroProbability("attention_dropout");
  const absl::StatusOr<bool> hidden = cfg.NonZeroProbability("hidden_dropout");
  for (const absl::Status& s : {act.status(), pct.status(), parallel.status(),
                                attn.status(), hidden.status()}) {
    if (!s.ok()) {
      t.not_estimated = std::string(s.message());
      return;
    }
  }
  t.parallel_residual = *parallel;
  t.attention_dropout = *attn;
  t.hidden_dropout = t.embedding_dropout = *hidden;
  const auto rotary = static_cast<uint64_t>(static_cast<double>(head_size) *
                                            *pct);  // Python's int()
  t.rotary_dim = rotary + rotary % 2;
  if (!SetMlpActivation("hidden_act", act->value_or("gelu"), t)) {
    return;
  }
  if (t.rotary_dim == 0 || t.rotary_dim > head_size) {
    t.not_estimated =
        absl::StrCat("rotary_pct gives a rotary width of ", t.rotary_dim,
                     " for head size ", head_size, ": not modelled");
  } else {
    t.not_estimated.clear();
  }
}

// GPTNeoXLayer.forward's operations in order: input_layernorm
// (F.layer_norm(x, weight, bias)), attention.query_key_value and
// attention.dense (F.linear(x, weight, bias)), post_attention_layernorm,
// mlp.dense_h_to_4h, mlp.dense_4h_to_h; the parallel and the sequential
// residual run them in the same order.
void LayerOps(ParamBuilder& b) {
  for (absl::string_view op :
       {"input_layernorm", "attention.query_key_value", "attention.dense",
        "post_attention_layernorm", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"}) {
    b.Op({op});
  }
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t h, cfg.Size("hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      uint64_t head_size,
      Divide(h, heads, "hidden_size / num_attention_heads"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t qkv, Product({3, h}, "3 * hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t layers, cfg.Size("num_hidden_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      bool tied, OutputTied(cfg, architecture == "GPTNeoXForCausalLM"));
  d.hidden_size = h;
  d.decoder_only = true;
  d.num_layers = layers;
  d.num_attention_heads = d.num_key_value_heads = heads;
  d.intermediate_size = inter;
  d.vocab_size = vocab;
  SetGptNeoXTraits(cfg, head_size, tied, d);
  const bool lm_head = architecture == "GPTNeoXForCausalLM";
  // GPTNeoXModel: embed_in, layers, final_layer_norm (forward: embed_in,
  // emb_dropout, the layers, final_layer_norm; then embed_out, whose weight
  // is embed_in's where tied).
  b.In(lm_head ? "gpt_neox" : "", [&] {
    Embedding(b, "embed_in", vocab, h);
    b.Op({"embed_in"});
    // GPTNeoXLayer: input_layernorm, post_attention_layernorm, attention
    // (query_key_value, dense: attention_bias), mlp (biased).
    b.Repeat("layers", layers, [&](uint64_t) {
      LayerNorm(b, "input_layernorm", h);
      LayerNorm(b, "post_attention_layernorm", h);
      b.In("attention", [&] {
        Linear(b, "query_key_value", h, qkv, bias);
        Linear(b, "dense", h, h, bias);
      });
      b.In("mlp", [&] {
        Linear(b, "dense_h_to_4h", h, inter, /*bias=*/true);
        Linear(b, "dense_4h_to_h", inter, h, /*bias=*/true);
      });
      LayerOps(b);
    });
    LayerNorm(b, "final_layer_norm", h);
    b.Op({"final_layer_norm"});
  });
  // GPTNeoXForCausalLM: embed_out, unless tied to embed_in.
  if (lm_head && !tied) Linear(b, "embed_out", h, vocab, /*bias=*/false);
  if (lm_head) b.Op({tied ? "gpt_neox.embed_in" : "embed_out"});
  return absl::OkStatus();
}

}  // namespace

// GPTNeoXConfig's defaults (configuration_gpt_neox.py: GPT-NeoX-20B).
const Family& GptNeoXFamily() {
  static const Family family{"gpt_neox",
                             {"GPTNeoXForCausalLM", "GPTNeoXModel"},
                             R"({
        "vocab_size": 50432, "hidden_size": 6144, "num_hidden_layers": 44,
        "num_attention_heads": 64, "intermediate_size": 24576,
        "attention_bias": true, "tie_word_embeddings": false,
        "hidden_act": "gelu", "rotary_pct": 0.25,
        "use_parallel_residual": true, "attention_dropout": 0.0,
        "hidden_dropout": 0.0})",
                             &Build};
  return family;
}

}  // namespace chunkplan::models
