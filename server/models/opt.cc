// OPT: transformers' OPTModel and OPTForCausalLM (modeling_opt.py).

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// OPTLearnedPositionalEmbedding keeps 2 rows more than the positions.
constexpr uint64_t kPositionOffset = 2;

struct Shape {
  uint64_t h = 0, ffn = 0, vocab = 0, positions = 0, proj = 0, layers = 0;
  bool bias = true, affine = true, final_norm = true, tied = true;
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
  CHUNKPLAN_ASSIGN_OR_RETURN(s.tied,
                             OutputTied(cfg, architecture == "OPTForCausalLM"));
  return s;
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
    b.Repeat("layers", s.layers, [&](uint64_t) { Layer(b, s); });
  });
  // OPTForCausalLM: lm_head (tied to embed_tokens unless untied).
  if (lm_head && !s.tied) Linear(b, "lm_head", s.proj, s.vocab, false);
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
          "ignore the sequence parallelism flag."};
  static const Family family{"opt",
                             {"OPTForCausalLM", "OPTModel"},
                             R"({
        "vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12,
        "ffn_dim": 3072, "max_position_embeddings": 2048,
        "num_attention_heads": 12, "do_layer_norm_before": true,
        "_remove_final_layer_norm": false, "word_embed_proj_dim": null,
        "enable_bias": true, "layer_norm_elementwise_affine": true,
        "tie_word_embeddings": true})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
