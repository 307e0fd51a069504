#ifndef CHUNKPLAN_SERVER_MODELS_FALCON_TRAITS_H_
#define CHUNKPLAN_SERVER_MODELS_FALCON_TRAITS_H_

// FalconDecoderLayer as the activation estimate models it (transformers
// 4.51.3's modeling_falcon.py): what its training forward saves, by the
// layout its config selects.

#include <cstdint>

#include "server/models/hf_config.h"
#include "server/models/model_description.h"

namespace chunkplan::models {

// The layout facts falcon.cc has read already.
struct FalconLayout {
  uint64_t head_dim = 0, heads = 0;
  bool new_arch = false;   // new_decoder_architecture
  bool parallel = true;    // parallel_attn
  bool two_norms = false;  // ln_attn and ln_mlp (num_ln_in_parallel_attn 2)
  bool tied = true;        // lm_head tied to word_embeddings
};

// Sets `t` for a Falcon layer: LayerNorm, the fused query_key_value (K and V
// picked by a list index and broadcast to every query head under the new
// architecture; one K/V head with multi_query; strided views of three full
// projections else), RoPE over the head, a 16-bit softmax without dropout,
// the non-gated MLP of `activation`, the MLP reading the attention's norm
// (parallel_attn, one norm), ln_mlp (two norms on the layer's input) or
// post_attention_layernorm (sequential), dropout_add after the attention
// (sequential: attention_dropout) and after the MLP (hidden_dropout),
// F.scaled_dot_product_attention called on its own q, k, v. Reads alibi,
// activation, hidden_dropout, attention_dropout, num_kv_heads and, without
// the new architecture, multi_query. Leaves t.not_estimated set, with the
// reason naming the key and value, for alibi true (ALiBi attention, not
// modelled), a layout FalconDecoderLayer.forward fails on, an activation not
// modelled or a value of the wrong type.
void SetFalconTraits(const HfConfig& cfg, const FalconLayout& layout,
                     DecoderTraits& t);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_FALCON_TRAITS_H_
