// GPT-2: transformers' GPT2Model and GPT2LMHeadModel (modeling_gpt2.py).

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(bool cross, cfg.Flag("add_cross_attention"));
  if (cross) {
    return cfg.Refuse("add_cross_attention",
                      "GPT-2 with cross attention is not supported");
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t dim, cfg.Size("n_embd"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("n_head"));
  CHUNKPLAN_RETURN_IF_ERROR(Divide(dim, heads, "n_embd / n_head").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> n_inner,
                             cfg.OptionalSize("n_inner"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t positions, cfg.Size("n_positions"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t layers, cfg.Size("n_layer"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      bool tied, OutputTied(cfg, architecture == "GPT2LMHeadModel"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t qkv, Product({3, dim}, "3 * n_embd"));
  uint64_t inner = n_inner.value_or(0);
  if (!n_inner) {
    CHUNKPLAN_ASSIGN_OR_RETURN(inner, Product({4, dim}, "4 * n_embd"));
  }
  d.hidden_size = dim;
  d.decoder_only = true;
  d.num_layers = layers;
  d.num_attention_heads = d.num_key_value_heads = heads;
  d.intermediate_size = inner;
  d.vocab_size = vocab;
  const bool lm_head = architecture == "GPT2LMHeadModel";
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "wte", vocab, dim);
    Embedding(b, "wpe", positions, dim);
    b.Repeat("h", layers, [&](uint64_t) {
      LayerNorm(b, "ln_1", dim);
      b.In("attn", [&] {
        Conv1D(b, "c_attn", dim, qkv);
        Conv1D(b, "c_proj", dim, dim);
      });
      LayerNorm(b, "ln_2", dim);
      b.In("mlp", [&] {
        Conv1D(b, "c_fc", dim, inner);
        Conv1D(b, "c_proj", inner, dim);
      });
    });
    LayerNorm(b, "ln_f", dim);
  });
  if (lm_head && !tied) Linear(b, "lm_head", dim, vocab, /*bias=*/false);
  return absl::OkStatus();
}

}  // namespace

// GPT2Config's defaults (configuration_gpt2.py: GPT-2 small), and
// PretrainedConfig's tie_word_embeddings.
const Family& Gpt2Family() {
  static const Family family{"gpt2",
                             {"GPT2LMHeadModel", "GPT2Model"},
                             R"({
        "vocab_size": 50257, "n_positions": 1024, "n_embd": 768,
        "n_layer": 12, "n_head": 12, "n_inner": null,
        "add_cross_attention": false, "tie_word_embeddings": true})",
                             &Build};
  return family;
}

}  // namespace chunkplan::models
