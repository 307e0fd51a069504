// GPT-2: transformers' GPT2Model and GPT2LMHeadModel (modeling_gpt2.py).

#include <optional>
#include <string>

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// GPT2Block.forward's operations in order: ln_1 (F.layer_norm(x, weight,
// bias)), attn.c_attn and attn.c_proj (Conv1D: torch.addmm(bias, x,
// weight), the bias passed first), ln_2, mlp.c_fc, mlp.c_proj.
void BlockOps(ParamBuilder& b) {
  b.Op({"ln_1"});
  b.Op({"attn.c_attn.bias", "attn.c_attn.weight"});
  b.Op({"attn.c_proj.bias", "attn.c_proj.weight"});
  b.Op({"ln_2"});
  b.Op({"mlp.c_fc.bias", "mlp.c_fc.weight"});
  b.Op({"mlp.c_proj.bias", "mlp.c_proj.weight"});
}

// GPT-2's layer as the activation estimate models it: LayerNorm, the fused
// c_attn, gelu_new / c_proj, learned positions, a 16-bit softmax after
// dividing by a 0-dim tensor, dropout where attn_pdrop, resid_pdrop,
// embd_pdrop are not 0. Another activation, reorder_and_upcast_attn or a
// value of the wrong type leaves traits.not_estimated set with the reason
// (the description itself does not read these keys).
void SetGpt2Traits(const HfConfig& cfg, bool tied, ModelDescription& d) {
  DecoderTraits& t = d.traits;
  t.head_dim = d.hidden_size / d.num_attention_heads;
  t.norm = "layer_norm";
  t.gated_mlp = t.rotary = t.fp32_softmax = false;
  t.tied_embeddings = tied;
  t.fused_qkv = true;  // c_attn
  // GPT2Block.forward binds attn_output until it returns.
  t.attention_output_held = true;
  const absl::StatusOr<std::optional<std::string>> act =
      cfg.OptionalText("activation_function");
  const absl::StatusOr<bool> upcast = cfg.Flag("reorder_and_upcast_attn");
  const absl::StatusOr<bool> scale = cfg.Flag("scale_attn_weights");
  const absl::StatusOr<bool> attn = cfg.NonZeroProbability("attn_pdrop");
  const absl::StatusOr<bool> resid = cfg.NonZeroProbability("resid_pdrop");
  const absl::StatusOr<bool> embd = cfg.NonZeroProbability("embd_pdrop");
  for (const absl::Status& s : {act.status(), upcast.status(), scale.status(),
                                attn.status(), resid.status(), embd.status()}) {
    if (!s.ok()) {
      t.not_estimated = std::string(s.message());
      return;
    }
  }
  t.scale_by_tensor = *scale;
  t.attention_dropout = *attn;
  t.hidden_dropout = *resid;
  t.embedding_dropout = *embd;
  const std::string name = act->value_or("gelu_new");
  t.gelu_new = name == "gelu_new";
  if (*upcast) {
    t.not_estimated = "reorder_and_upcast_attn is not modelled";
  } else if (!t.gelu_new && name != "gelu" && name != "gelu_pytorch_tanh") {
    t.not_estimated = "activation_function \"" + name +
                      "\" is not modelled (gelu_new, gelu, "
                      "gelu_pytorch_tanh are)";
  } else {
    t.not_estimated.clear();
  }
}

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
  SetGpt2Traits(cfg, tied, d);
  const bool lm_head = architecture == "GPT2LMHeadModel";
  // GPT2Model.forward: wte(input_ids), wpe(position_ids), h[i], ln_f; then
  // lm_head, whose weight is wte's where tied.
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "wte", vocab, dim);
    Embedding(b, "wpe", positions, dim);
    b.Op({"wte"});
    b.Op({"wpe"});
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
      BlockOps(b);
    });
    LayerNorm(b, "ln_f", dim);
    b.Op({"ln_f"});
  });
  if (lm_head && !tied) Linear(b, "lm_head", dim, vocab, /*bias=*/false);
  if (lm_head) b.Op({tied ? "transformer.wte" : "lm_head"});
  return absl::OkStatus();
}

}  // namespace

// GPT2Config's defaults (configuration_gpt2.py: GPT-2 small), and
// PretrainedConfig's tie_word_embeddings.
const Family& Gpt2Family() {
  // ColossalAI's GPT2Policy (shardformer/policies/gpt2.py): c_attn splits
  // each of q, k, v; wpe and the norms stay whole.
  static const TpPolicy tp{.file = "gpt2",
                           .rules = {{"wte", TpLayer::kVocab},
                                     {"attn.c_attn", TpLayer::kConv1DColumn, 3},
                                     {"attn.c_proj", TpLayer::kConv1DRow},
                                     {"mlp.c_fc", TpLayer::kConv1DColumn, 1},
                                     {"mlp.c_proj", TpLayer::kConv1DRow},
                                     {"lm_head", TpLayer::kVocab}},
                           .heads_key = "n_head",
                           // gpt2_lmhead_model_forward (modeling/gpt2.py,
                           // with parallel_output): 16-bit logits, the
                           // model's dtype for the loss.
                           .causal_lm = {.modelled = true,
                                         .sp_gathers_over_world = true,
                                         .sp_modelled = true}};
  static const Family family{"gpt2",
                             {"GPT2LMHeadModel", "GPT2Model"},
                             R"({
        "vocab_size": 50257, "n_positions": 1024, "n_embd": 768,
        "n_layer": 12, "n_head": 12, "n_inner": null,
        "add_cross_attention": false, "tie_word_embeddings": true,
        "activation_function": "gelu_new", "attn_pdrop": 0.1,
        "resid_pdrop": 0.1, "embd_pdrop": 0.1, "scale_attn_weights": true,
        "reorder_and_upcast_attn": false})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
