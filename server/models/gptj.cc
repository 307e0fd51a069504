// GPT-J (model_type "gptj"): transformers' GPTJModel and GPTJForCausalLM
// (modeling_gptj.py, 4.51.3): attention and MLP side by side after one
// LayerNorm per layer, and a biased lm_head whose bias stays a parameter of
// its own where tie_word_embeddings ties its weight to wte.

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// GPTJBlock: ln_1, attn (k_proj, v_proj, q_proj, out_proj: no biases), mlp
// (fc_in, fc_out: biased).
void Block(ParamBuilder& b, uint64_t dim, uint64_t inner) {
  LayerNorm(b, "ln_1", dim);
  b.In("attn", [&] {
    for (absl::string_view name : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
      Linear(b, name, dim, dim, /*bias=*/false);
    }
  });
  b.In("mlp", [&] {
    Linear(b, "fc_in", dim, inner, /*bias=*/true);
    Linear(b, "fc_out", inner, dim, /*bias=*/true);
  });
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t dim, cfg.Size("n_embd"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("n_head"));
  CHUNKPLAN_RETURN_IF_ERROR(Divide(dim, heads, "n_embd / n_head").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> n_inner,
                             cfg.OptionalSize("n_inner"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t layers, cfg.Size("n_layer"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      bool tied, OutputTied(cfg, architecture == "GPTJForCausalLM"));
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
  const bool lm_head = architecture == "GPTJForCausalLM";
  // GPTJModel: wte, h, ln_f.
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "wte", vocab, dim);
    b.Repeat("h", layers, [&](uint64_t) { Block(b, dim, inner); });
    LayerNorm(b, "ln_f", dim);
  });
  if (!lm_head) return absl::OkStatus();
  // GPTJForCausalLM: lm_head (weight unless tied to wte; bias always).
  b.In("lm_head", [&] {
    if (!tied) b.Add("weight", {vocab, dim});
    b.Add("bias", {vocab});
  });
  return absl::OkStatus();
}

}  // namespace

// GPTJConfig's defaults (configuration_gptj.py, 4.51.3: GPT-J 6B).
const Family& GptJFamily() {
  // ColossalAI's GPTJPolicy (shardformer/policies/gptj.py); lm_head's bias
  // is padded and split with its weight.
  static const TpPolicy tp{
      .file = "gptj",
      .rules = {{"wte", TpLayer::kVocab},
                {"attn.k_proj", TpLayer::kColumn},
                {"attn.q_proj", TpLayer::kColumn},
                {"attn.v_proj", TpLayer::kColumn},
                {"attn.out_proj", TpLayer::kRow},
                {"mlp.fc_in", TpLayer::kColumn},
                {"mlp.fc_out", TpLayer::kRow},
                {"lm_head", TpLayer::kVocab}},
      .heads_key = "n_head",
      .ignores_sp =
          "GPTJ doesn't support sequence parallelism now, will "
          "ignore the sequence parallelism flag."};
  static const Family family{"gptj",
                             {"GPTJForCausalLM", "GPTJModel"},
                             R"({
        "vocab_size": 50400, "n_embd": 4096, "n_layer": 28, "n_head": 16,
        "n_inner": null, "tie_word_embeddings": false})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
