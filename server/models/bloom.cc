// BLOOM (model_type "bloom"): transformers' BloomModel and BloomForCausalLM
// (modeling_bloom.py, 4.51.3): a LayerNorm right after the word embeddings,
// biased fused attention and MLP of 4 * hidden, lm_head tied by default.

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"
#include "server/models/tp_shard.h"

namespace chunkplan::models {
namespace {

// BloomBlock: input_layernorm, self_attention (query_key_value, dense),
// post_attention_layernorm, mlp (dense_h_to_4h, dense_4h_to_h); all biased.
void Block(ParamBuilder& b, uint64_t h, uint64_t qkv, uint64_t inner) {
  LayerNorm(b, "input_layernorm", h);
  b.In("self_attention", [&] {
    Linear(b, "query_key_value", h, qkv, /*bias=*/true);
    Linear(b, "dense", h, h, /*bias=*/true);
  });
  LayerNorm(b, "post_attention_layernorm", h);
  b.In("mlp", [&] {
    Linear(b, "dense_h_to_4h", h, inner, /*bias=*/true);
    Linear(b, "dense_4h_to_h", inner, h, /*bias=*/true);
  });
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  // BloomConfig takes the legacy n_embed (BLOOM's published configs carry
  // it) over hidden_size.
  const absl::string_view width_key =
      cfg.Has("n_embed") ? "n_embed" : "hidden_size";
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t h, cfg.Size(width_key));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("n_head"));
  CHUNKPLAN_RETURN_IF_ERROR(Divide(h, heads, "hidden_size / n_head").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t qkv, Product({3, h}, "3 * hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inner,
                             Product({4, h}, "4 * hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t layers, cfg.Size("n_layer"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      bool tied, OutputTied(cfg, architecture == "BloomForCausalLM"));
  d.hidden_size = h;
  d.decoder_only = true;
  d.num_layers = layers;
  d.num_attention_heads = d.num_key_value_heads = heads;
  d.intermediate_size = inner;
  d.vocab_size = vocab;
  const bool lm_head = architecture == "BloomForCausalLM";
  // BloomModel: word_embeddings, word_embeddings_layernorm, h, ln_f.
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "word_embeddings", vocab, h);
    LayerNorm(b, "word_embeddings_layernorm", h);
    b.Repeat("h", layers, [&](uint64_t) { Block(b, h, qkv, inner); });
    LayerNorm(b, "ln_f", h);
  });
  // BloomForCausalLM: lm_head, unless tied to word_embeddings.
  if (lm_head && !tied) Linear(b, "lm_head", h, vocab, /*bias=*/false);
  return absl::OkStatus();
}

}  // namespace

// BloomConfig's defaults (configuration_bloom.py, 4.51.3: a tiny test
// shape), and PretrainedConfig's tie_word_embeddings.
const Family& BloomFamily() {
  // ColossalAI's BloomPolicy (shardformer/policies/bloom.py): the fused
  // query_key_value is a plain Linear1D_Col.
  static const TpPolicy tp{
      .file = "bloom", .rules = FusedQkvTpRules(), .heads_key = "n_head"};
  static const Family family{"bloom",
                             {"BloomForCausalLM", "BloomModel"},
                             R"({
        "vocab_size": 250880, "hidden_size": 64, "n_layer": 2, "n_head": 8,
        "tie_word_embeddings": true})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
