// Cohere Command-R (model_type "cohere"): transformers' CohereModel and
// CohereForCausalLM (modeling_cohere.py, 4.51.3): attention and MLP side by
// side after one norm per layer; the norms are CohereLayerNorm (a weight, no
// bias); q_norm and k_norm, one weight row per head, where use_qk_norm;
// lm_head tied by default.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// The layer the activation estimate models: LLaMA's attention and gated
// MLP (ModelLlamaLayer) side by side on one CohereLayerNorm, whose kind
// q_norm and k_norm share where use_qk_norm.
void ModelCohereLayer(const HfConfig& cfg, bool qk_norm, ModelDescription& d) {
  ModelLlamaLayer(cfg, "silu", d);
  d.traits.norm = "cohere_layer_norm";
  d.traits.parallel_block = true;
  d.traits.qk_norm = qk_norm;
}

// CohereDecoderLayer.forward's operations: input_layernorm, q_proj,
// k_proj, v_proj, q_norm and k_norm (where use_qk_norm), o_proj, then the
// MLP's gate_proj, up_proj, down_proj. Backward runs them in reverse: the
// MLP's nodes, created last, come first in autograd's order.
void CohereLayerOps(ParamBuilder& b, bool qk_norm) {
  for (absl::string_view op : {"input_layernorm", "self_attn.q_proj",
                               "self_attn.k_proj", "self_attn.v_proj"}) {
    b.Op({op});
  }
  if (qk_norm) {
    b.Op({"self_attn.q_norm"});
    b.Op({"self_attn.k_norm"});
  }
  for (absl::string_view op :
       {"self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
    b.Op({op});
  }
}

// CohereDecoderLayer: self_attn (q, k, v, o with attention_bias, then
// q_norm [heads, head_dim] and k_norm [kv_heads, head_dim]), mlp,
// input_layernorm. CohereLayerNorm's weight has RmsNorm's shape.
absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(Decoder decoder, ReadDecoder(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool qk_norm, cfg.Flag("use_qk_norm"));
  SetDecoderFacts(decoder.shape, decoder.dims, decoder.inter, d);
  const HeadDims& dims = decoder.dims;
  const uint64_t h = decoder.shape.hidden;
  CausalLm(
      b, architecture, decoder.shape,
      [&](uint64_t) {
        Attention(b, dims, h, bias, bias);
        if (qk_norm) {
          b.In("self_attn", [&] {
            b.Add("q_norm.weight", {dims.heads, dims.head_dim});
            b.Add("k_norm.weight", {dims.kv_heads, dims.head_dim});
          });
        }
        b.In("mlp", [&] { GatedMlp(b, h, decoder.inter, /*bias=*/false); });
        RmsNorm(b, "input_layernorm", h);
        CohereLayerOps(b, qk_norm);
      },
      /*operations=*/true);
  ModelCohereLayer(cfg, qk_norm, d);
  return absl::OkStatus();
}

}  // namespace

// CohereConfig's defaults (configuration_cohere.py, 4.51.3: Command-R's
// shape); no head_dim key (hidden / heads unless the config gives one).
const Family& CohereFamily() {
  // ColossalAI's CommandPolicy (shardformer/policies/command.py); the
  // per-head q_norm and k_norm stay whole. At any tp_size it swaps in an
  // attention forward that asserts a dict mask, which only ColossalAI's
  // model forward builds, installed with enable_flash_attention (a
  // GeminiPlugin argument chunkplan does not model) or sequence
  // parallelism (whose own assert then fails first): refused
  // (docs/tensor-parallelism.md).
  static const TpPolicy tp{
      .file = "command",
      .rules = DecoderTpRules(TpLayer::kVocab),
      .kv_heads_key = "num_key_value_heads",
      .kv_heads_at_least_tp = true,
      .refuses_tp =
          "CommandPolicy replaces CohereAttention.forward at every tp_size "
          "(policies/command.py:79-85) with one that turns flash attention "
          "on and asserts \"Flash Attention Error: attention_mask should be "
          "a dict.\" (modeling/command.py:395-398); only ColossalAI's model "
          "forward builds that dict, installed with enable_flash_attention "
          "or enable_sequence_parallelism (command.py:86-99; sequence "
          "parallelism then fails first: \"Must specify sp_size and sp_group "
          "for sequence parallel\", modeling/command.py:360-363), and "
          "GeminiPlugin's default passes transformers' tensor mask: the "
          "first forward fails; use tp_size 1"};
  static const Family family{"cohere",
                             {"CohereForCausalLM", "CohereModel"},
                             R"({
        "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528,
        "num_hidden_layers": 40, "num_attention_heads": 64,
        "num_key_value_heads": null, "head_dim": null,
        "attention_bias": false, "use_qk_norm": false,
        "tie_word_embeddings": true})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
