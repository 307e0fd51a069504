// GPT-J (model_type "gptj"): transformers' GPTJModel and GPTJForCausalLM
// (modeling_gptj.py, 4.51.3): attention and MLP side by side after one
// LayerNorm per layer, and a biased lm_head whose bias stays a parameter of
// its own where tie_word_embeddings ties its weight to wte.

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
  // GPTJBlock.forward's operations in order: ln_1 (F.layer_norm(x, weight,
  // bias)), attn's q_proj, k_proj, v_proj, out_proj, then mlp's fc_in and
  // fc_out on ln_1's output (F.linear(x, weight, bias)).
  for (absl::string_view op :
       {"ln_1", "attn.q_proj", "attn.k_proj", "attn.v_proj", "attn.out_proj",
        "mlp.fc_in", "mlp.fc_out"}) {
    b.Op({op});
  }
}

// GPTJBlock as the activation estimate models it (transformers 4.51.3):
// ln_1 whose output both the attention and the MLP read, RoPE over
// rotary_dim with fp32 sin and cos gathered per layer (q and k fp32, upcast
// for the scores, divided by a host scalar), activation_function, dropout
// where embd_pdrop, attn_pdrop, resid_pdrop are not 0, the logits cast to
// fp32; no sdpa path (eager by default). A null, odd or too wide
// rotary_dim, an activation not modelled or a value of the wrong type
// leaves traits.not_estimated set with the reason.
void SetGptJTraits(const HfConfig& cfg, uint64_t head_dim, bool tied,
                   ModelDescription& d) {
  DecoderTraits& t = d.traits;
  t.head_dim = head_dim;
  t.norm = "layer_norm";
  t.gated_mlp = false;
  t.tied_embeddings = tied;
  t.single_norm = t.gptj_rotary = t.fp32_logits = t.no_sdpa = true;
  const absl::StatusOr<std::optional<std::string>> act =
      cfg.OptionalText("activation_function");
  const absl::StatusOr<std::optional<uint64_t>> rotary =
      cfg.OptionalSize("rotary_dim");
  const absl::StatusOr<bool> embd = cfg.NonZeroProbability("embd_pdrop");
  const absl::StatusOr<bool> attn = cfg.NonZeroProbability("attn_pdrop");
  const absl::StatusOr<bool> resid = cfg.NonZeroProbability("resid_pdrop");
  for (const absl::Status& s : {act.status(), rotary.status(), embd.status(),
                                attn.status(), resid.status()}) {
    if (!s.ok()) {
      t.not_estimated = std::string(s.message());
      return;
    }
  }
  t.embedding_dropout = *embd;
  t.attention_dropout = *attn;
  t.hidden_dropout = *resid;
  if (!SetMlpActivation("activation_function", act->value_or("gelu_new"), t)) {
    return;
  }
  if (!rotary->has_value()) {
    t.not_estimated = "rotary_dim null (RoPE over n_embd) is not modelled";
  } else if (**rotary % 2 != 0 || **rotary > head_dim) {
    t.not_estimated =
        absl::StrCat("rotary_dim ", **rotary, " (odd, or past the head size ",
                     head_dim, ") is not modelled");
  } else {
    t.rotary_dim = **rotary;
    t.not_estimated.clear();
  }
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
  SetGptJTraits(cfg, dim / heads, tied, d);
  const bool lm_head = architecture == "GPTJForCausalLM";
  d.traits.head_bias = lm_head;  // lm_head.bias, below
  // GPTJModel: wte, h, ln_f (forward: wte, drop, the blocks, ln_f).
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "wte", vocab, dim);
    b.Op({"wte"});
    b.Repeat("h", layers, [&](uint64_t) { Block(b, dim, inner); });
    LayerNorm(b, "ln_f", dim);
    b.Op({"ln_f"});
  });
  if (!lm_head) return absl::OkStatus();
  // GPTJForCausalLM: lm_head (weight unless tied to wte; bias always),
  // F.linear(x, weight, bias).
  b.In("lm_head", [&] {
    if (!tied) b.Add("weight", {vocab, dim});
    b.Add("bias", {vocab});
  });
  if (tied) {
    b.Op({"transformer.wte.weight", "lm_head.bias"});
  } else {
    b.Op({"lm_head"});
  }
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
          "ignore the sequence parallelism flag.",
      // No forward replaced: GPTJForCausalLM.forward on lm_head's gathered
      // output (gather_output=True), .to(torch.float32), its own loss.
      .causal_lm = {
          .modelled = true, .logits_fp32 = true, .gathered_head = true}};
  // GPTJConfig's defaults, and "rotary": a key of EleutherAI's published
  // gpt-j-6b config that transformers ignores (known, so that it does not
  // warn as a prefix of rotary_dim).
  static const Family family{"gptj",
                             {"GPTJForCausalLM", "GPTJModel"},
                             R"({
        "vocab_size": 50400, "n_embd": 4096, "n_layer": 28, "n_head": 16,
        "n_inner": null, "tie_word_embeddings": false, "rotary_dim": 64,
        "rotary": true,
        "activation_function": "gelu_new", "embd_pdrop": 0.0,
        "attn_pdrop": 0.0, "resid_pdrop": 0.0})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
