// GPT-NeoX and Pythia (model_type "gpt_neox"): transformers' GPTNeoXModel
// and GPTNeoXForCausalLM (modeling_gpt_neox.py).

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t h, cfg.Size("hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_RETURN_IF_ERROR(
      Divide(h, heads, "hidden_size / num_attention_heads").status());
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
  const bool lm_head = architecture == "GPTNeoXForCausalLM";
  // GPTNeoXModel: embed_in, layers, final_layer_norm.
  b.In(lm_head ? "gpt_neox" : "", [&] {
    Embedding(b, "embed_in", vocab, h);
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
    });
    LayerNorm(b, "final_layer_norm", h);
  });
  // GPTNeoXForCausalLM: embed_out, unless tied to embed_in.
  if (lm_head && !tied) Linear(b, "embed_out", h, vocab, /*bias=*/false);
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
        "attention_bias": true, "tie_word_embeddings": false})",
                             &Build};
  return family;
}

}  // namespace chunkplan::models
