#ifndef CHUNKPLAN_SERVER_MODELS_DECODER_H_
#define CHUNKPLAN_SERVER_MODELS_DECODER_H_

// The parts LLaMA and its descendants (Mistral, Mixtral, Qwen2, Qwen2-MoE,
// Gemma, Gemma-2, Phi-3) share: grouped-query attention, the gated MLP, and
// the decoder stack with its optional language-model head.

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/models/hf_config.h"
#include "server/models/model_description.h"
#include "server/models/param_builder.h"

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
// (where `o_bias`).
void Attention(ParamBuilder& b, const HeadDims& dims, uint64_t hidden,
               bool qkv_bias, bool o_bias);

// An MLP's gate_proj, up_proj, down_proj.
void GatedMlp(ParamBuilder& b, uint64_t hidden, uint64_t inter, bool bias);

// One RMS norm of width `hidden` named `name`, for each name.
void Norms(ParamBuilder& b, uint64_t hidden,
           std::initializer_list<absl::string_view> names);

// What the decoder stack reads: hidden_size, vocab_size, num_hidden_layers,
// tie_word_embeddings.
struct DecoderShape {
  uint64_t hidden = 0, vocab = 0, layers = 0;
  bool tied = false;
};
absl::StatusOr<DecoderShape> ReadDecoderShape(const HfConfig& cfg);

// Sets `d`'s hidden size and shape facts (decoder-only) from the stack, the
// heads and the MLP's intermediate size.
void SetDecoderFacts(const DecoderShape& shape, const HeadDims& dims,
                     uint64_t inter, ModelDescription& d);

// *Model (embed_tokens, layers.<i> = layer(i), norm) or, for an
// `architecture` that ends in ForCausalLM, that under "model" and then
// lm_head unless tied to embed_tokens.
void CausalLm(ParamBuilder& b, absl::string_view architecture,
              const DecoderShape& shape,
              absl::FunctionRef<void(uint64_t)> layer);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_DECODER_H_
