#ifndef CHUNKPLAN_SERVER_MODELS_DECODER_H_
#define CHUNKPLAN_SERVER_MODELS_DECODER_H_

// The parts LLaMA and its descendants (Mistral, Mixtral, Qwen2, Qwen2-MoE,
// Qwen3, Qwen3-MoE, Gemma, Gemma-2, Gemma-3, Phi-3, Cohere, DeepSeek,
// Llama 4) share: grouped-query attention, the gated MLP, and the decoder
// stack with its optional language-model head.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/models/hf_config.h"
#include "server/models/model_description.h"
#include "server/models/param_builder.h"
#include "server/models/tp_policy.h"

namespace chunkplan::models {

// The attention's head sizes, and the widths they give (each checked to fit
// in 64 bits).
struct HeadDims {
  uint64_t heads = 0, kv_heads = 0, head_dim = 0;
  uint64_t q_width = 0;   // heads * head_dim
  uint64_t kv_width = 0;  // kv_heads * head_dim
};

// num_attention_heads; num_key_value_heads (unset: the heads), which must
// divide them; head_dim (unset: hidden / heads, which must divide).
// INVALID_ARGUMENT naming the key.
absl::StatusOr<HeadDims> ReadHeadDims(const HfConfig& cfg, uint64_t hidden);

// self_attn: q_proj, k_proj, v_proj (with bias where `qkv_bias`), o_proj
// (where `o_bias`) and, where `qk_norm`, q_norm and k_norm (RMS norms of
// head_dim, as Qwen3 and Gemma-3 normalize each head).
void Attention(ParamBuilder& b, const HeadDims& dims, uint64_t hidden,
               bool qkv_bias, bool o_bias, bool qk_norm = false);

// An MLP's gate_proj, up_proj, down_proj.
void GatedMlp(ParamBuilder& b, uint64_t hidden, uint64_t inter, bool bias);

// One RMS norm of width `hidden` named `name`, for each name.
void Norms(ParamBuilder& b, uint64_t hidden,
           std::initializer_list<absl::string_view> names);

// What the decoder stack reads: hidden_size, vocab_size, num_hidden_layers,
// and, for an `architecture` with a head (ending in ForCausalLM),
// tie_word_embeddings (OutputTied).
struct DecoderShape {
  uint64_t hidden = 0, vocab = 0, layers = 0;
  bool tied = false;
};
absl::StatusOr<DecoderShape> ReadDecoderShape(const HfConfig& cfg,
                                              absl::string_view architecture);

// Sets `d`'s hidden size and shape facts (decoder-only) from the stack, the
// heads and the MLP's intermediate size.
void SetDecoderFacts(const DecoderShape& shape, const HeadDims& dims,
                     uint64_t inter, ModelDescription& d);

// Marks `d`'s layer as the one the activation estimate models: LLaMA's
// (RMS norms, the gated MLP, RoPE, an fp32 softmax), with hidden_act
// (unset: `act_default`) one of silu, swish, gelu, gelu_pytorch_tanh and
// attention_dropout read; any other value leaves traits.not_estimated set
// to the reason. Call after SetDecoderFacts (BuildDecoder).
void ModelLlamaLayer(const HfConfig& cfg, absl::string_view act_default,
                     ModelDescription& d,
                     absl::string_view act_key = "hidden_act");

// *Model (embed_tokens, layers.<i> = layer(i), norm) or, for an
// `architecture` that ends in ForCausalLM, that under "model" and then
// lm_head unless tied to embed_tokens. With `operations`, records the
// stack's own operations in forward order (embed_tokens, then what layer(i)
// records, norm, lm_head or the tied embed_tokens).
void CausalLm(ParamBuilder& b, absl::string_view architecture,
              const DecoderShape& shape,
              absl::FunctionRef<void(uint64_t)> layer, bool operations = false);

// A decoder's stack, heads and MLP width (intermediate_size).
struct Decoder {
  DecoderShape shape;
  HeadDims dims;
  uint64_t inter = 0;
};
absl::StatusOr<Decoder> ReadDecoder(const HfConfig& cfg,
                                    absl::string_view architecture);

// How a layer is laid out around its feed-forward part.
struct LayerStyle {
  bool qkv_bias = false, o_bias = false;   // the attention's biases
  bool qk_norm = false;                    // q_norm, k_norm after o_proj
  absl::string_view feed_forward = "mlp";  // the feed-forward part's scope
  bool feed_forward_norms = false;         // Gemma-2's norms around the MLP
  // The layer's modules in the order its forward calls them, one operation
  // each (names under the layer, e.g. "self_attn.q_proj"); empty: the
  // family has no operation sequence and none is recorded.
  std::span<const absl::string_view> forward_ops = {};
  // Where set, records layer i's feed-forward operations after
  // forward_ops (under the layer's scope): for a part whose operations
  // depend on the config (an MoE block's experts).
  std::function<void(uint64_t)> feed_forward_ops = nullptr;
};

// LlamaDecoderLayer.forward's order (modeling_llama.py, 4.51.3), which
// Mistral, Qwen2 and Gemma keep: input_layernorm; self_attn's q_proj,
// k_proj, v_proj, o_proj; post_attention_layernorm; mlp's
// down_proj(act(gate_proj(x)) * up_proj(x)).
inline constexpr absl::string_view kLlamaLayerOps[] = {
    "input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
    "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
// kLlamaLayerOps up to the feed-forward part (MoE layers record theirs
// through LayerStyle::feed_forward_ops).
inline constexpr std::span<const absl::string_view> kLlamaAttentionOps =
    std::span<const absl::string_view>(kLlamaLayerOps).first(6);

// Sets `d`'s shape facts and builds the decoder (CausalLm) whose layer i is
// self_attn (Attention with the style's biases and norms), feed_forward(i)
// under the style's scope, input_layernorm, post_attention_layernorm and,
// with feed_forward_norms, pre_feedforward_layernorm and
// post_feedforward_layernorm; with the style's forward_ops, the stack's and
// every layer's operations.
void BuildDecoder(ParamBuilder& b, absl::string_view architecture,
                  const Decoder& decoder, const LayerStyle& style,
                  absl::FunctionRef<void(uint64_t)> feed_forward,
                  ModelDescription& d);

// Reads the decoder and builds it with the gated MLP of intermediate_size
// (biased where `mlp_bias`) in every layer.
absl::Status BuildGatedDecoder(const HfConfig& cfg,
                               absl::string_view architecture,
                               const LayerStyle& style, bool mlp_bias,
                               ParamBuilder& b, ModelDescription& d);

// The ShardFormer rules LLaMA's policy and its copies (Mistral, Qwen2,
// Qwen3, Command) share: q_proj, k_proj, v_proj, gate_proj, up_proj
// Linear1D_Col; o_proj, down_proj Linear1D_Row; embed_tokens
// VocabParallelEmbedding1D; lm_head as `lm_head` (VocabParallelLMHead1D,
// or Qwen3's plain Linear1D_Col). Norms stay whole.
std::vector<TpRule> DecoderTpRules(TpLayer lm_head);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_DECODER_H_
