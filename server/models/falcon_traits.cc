#include "server/models/falcon_traits.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/models/mlp_activation.h"

namespace chunkplan::models {
namespace {

// Why FalconDecoderLayer (4.51.3) cannot run the layout, or "".
std::string BrokenLayout(const FalconLayout& l, std::optional<uint64_t> kv) {
  if (l.new_arch && !l.parallel) {
    // __init__ builds input_layernorm and post_attention_layernorm; forward
    // calls ln_attn (num_ln_in_parallel_attn 2) or leaves
    // mlp_layernorm_out unset.
    return "new_decoder_architecture true with parallel_attn false: "
           "FalconDecoderLayer.forward fails in transformers 4.51.3";
  }
  if (!l.new_arch && l.parallel && l.two_norms) {
    // __init__ builds ln_attn and ln_mlp; forward calls input_layernorm.
    return "num_ln_in_parallel_attn 2 without new_decoder_architecture: "
           "FalconDecoderLayer.forward calls input_layernorm, which it does "
           "not build";
  }
  if (kv.has_value() && *kv != l.heads) {
    // FalconAttention reshapes K and V to (b, num_kv_heads, s, d).
    return absl::StrCat("num_kv_heads ", *kv,
                        " with multi_query false and the old architecture: "
                        "FalconAttention's reshape fails (",
                        l.heads, " heads)");
  }
  return "";
}

}  // namespace

void SetFalconTraits(const HfConfig& cfg, const FalconLayout& layout,
                     DecoderTraits& t) {
  t.head_dim = layout.head_dim;
  t.norm = "layer_norm";
  t.gated_mlp = false;
  t.tied_embeddings = layout.tied;
  t.fused_qkv = t.direct_sdpa = true;
  // FalconDecoderLayer.forward keeps attention_output bound to its end.
  t.attention_output_held = true;
  t.fp32_softmax = false;  // softmax(..., dtype=hidden_states.dtype)
  const absl::StatusOr<bool> alibi = cfg.Flag("alibi");
  const absl::StatusOr<std::optional<std::string>> act =
      cfg.OptionalText("activation");
  const absl::StatusOr<bool> hidden = cfg.NonZeroProbability("hidden_dropout");
  const absl::StatusOr<bool> attn = cfg.NonZeroProbability("attention_dropout");
  const absl::StatusOr<std::optional<uint64_t>> kv =
      cfg.OptionalSize("num_kv_heads");
  absl::StatusOr<bool> multi_query = false;
  if (!layout.new_arch) multi_query = cfg.Flag("multi_query");
  for (const absl::Status& s :
       {alibi.status(), act.status(), hidden.status(), attn.status(),
        kv.status(), multi_query.status()}) {
    if (!s.ok()) {
      t.not_estimated = std::string(s.message());
      return;
    }
  }
  t.kv_broadcast = layout.new_arch;
  t.indexed_kv = layout.new_arch || *multi_query;
  t.value_view = !t.indexed_kv;  // V a strided view of the fused output
  t.single_norm = layout.parallel && !layout.two_norms;
  t.parallel_residual = layout.parallel && layout.two_norms;
  // dropout_add after the attention (sequential layers only, with
  // attention_dropout) and after the MLP (hidden_dropout); the rotary
  // path drops nothing of the probabilities.
  const int masks = (!layout.parallel && *attn ? 1 : 0) + (*hidden ? 1 : 0);
  t.hidden_dropout = masks > 0;
  t.one_residual_mask = masks == 1;
  if (!SetMlpActivation("activation", act->value_or("gelu"), t)) return;
  const std::string broken =
      BrokenLayout(layout, t.value_view ? *kv : std::nullopt);
  if (*alibi) {
    t.not_estimated =
        "alibi true (ALiBi attention, Falcon-RW's) is not modelled";
  } else if (!broken.empty()) {
    t.not_estimated = broken;
  } else {
    t.not_estimated.clear();
  }
}

}  // namespace chunkplan::models
