// OPT: transformers' OPTModel and OPTForCausalLM (modeling_opt.py).

#include <optional>
#include <string>

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"
#include "server/models/mlp_activation.h"

namespace chunkplan::models {
namespace {

// OPTLearnedPositionalEmbedding keeps 2 rows more than the positions.
constexpr uint64_t kPositionOffset = 2;

struct Shape {
  uint64_t h = 0, ffn = 0, vocab = 0, positions = 0, proj = 0, layers = 0;
  bool bias = true, affine = true, final_norm = true, tied = true;
  bool before = true;  // do_layer_norm_before
};

absl::StatusOr<Shape> ReadShape(const HfConfig& cfg,
                                absl::string_view architecture) {
  Shape s;
  CHUNKPLAN_ASSIGN_OR_RETURN(s.h, cfg.Size("hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_RETURN_IF_ERROR(
      Divide(s.h, heads, "hidden_size / num_attention_heads").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(s.ffn, cfg.Size("ffn_dim"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t positions,
                             cfg.Size("max_position_embeddings"));
  if (__builtin_add_overflow(positions, kPositionOffset, &s.positions)) {
    return cfg.Refuse("max_position_embeddings", "2 more passes 2^64 - 1");
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> proj,
                             cfg.OptionalSize("word_embed_proj_dim"));
  s.proj = proj.value_or(s.h);
  CHUNKPLAN_ASSIGN_OR_RETURN(s.layers, cfg.Size("num_hidden_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.bias, cfg.Flag("enable_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(s.affine,
                             cfg.Flag("layer_norm_elementwise_affine"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool before, cfg.Flag("do_layer_norm_before"));
  // Read only where the first holds, as OPTDecoder's `and` reads it.
  bool removed = false;
  if (before) {
    CHUNKPLAN_ASSIGN_OR_RETURN(removed, cfg.Flag("_remove_final_layer_norm"));
  }
  s.final_norm = before && !removed;
  s.before = before;
  CHUNKPLAN_ASSIGN_OR_RETURN(s.tied,
                             OutputTied(cfg, architecture == "OPTForCausalLM"));
  return s;
}

// OPTDecoderLayer.forward's operations in order: self_attn_layer_norm
// (F.layer_norm(x, weight, bias); after the residual where
// do_layer_norm_before is false), self_attn's q_proj, k_proj, v_proj,
// out_proj (F.linear(x, weight, bias)), final_layer_norm (before fc1, or
// last), fc1, fc2. A norm without elementwise_affine takes no parameter.
void LayerOps(ParamBuilder& b, const Shape& s) {
  auto norm = [&](absl::string_view name) {
    if (s.affine) b.Op({name});
  };
  if (s.before) norm("self_attn_layer_norm");
  for (absl::string_view name : {"self_attn.q_proj", "self_attn.k_proj",
                                 "self_attn.v_proj", "self_attn.out_proj"}) {
    b.Op({name});
  }
  norm(s.before ? "final_layer_norm" : "self_attn_layer_norm");
  b.Op({"fc1"});
  b.Op({"fc2"});
  if (!s.before) norm("final_layer_norm");
}

// OPTDecoderLayer as the activation estimate models it (transformers
// 4.51.3): LayerNorm (before or after: the same bytes), q/k/v/out_proj,
// an fp32 softmax, fc1 / activation_function / fc2, dropout where dropout
// and attention_dropout are not 0 (not after the embeddings), learned
// positions from the mask's cumsum, no final norm where the decoder has
// none, project_in / project_out. layerdrop is not read (a layer skipped
// at random holds less: the estimate counts every layer). An activation
// not modelled or a value of the wrong type leaves traits.not_estimated
// set with the reason.
void SetOptTraits(const HfConfig& cfg, const Shape& s, ModelDescription& d) {
  DecoderTraits& t = d.traits;
  t.head_dim = s.h / d.num_attention_heads;
  t.norm = "layer_norm";
  t.gated_mlp = t.rotary = false;
  t.tied_embeddings = s.tied;
  t.mask_positions = true;
  t.no_final_norm = !s.final_norm;
  t.post_norm = !s.before;
  t.embed_proj_dim = s.proj == s.h ? 0 : s.proj;
  const absl::StatusOr<std::optional<std::string>> act =
      cfg.OptionalText("activation_function");
  const absl::StatusOr<bool> attn = cfg.NonZeroProbability("attention_dropout");
  const absl::StatusOr<bool> hidden = cfg.NonZeroProbability("dropout");
  for (const absl::Status& st :
       {act.status(), attn.status(), hidden.status()}) {
    if (!st.ok()) {
      t.not_estimated = std::string(st.message());
      return;
    }
  }
  t.attention_dropout = *attn;
  t.hidden_dropout = *hidden;
  if (SetMlpActivation("activation_function", act->value_or("relu"), t)) {
    t.not_estimated.clear();
  }
}

// OPTDecoderLayer: self_attn (k, v, q, out_proj), self_attn_layer_norm,
// fc1, fc2, final_layer_norm.
void Layer(ParamBuilder& b, const Shape& s) {
  b.In("self_attn", [&] {
    for (absl::string_view name : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
      Linear(b, name, s.h, s.h, s.bias);
    }
  });
  LayerNorm(b, "self_attn_layer_norm", s.h, s.affine);
  Linear(b, "fc1", s.h, s.ffn, s.bias);
  Linear(b, "fc2", s.ffn, s.h, s.bias);
  LayerNorm(b, "final_layer_norm", s.h, s.affine);
  LayerOps(b, s);
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(Shape s, ReadShape(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(d.num_attention_heads,
                             cfg.Size("num_attention_heads"));
  d.hidden_size = s.h;
  d.decoder_only = true;
  d.num_layers = s.layers;
  d.num_key_value_heads = d.num_attention_heads;
  d.intermediate_size = s.ffn;
  d.vocab_size = s.vocab;
  SetOptTraits(cfg, s, d);
  const bool lm_head = architecture == "OPTForCausalLM";
  // OPTDecoder, in the order it defines its parts: embed_tokens,
  // embed_positions, project_out, project_in, final_layer_norm, layers.
  b.In(lm_head ? "model.decoder" : "decoder", [&] {
    Embedding(b, "embed_tokens", s.vocab, s.proj);
    Embedding(b, "embed_positions", s.positions, s.h);
    if (s.proj != s.h) {
      Linear(b, "project_out", s.h, s.proj, /*bias=*/false);
      Linear(b, "project_in", s.proj, s.h, /*bias=*/false);
    }
    if (s.final_norm) LayerNorm(b, "final_layer_norm", s.h, s.affine);
    // forward: embed_tokens, embed_positions, project_in, the layers,
    // final_layer_norm, project_out.
    b.Op({"embed_tokens"});
    b.Op({"embed_positions"});
    if (s.proj != s.h) b.Op({"project_in"});
    b.Repeat("layers", s.layers, [&](uint64_t) { Layer(b, s); });
    if (s.final_norm && s.affine) b.Op({"final_layer_norm"});
    if (s.proj != s.h) b.Op({"project_out"});
  });
  // OPTForCausalLM: lm_head (tied to embed_tokens unless untied; under
  // tp the policy's postprocess binds lm_head.weight to embed_tokens.weight
  // whatever the config says, policies/opt.py:433-444).
  const bool tied = s.tied || b.PolicyTiesHead();
  if (lm_head && !tied) Linear(b, "lm_head", s.proj, s.vocab, false);
  if (lm_head) b.Op({tied ? "model.decoder.embed_tokens" : "lm_head"});
  return absl::OkStatus();
}

}  // namespace

// OPTConfig's defaults (configuration_opt.py: OPT-125m).
const Family& OptFamily() {
  // ColossalAI's OPTPolicy (shardformer/policies/opt.py); embed_positions,
  // project_in and project_out stay whole.
  static const TpPolicy tp{
      .file = "opt",
      .rules = {{"q_proj", TpLayer::kColumn},
                {"k_proj", TpLayer::kColumn},
                {"v_proj", TpLayer::kColumn},
                {"out_proj", TpLayer::kRow},
                {"fc1", TpLayer::kColumn},
                {"fc2", TpLayer::kRow},
                {"embed_tokens", TpLayer::kVocab},
                {"lm_head", TpLayer::kVocab}},
      .ignores_sp =
          "OPT doesn't support sequence parallelism now, will "
          "ignore the sequence parallelism flag.",
      // get_lm_forward_with_dist_cross_entropy (modeling/opt.py:846-968):
      // lm_head(...).contiguous(), 16 bits, the model's dtype for the loss;
      // postprocess (policies/opt.py:433-444) ties lm_head to embed_tokens.
      .causal_lm = {
          .modelled = true, .logits_contiguous = true, .ties_head = true}};
  static const Family family{"opt",
                             {"OPTForCausalLM", "OPTModel"},
                             R"({
        "vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12,
        "ffn_dim": 3072, "max_position_embeddings": 2048,
        "num_attention_heads": 12, "do_layer_norm_before": true,
        "_remove_final_layer_norm": false, "word_embed_proj_dim": null,
        "enable_bias": true, "layer_norm_elementwise_affine": true,
        "tie_word_embeddings": true, "activation_function": "relu",
        "dropout": 0.1, "attention_dropout": 0.0})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
