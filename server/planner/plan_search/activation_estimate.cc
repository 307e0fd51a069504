#include "chunkplan/planner/activation_estimate.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/planner/plan_search/activation_arith.h"
#include "server/planner/plan_search/activation_deepseek_v2.h"
#include "server/planner/plan_search/activation_llama4.h"
#include "server/planner/plan_search/activation_mla.h"
#include "server/planner/plan_search/activation_sp.h"
#include "server/planner/plan_search/activation_tp.h"

namespace chunkplan::planner {
namespace {

using activation::Checked;
using activation::Dims;
using activation::Less;
using activation::Max;
using activation::Mul;
using activation::Sum;
using activation::Wide;

// `value` as a uint64 in *out, or INVALID_ARGUMENT naming `part`.
absl::Status Narrow(Checked value, absl::string_view part, uint64_t* out) {
  if (!value.has_value() || *value > UINT64_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("activations.", part, " exceeds 2^64-1 bytes"));
  }
  *out = static_cast<uint64_t>(*value);
  return absl::OkStatus();
}

// The MoE block's sizes where some layer is sparse: INVALID_ARGUMENT
// naming the first that is 0 or out of range.
absl::Status CheckMoe(const TransformerShape& shape) {
  if (shape.moe_layers == 0) return absl::OkStatus();
  for (const auto& [value, field] :
       {std::tuple{shape.num_experts, "shape.num_experts"},
        std::tuple{shape.experts_per_token, "shape.experts_per_token"},
        std::tuple{shape.moe_intermediate_size,
                   "shape.moe_intermediate_size"}}) {
    if (value == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, " must be at least 1 when shape.moe_layers is set"));
    }
  }
  if (shape.experts_per_token > shape.num_experts) {
    return absl::InvalidArgumentError(
        "shape.experts_per_token must be at most shape.num_experts");
  }
  if (shape.moe_layers > shape.num_layers) {
    return absl::InvalidArgumentError(
        "shape.moe_layers must be at most shape.num_layers");
  }
  return absl::OkStatus();
}

// INVALID_ARGUMENT naming the first size that is 0 or does not divide
// (UNIMPLEMENTED for a family not modelled, after the workload's sizes);
// else the dimensions (head_dim, kv heads and the MLP width defaulted).
absl::StatusOr<Dims> DimsOf(const TransformerShape& shape,
                            const ActivationWorkload& workload) {
  for (const auto& [value, field] :
       {std::tuple{uint64_t{workload.micro_batch}, "workload.micro_batch"},
        std::tuple{uint64_t{workload.sequence_length},
                   "workload.sequence_length"}}) {
    if (value == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " must be at least 1"));
    }
  }
  if (!shape.not_estimated.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "activations: not estimated for this family: ", shape.not_estimated));
  }
  for (const auto& [value, field] :
       {std::tuple{shape.num_layers, "shape.num_layers"},
        std::tuple{shape.hidden_size, "shape.hidden_size"},
        std::tuple{shape.num_attention_heads, "shape.num_attention_heads"},
        std::tuple{shape.vocab_size, "shape.vocab_size"}}) {
    if (value == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " must be at least 1"));
    }
  }
  Dims d;
  d.b = workload.micro_batch;
  d.s = workload.sequence_length;
  d.bs = d.b * d.s;
  d.h = shape.hidden_size;
  d.a = shape.num_attention_heads;
  d.v = shape.vocab_size;
  d.kv = shape.num_key_value_heads == 0 ? d.a : shape.num_key_value_heads;
  if (d.a % d.kv != 0) {
    return absl::InvalidArgumentError(
        "shape.num_key_value_heads must divide shape.num_attention_heads");
  }
  if (shape.head_dim == 0 && d.h % d.a != 0) {
    return absl::InvalidArgumentError(
        "shape.hidden_size / shape.num_attention_heads must divide when "
        "shape.head_dim is unset");
  }
  if (absl::Status moe = CheckMoe(shape); !moe.ok()) return moe;
  d.d = shape.head_dim != 0 ? Wide{shape.head_dim} : d.h / d.a;
  d.inter =
      shape.intermediate_size != 0 ? Wide{shape.intermediate_size} : 4 * d.h;
  d.rotary = shape.rotary_dim != 0 ? Wide{shape.rotary_dim} : d.d;
  d.e = shape.embed_proj_dim != 0 ? Wide{shape.embed_proj_dim} : d.h;
  if (absl::Status mla = activation::CheckMla(shape, d.d); !mla.ok()) {
    return mla;
  }
  if (absl::Status l4 = activation::CheckLlama4(shape); !l4.ok()) return l4;
  return d;
}

// CohereLayerNorm over `rows` x `width` elements with a weight of
// `weight` elements (per head for q_norm and k_norm): x - mean twice (pow's
// input, the normalizing product's), rsqrt, the normalized x (weight's
// factor) and weight.to(fp32), all fp32.
Checked CohereNormSaved(Checked rows, Wide width, Wide weight) {
  return Sum({Mul({rows, width, 12}), Mul({rows, 4}), Mul({weight, 4})});
}

// One norm over `rows` x `width` elements: what its own ops save (its
// output, kept by the next projection, is counted by the caller).
Checked NormSaved(NormKind kind, Checked rows, Wide width) {
  switch (kind) {
    case NormKind::kRmsNorm:  // fp32 x (pow, mul), fp32 rsqrt, 16-bit x/rms
      return Sum(
          {Mul({rows, width, 4}), Mul({rows, 4}), Mul({rows, width, 2})});
    case NormKind::kGemmaRmsNorm:  // fp32 x, rsqrt, x/rms, (1 + w) in fp32
      return Sum({Mul({rows, width, 8}), Mul({rows, 4}), Wide{width} * 4});
    case NormKind::kLayerNorm:  // 16-bit input, fp32 mean and rstd
      return Sum({Mul({rows, width, 2}), Mul({rows, 8})});
    case NormKind::kCohereLayerNorm:
      return CohereNormSaved(rows, width, width);
  }
  return std::nullopt;
}

Attention Resolved(Attention attention) {
  return attention == Attention::kDefault ? Attention::kSdpa : attention;
}

// K (or V) as eager attention's matmul keeps it: repeat_kv's expand +
// reshape is a view when kv = 1, and so is matmul's reshape to bmm's batch
// when b = 1 (size-1 dimensions take any stride): then the kv-wide tensor
// itself; else a copy as wide as q.
Checked EagerKv(const Dims& d) {
  if (d.kv == 1 && d.b == 1) return Mul({d.s, d.d, 2});
  return Mul({d.bs, d.a, d.d, 2});
}

// Bytes of one N = b x s x h 16-bit tensor, a dropout mask (1 byte) of it.
Checked Hidden(const Dims& d, Wide bytes) { return Mul({d.bs, d.h, bytes}); }

// The fused q/k/v projection's 16-bit output.
Checked FusedQkv(const Dims& d) { return Mul({d.bs, d.a + 2 * d.kv, d.d, 2}); }

// V as eager attention's PV matmul keeps it. Where V is a strided view of
// the fused q/k/v output (GPT-NeoX's value_view), matmul's reshape to bmm's
// batch is a view when b, a or s is 1 and bmm keeps the whole output. With
// one fused q/k/v projection and RoPE otherwise (Phi-3's qkv_proj), q and k
// are RoPE's fresh tensors but v stays a slice of the fused output,
// (b, kv, s, d) with strides (sW, d, W, 1), W = (a + 2kv)d: repeat_kv's and
// matmul's reshapes stay views where b = 1 and kv is 1 or a, or where
// a = 1, and then the whole fused output is kept. (Without RoPE, GPT-2's
// q, k and v are all views of one storage: as many bytes as three.) Else
// (and for Falcon's V, a list index's copy) as EagerKv.
Checked EagerV(const TransformerShape& t, const Dims& d) {
  if (t.value_view) {
    return (d.b == 1 || d.a == 1 || d.s == 1) ? FusedQkv(d) : EagerKv(d);
  }
  if (t.fused_qkv && t.rotary && !t.indexed_kv &&
      ((d.b == 1 && (d.kv == 1 || d.kv == d.a)) || d.a == 1)) {
    return FusedQkv(d);
  }
  return EagerKv(d);
}

// Falcon's new architecture: V broadcast to every query head, a copy
// (flatten) unless kv is 1 (a stride-0 view of its one head).
Checked BroadcastV(const Dims& d) {
  if (d.kv == 1) return Mul({d.bs, d.d, 2});
  return Mul({d.bs, d.a, d.d, 2});
}

// BLOOM: q, k and v reshaped to (b a, s, d) stay views of the fused
// output when b, a or s is 1.
bool AlibiViews(const Dims& d) { return d.b == 1 || d.a == 1 || d.s == 1; }

// V as the PV matmul keeps it, released with PV's backward (BLOOM's views:
// the fused output, still held by the scores' baddbmm: nothing).
Checked PvOperand(const TransformerShape& t, const Dims& d) {
  if (t.alibi) {
    return AlibiViews(d) ? Checked{Wide{0}} : Mul({d.bs, d.a, d.d, 2});
  }
  return EagerV(t, d);
}

// q, k and v as eager attention's matmuls keep them: BLOOM's baddbmm and
// bmm the fused output once (views) or three copies; else q and k (fp32
// for GPT-J; K rotated at every query head where kv_broadcast) and V.
Checked EagerQkv(const TransformerShape& t, const Dims& d) {
  const Checked q = Mul({d.bs, d.a, d.d, 2});
  if (t.alibi) return AlibiViews(d) ? FusedQkv(d) : Mul({q, 3});
  const Wide qk = t.gptj_rotary ? 2 : 1;  // GPT-J: q and k in fp32
  const Checked k = t.kv_broadcast ? q : EagerKv(d);
  return Sum({Mul({q, qk}), Mul({k, qk}), EagerV(t, d)});
}

// Whether the attention saves what eager saves: eager, or (direct_sdpa)
// F.scaled_dot_product_attention on fewer key/value heads than query
// heads, which neither fused kernel takes (torch >= 2.2 sdp_utils_cpp.h,
// check_batch_size_and_num_heads_dense): the math path's 16-bit saves.
bool EagerPath(const TransformerShape& t, const Dims& d, Attention attention) {
  const Attention a = Resolved(attention);
  return a == Attention::kEager ||
         (a == Attention::kSdpa && t.direct_sdpa && t.kv_lora_rank == 0 &&
          !t.kv_broadcast && d.kv != d.a);
}

// V as flash_attention_2 keeps it, at its own heads: flash-attn copies only
// a tensor whose last stride is not 1, so a fused projection's slice keeps
// the fused output's whole storage (GPT-NeoX's view; with RoPE, see EagerV).
// Falcon's K and V are picked by a list index (copies): V at its heads, or
// the broadcast under the new architecture.
Checked KernelV(const TransformerShape& t, const Dims& d) {
  if (t.kv_broadcast) return BroadcastV(d);
  if (t.value_view || (t.fused_qkv && t.rotary && !t.indexed_kv)) {
    return FusedQkv(d);
  }
  return Mul({d.bs, d.kv, d.d, 2});
}

// The second norm's saves: with a parallel residual a LayerNorm reads the
// layer's input, saved by the first norm already.
Checked SecondNormSaved(const TransformerShape& t, const Dims& d) {
  const Checked norm = NormSaved(t.norm, d.bs, d.h);
  if (t.parallel_residual && t.norm == NormKind::kLayerNorm) {
    return Less(norm, Hidden(d, 2));
  }
  return norm;
}

// The second norm's saves and its output, which the MLP keeps (none with
// one norm a layer; `sparse` DeepseekV2MoE without shared experts keeps
// only its router's fp32 copy of it, counted with the block).
Checked SecondNormAndOutput(const TransformerShape& t, const Dims& d,
                            bool sparse) {
  if (t.single_norm || t.parallel_block) return Wide{0};
  const bool kept =
      !(sparse && t.deepseek_v2 && t.shared_expert_intermediate_size == 0);
  return Sum({SecondNormSaved(t, d), kept ? Hidden(d, 2) : Checked{Wide{0}}});
}

// The loss's targets (int64): labels padded by one, then [..., 1:]
// .contiguous(), a copy of b x s, or with b = 1 already contiguous, the
// padded storage of s + 1.
Checked Targets(const Dims& d) {
  return d.b == 1 ? Mul({d.s + 1, 8}) : Mul({d.bs, 8});
}

// q_norm and k_norm over (b s a, d) and (b s kv, d): Qwen3's RMS norms, or
// Cohere's LayerNorms (a weight row per head).
Checked QkNormSaved(const TransformerShape& t, const Dims& d) {
  if (!t.qk_norm) return Wide{0};
  if (t.norm == NormKind::kCohereLayerNorm) {
    return Sum({CohereNormSaved(Mul({d.bs, d.a}), d.d, d.a * d.d),
                CohereNormSaved(Mul({d.bs, d.kv}), d.d, d.kv * d.d)});
  }
  // (Gemma-3's are GemmaRMSNorms, the family's own kind)
  const NormKind kind = t.norm == NormKind::kGemmaRmsNorm
                            ? NormKind::kGemmaRmsNorm
                            : NormKind::kRmsNorm;
  return Sum({NormSaved(kind, Mul({d.bs, d.a}), d.d),
              NormSaved(kind, Mul({d.bs, d.kv}), d.d)});
}

// What one layer's attention saves, its input (the norm's output) aside.
Checked AttentionSaved(const TransformerShape& t, const Dims& d,
                       Attention attention) {
  const Checked q = Mul({d.bs, d.a, d.d, 2});    // 16 bits, a heads
  const Checked kv = Mul({d.bs, d.kv, d.d, 2});  // 16 bits, kv heads
  const Checked lse = Mul({d.bs, d.a, 4});       // fp32 log-sum-exp
  // GPT-J's per-layer fp32 sin and cos, two for q and two for k.
  const Checked out =
      Sum({QkNormSaved(t, d),
           t.gptj_rotary ? Mul({d.s, d.rotary, 16}) : Checked{Wide{0}},
           activation::Llama4QkNormSaved(t, d),
           activation::Llama4TemperatureSaved(t, d)});
  if (t.kv_lora_rank != 0) {  // DeepSeek's latent attention
    return Sum({out, activation::MlaAttentionSaved(t, d, Resolved(attention)),
                t.deepseek_v2 ? activation::DeepseekV2RopeSaved(t, d)
                              : Checked{Wide{0}}});
  }
  // Falcon's new architecture: K at every query head.
  const Checked k = t.kv_broadcast ? q : kv;
  switch (EagerPath(t, d, attention) ? Attention::kEager
                                     : Resolved(attention)) {
    case Attention::kFlashAttention2:  // q, k, v (kv heads; the fused
                                       // output where a view of it), out,
                                       // lse, rng_state (2 x int64)
      return Sum({out, q, k, KernelV(t, d), q, lse, Wide{16}});
    case Attention::kSdpa:  // q, k, v repeated to a heads, out, lse; the
                            // tensors passed where direct_sdpa
      return Sum({out, q, q,
                  (t.direct_sdpa && t.value_view) ? FusedQkv(d)
                  : t.kv_broadcast                ? BroadcastV(d)
                                                  : q,
                  q, lse});
    default:
      break;
  }
  const Checked p = Mul({d.b, d.a, d.s, d.s});  // the s x s scores
  // softmax keeps its result (fp32 when upcast); PV's left factor is the
  // 16-bit copy, or with dropout its 1-byte mask and output (the softmax
  // result itself when neither).
  const Checked softmax = Mul({p, t.fp32_softmax ? Wide{4} : Wide{2}});
  const Checked for_pv = t.attention_dropout ? Mul({p, 3})
                         : t.fp32_softmax    ? Mul({p, 2})
                                             : Checked{Wide{0}};
  const Checked scale = t.scale_by_tensor ? Checked{Wide{2}} : Wide{0};
  // Gemma-2's soft-capping: tanh keeps its 16-bit result.
  const Checked softcap = t.attn_softcap ? Mul({p, 2}) : Checked{Wide{0}};
  // q and k (repeated to a heads) for QK^T, v for PV, o_proj's input.
  return Sum({out, EagerQkv(t, d), softmax, for_pv, scale, q, softcap});
}

// What one layer's MLP saves, its input aside.
Checked MlpSaved(const TransformerShape& t, const Dims& d) {
  const Checked i = Mul({d.bs, d.inter, 2});
  const Wide saves = t.activation == MlpActivation::kGeluNew    ? 4
                     : t.activation == MlpActivation::kGeluFast ? 7
                     : t.activation == MlpActivation::kRelu     ? 0
                                                                : 1;
  const Checked act = Mul({i, saves});
  if (t.gated_mlp) {  // act's saves, act(gate), up, the product
    return Sum({act, i, i, i});
  }
  return Sum({act, i});  // act's saves, down's input (relu's result)
}

// A gated MLP's backward over `tokens` of width `inter`, above its saves:
// down_proj's input gradient with its weight's (freed once Gemini takes
// it), or the last product's three gradients once down_proj's input is
// released.
Checked MlpStep(const Dims& d, Checked tokens, Wide inter) {
  const Checked i = Mul({tokens, inter, 2});
  return Max(Sum({i, Mul({d.h, inter, 2})}), Mul({i, 2}));
}

// Gemma-2's post_attention_layernorm and post_feedforward_layernorm (of
// o_proj's and down_proj's outputs): their saves; their outputs go to the
// residual add, which keeps nothing.
Checked SandwichNorms(const TransformerShape& t, const Dims& d) {
  if (!t.four_norms) return Wide{0};
  return Mul({NormSaved(t.norm, d.bs, d.h), 2});
}

// Qwen2-MoE's shared expert's saves: its gated MLP, sigmoid's result and
// its output (0 without one).
Checked SharedSaved(const TransformerShape& t, const Dims& d) {
  const uint64_t shared = t.shared_expert_intermediate_size;
  if (t.deepseek_moe || t.deepseek_v2) {
    return activation::DeepseekSharedSaved(t, d);
  }
  if (shared == 0) return Wide{0};
  return Sum({Mul({d.bs, shared, 8}), Mul({d.bs, 2}), Hidden(d, 2)});
}

// MoE layers (docs/plan.md, "MoE layers"): what the sparse block saves,
// its input (the norm's output) aside. The router: softmax's fp32 result,
// topk's int64 indices and, with norm_topk_prob, div_'s divisor and the
// weights' fp32 clone; per token-expert pair (b s k of them, however the
// router splits them among the experts): torch.where's two int64 indices,
// the token's state, the expert's gated MLP, its output, the 16-bit
// routing weight and the weighted output index_add_ keeps; the shared
// expert's MLP, sigmoid's result and its output.
Checked MoeSaved(const TransformerShape& t, const Dims& d) {
  if (t.deepseek_moe) return activation::DeepseekMoeSaved(t, d);
  if (t.deepseek_v2) return activation::DeepseekV2MoeSaved(t, d);
  if (t.llama4) return activation::Llama4MoeSaved(t, d);
  const Checked pairs = Mul({d.bs, t.experts_per_token});
  const Checked norm_topk = t.norm_topk_prob
                                ? Sum({Mul({d.bs, 4}), Mul({pairs, 4})})
                                : Checked{Wide{0}};
  const Checked router =
      Sum({Mul({d.bs, t.num_experts, 4}), Mul({pairs, 8}), norm_topk});
  const Checked per_pair =
      Sum({Wide{18}, Mul({d.h, 6}), Mul({t.moe_intermediate_size, Wide{8}})});
  return Sum({router, Mul({pairs, per_pair}), SharedSaved(t, d)});
}

// The sparse block's backward above its saves and the residual stream's
// gradient, at the bound that every token reaches the expert whose
// backward runs first: the shared expert's MLP (its backward runs first,
// all saves held), that expert's MLP over all b s tokens once the shared
// expert's saves are released, or the input gradients index_backward
// scatters (6N).
Checked MoeBackward(const TransformerShape& t, const Dims& d) {
  if (t.llama4) {  // (its shared expert as wide as an expert)
    return activation::Llama4MoeBackward(
        t, d, MlpStep(d, d.bs, t.moe_intermediate_size));
  }
  const uint64_t shared = t.shared_expert_intermediate_size;
  const Checked shared_step =
      shared == 0 ? Checked{Wide{0}} : MlpStep(d, d.bs, shared);
  if (t.deepseek_v2) {
    return activation::DeepseekV2MoeBackward(
        t, d, shared_step, MlpStep(d, d.bs, t.moe_intermediate_size),
        SharedSaved(t, d));
  }
  const Checked routed =
      Less(MlpStep(d, d.bs, t.moe_intermediate_size), SharedSaved(t, d));
  return Max(Max(shared_step, routed), Hidden(d, 6));
}

// Re-running a sparse block under checkpointing, past its experts: the
// one-hot expert mask (b s k E int64), the residual and the output the
// experts index_add into (and, with a shared expert, its scaled output and
// the sum), above the layer's saves and the incoming gradient.
Checked MoeForward(const TransformerShape& t, const Dims& d) {
  if (t.deepseek_v2) return activation::DeepseekV2MoeForward(t, d);
  const Checked mask = Mul({d.bs, t.experts_per_token, t.num_experts, 8});
  // DeepseekV3MoE: the fp32 sum; its shared experts run after the routed.
  const bool shared = t.shared_expert_intermediate_size != 0 && !t.deepseek_moe;
  return Sum({mask, Hidden(d, 4), shared ? Hidden(d, 4) : Checked{Wide{0}}});
}

// The residual dropouts' 1-byte masks: two (after attention, after the
// MLP), or one (one_residual_mask).
Checked ResidualMasks(const TransformerShape& t, const Dims& d) {
  if (!t.hidden_dropout) return Wide{0};
  return Hidden(d, t.one_residual_mask ? 1 : 2);
}

// One decoder layer's saves without checkpointing (`sparse`: an MoE layer,
// the sparse block in place of the MLP).
Checked LayerSaved(const TransformerShape& t, const Dims& d,
                   Attention attention, bool sparse) {
  const Checked norm = Sum({NormSaved(t.norm, d.bs, d.h), Hidden(d, 2)});
  // GPT-J's and Cohere's attention and MLP read one norm's output.
  const Checked second_norm = SecondNormAndOutput(t, d, sparse);
  // Falcon's K and V list indices (int64, one element each).
  const Checked indices = t.indexed_kv ? Checked{Wide{16}} : Wide{0};
  return Sum({norm, AttentionSaved(t, d, attention), second_norm,
              sparse ? MoeSaved(t, d) : MlpSaved(t, d), ResidualMasks(t, d),
              indices, SandwichNorms(t, d)});
}

// The logits the model returns, held through backward: 16-bit, or fp32
// where the family casts them (GPT-J).
Checked Logits(const TransformerShape& t, const Dims& d) {
  return Mul({d.bs, d.v, t.fp32_logits ? Wide{4} : Wide{2}});
}

// The workload as the family runs it: the default attention is eager
// where the family has no sdpa path, which refuses ATTENTION_SDPA.
absl::StatusOr<ActivationWorkload> AsRun(const TransformerShape& t,
                                         const ActivationWorkload& w) {
  ActivationWorkload run = w;
  if (t.no_flash && w.attention == Attention::kFlashAttention2) {
    return absl::InvalidArgumentError(
        "workload.attention: ATTENTION_FLASH_ATTENTION_2: the family has no "
        "flash_attention_2 path in transformers 4.51.3");
  }
  if (!t.no_sdpa) return run;
  if (w.attention == Attention::kSdpa) {
    return absl::InvalidArgumentError(
        "workload.attention: ATTENTION_SDPA: the family has no sdpa path in "
        "transformers 4.51.3 (its default is eager)");
  }
  if (w.attention == Attention::kDefault) run.attention = Attention::kEager;
  return run;
}

// OPT's positions: position_ids (b, s) from the mask's cumsum, the
// embedding keeping position_ids + 2; under checkpointing position_ids and
// cache_position are arguments of every layer too.
Checked MaskPositions(const Dims& d, bool checkpointing) {
  if (!checkpointing) return Mul({d.bs, 8});
  return Sum({Mul({d.bs, 16}), Mul({d.s, 8})});
}

// The final norm's own saves (none where the family has none).
Checked FinalNormSaved(const TransformerShape& t, const Dims& d) {
  return t.no_final_norm ? Checked{Wide{0}} : NormSaved(t.norm, d.bs, d.h);
}

// OPT's project_in and project_out where the embedding is narrower or wider
// than h: project_in's input and lm_head's (project_out's output).
Checked Projections(const Dims& d) {
  if (d.e == d.h) return Wide{0};
  return Mul({d.bs, d.e, 4});
}

// The rotary tables (cos and sin) kept: Gemma-3's local table beside the
// global one where layers of each kind keep theirs, or, under
// checkpointing, both held as every layer's arguments.
Wide RotaryTables(const TransformerShape& t, bool checkpointing) {
  if (!t.local_rotary) return 1;
  return (checkpointing || t.both_rotary_used) ? 2 : 1;
}

// Saves outside the layers but the loss.
Checked OutsideSaved(const TransformerShape& t, const Dims& d,
                     const ActivationWorkload& w) {
  const bool ckpt = w.activation_checkpointing;
  const bool eager = Resolved(w.attention) == Attention::kEager;
  const Checked indices = Mul({d.bs, 8});  // input_ids (int64)
  // position_ids: the learned embedding keeps them; under checkpointing
  // they are an argument of every layer (cache_position's storage).
  const Checked positions = t.mask_positions ? MaskPositions(d, ckpt)
                            : ((!t.rotary && !t.alibi) || ckpt)
                                ? Mul({d.s, 8})
                                : Checked{Wide{0}};
  // cos and sin, (1, s, rotary width) 16-bit, kept by RoPE's
  // multiplications.
  // (Llama 4's complex64 table, the same bytes, is a tensor argument of
  // every checkpointed layer: saved. DeepSeek-V2's layers gather their
  // own: none outside them.)
  const Checked rotary =
      (t.rotary && !t.gptj_rotary && !t.deepseek_v2 && (!ckpt || t.llama4))
          ? Mul({d.s, d.rotary, 4, RotaryTables(t, false)})
          : Checked{Wide{0}};
  // The eager mask the checkpoint keeps as an argument: the causal
  // (b, 1, s, s) mask, or GPT-2's padding row (b, 1, 1, s).
  Checked mask = Wide{0};
  if (ckpt && eager) {
    mask = (t.rotary || t.mask_positions || t.alibi) ? Mul({d.b, d.s, d.s, 2})
                                                     : Mul({d.bs, 2});
  }
  // BLOOM: the alibi (b a, 1, s) 16-bit, a checkpoint argument; the
  // LayerNorm after the word embeddings.
  const Checked alibi =
      (ckpt && t.alibi) ? Mul({d.b, d.a, d.s, 2}) : Checked{Wide{0}};
  const Checked embedding_norm =
      t.embedding_norm ? NormSaved(t.norm, d.bs, d.h) : Checked{Wide{0}};
  const Checked embed_mask =
      t.embedding_dropout ? Hidden(d, 1) : Checked{Wide{0}};
  const Checked normalizer = t.embed_scale ? Checked{Wide{2}} : Wide{0};
  const Checked final_norm = Sum({FinalNormSaved(t, d), Hidden(d, 2)});
  // Gemma-2's final soft-capping: tanh keeps its 16-bit (b, s, v) result.
  const Checked softcap =
      t.final_softcap ? Mul({d.bs, d.v, 2}) : Checked{Wide{0}};
  return Sum({indices, positions, rotary, mask, embed_mask, normalizer,
              final_norm, Projections(d), softcap, alibi, embedding_norm});
}

// Bytes a norm's backward holds above its saves per element of its input,
// besides the input's gradient: measured with torch.profiler on the
// oracle's norms (docs/plan.md, "Transients"): RMSNorm's fp32 chain 18,
// Gemma's 16, LayerNorm's fused kernel 3, Cohere's fp32 LayerNorm 12.
Checked NormBackward(NormKind kind, const Dims& d) {
  const Wide per_element = kind == NormKind::kRmsNorm           ? 18
                           : kind == NormKind::kGemmaRmsNorm    ? 16
                           : kind == NormKind::kCohereLayerNorm ? 12
                                                                : 3;
  return Mul({d.bs, d.h, per_element});
}

// Phi-3's gate_up_proj backward: the fused output's gradient (chunk's
// backward joins the halves, 4bsI), the fused weight's (4hI) and the
// input's, once down_proj's input, act(gate) and the fused output (8bsI)
// are released.
Checked FusedGateUpStep(const Dims& d) {
  return Less(Sum({Mul({d.h, d.inter, 4}), Hidden(d, 2)}),
              Mul({d.bs, d.inter, 4}));
}

// The gradients one layer's backward holds above its saves (docs/plan.md,
// "Transients"): the residual stream's gradient plus its largest step, in
// the order backward runs them: the MLP's (an op's input gradient with its
// weight's, freed once Gemini takes it, or the last product's three
// gradients once down_proj's input is released) over all the layer's
// saves; the second norm's once the MLP and the residual masks are
// released; the attention's (eager softmax's gradients in and out, fp32
// when upcast; a kernel's dq, dk, dv, d(out); o_proj's input and weight
// gradients) once the second norm, o_proj's input and PV's operands are
// released too; q, k and v's projections (their gradients, the largest
// projection weight's, all three fused, and the input's) and the first
// norm's once all but the first norm's saves and output is released.
Checked LayerBackward(const TransformerShape& t, const Dims& d,
                      Attention attention, bool sparse) {
  const Wide ad = d.a * d.d;
  const Wide kvd = d.kv * d.d;
  // A product's three gradients (the gated one, gelu_new's or gelu_fast's
  // last) once down's input is released, relu's two while its result is
  // still saved; one op's are no more than the input's and weight's.
  // BLOOM: dense_4h_to_h's, then bloom_gelu_back: the incoming gradient
  // and at most five temporaries of its tanh arithmetic (2bsI each) at
  // once, once dense_4h_to_h's input is released.
  // The MLP's residual dropout (where its mask is known to be the MLP's)
  // runs its backward first: its 1-byte mask is released before every MLP
  // step, and its output's gradient (2N) is held through the down
  // projection's (Falcon's parallel layer holds it longer:
  // dropout_grad_kept).
  const bool dropout_grad_kept = t.direct_sdpa && t.hidden_dropout &&
                                 (t.single_norm || t.parallel_residual);
  const bool mask_known =
      !sparse && t.hidden_dropout &&
      (!t.one_residual_mask || t.single_norm || t.parallel_residual);
  const Checked mlp_mask = mask_known ? Hidden(d, 1) : Checked{Wide{0}};
  const Checked mask_grad =
      (mask_known && !dropout_grad_kept) ? Hidden(d, 2) : Checked{Wide{0}};
  const Checked one_op =
      Less(Sum({Mul({d.bs, d.inter, 2}), Mul({d.h, d.inter, 2}), mask_grad}),
           mlp_mask);
  Checked mlp_step = sparse ? MoeBackward(t, d)
                     : t.activation == MlpActivation::kBloomGelu
                         ? Max(Less(Mul({d.bs, d.inter, 10}), mlp_mask), one_op)
                     : (t.gated_mlp || t.activation != MlpActivation::kSingleOp)
                         ? Max(one_op, Less(Mul({d.bs, d.inter, 4}), mlp_mask))
                         : one_op;
  if (t.fused_gate_up) {
    mlp_step = Max(mlp_step, Less(FusedGateUpStep(d), mlp_mask));
  }
  if (!sparse && !t.gated_mlp) {
    // The up projection's: its incoming gradient, its input's and its
    // weight's, once the activation's saves, down's input and the MLP's
    // residual dropout mask are released: above the rest where the MLP is
    // narrower than h (one tp rank's).
    mlp_step = Max(mlp_step, Less(Sum({Mul({d.bs, d.inter, 2}), Hidden(d, 2),
                                       Mul({d.h, d.inter, 2})}),
                                  Sum({MlpSaved(t, d), mlp_mask})));
  }
  const Checked q = Mul({d.bs, ad, 2});
  const Checked norm = NormSaved(t.norm, d.bs, d.h);
  // The second norm's saves and output (none with a single norm).
  const Checked second_norm = SecondNormAndOutput(t, d, sparse);
  const Checked masks = ResidualMasks(t, d);
  const Checked mlp_and_masks =
      Sum({sparse ? MoeSaved(t, d) : MlpSaved(t, d), masks});
  // Cohere's MLP runs its backward first (it ran last): its input's
  // gradient (2N) waits for the attention's share, and no second norm.
  Checked waiting = t.parallel_block ? Hidden(d, 2) : Checked{Wide{0}};
  Checked attn_work = Max(Mul({q, 4}), Sum({q, Mul({d.h, ad, 2})}));
  Checked after_attention =
      Sum({mlp_and_masks, second_norm, q, SandwichNorms(t, d)});
  // o_proj's own backward: its input's gradient (2bs·a·d) and its weight's
  // (2h·a·d) while its saved input (2bs·a·d) and the attention's saves are
  // still held, once the MLP's, the second norm's and the residual masks'
  // are released (above the attention's later steps where a·d is wider
  // than h).
  // Falcon's parallel layer: the MLP's input gradient (2N) waits through
  // the attention's backward for its share (ln_mlp, or the one norm, runs
  // its backward after the attention's); with hidden dropout the
  // dropout's gradient (dropout_grad_kept) is released by the attention's
  // dense backward, so only dense's step holds both.
  const bool falcon_parallel =
      t.direct_sdpa && (t.single_norm || t.parallel_residual);
  if (falcon_parallel && !dropout_grad_kept) waiting = Hidden(d, 2);
  const Checked o_proj_step =
      Less(Sum({Mul({q, 2}), Mul({d.h, ad, 2}), waiting,
                (falcon_parallel && dropout_grad_kept) ? Hidden(d, 2)
                                                       : Checked{Wide{0}}}),
           after_attention);
  if (EagerPath(t, d, attention)) {
    const Checked p = Mul({d.b, d.a, d.s, d.s});
    attn_work = Max(attn_work, Mul({p, t.fp32_softmax ? Wide{8} : Wide{4}}));
    const Checked for_pv = t.attention_dropout ? Mul({p, 3})
                           : t.fp32_softmax    ? Mul({p, 2})
                                               : Checked{Wide{0}};
    after_attention = Sum({after_attention, PvOperand(t, d), for_pv});
  }
  // All of the layer's saves but the first norm's and its output.
  const Checked beyond_first_norm =
      Less(LayerSaved(t, d, attention, sparse), Sum({norm, Hidden(d, 2)}));
  const Checked qkv_step =
      Less(Sum({Mul({d.bs, ad + 2 * kvd, 2}),
                Mul({d.h, t.fused_qkv ? ad + 2 * kvd : ad, 2}), Hidden(d, 2),
                waiting}),
           beyond_first_norm);
  const Checked norm_step = NormBackward(t.norm, d);
  // Gemma-2: post_feedforward_layernorm's backward first, over all the
  // layer's saves; the MLP's once that norm's saves are released.
  if (t.four_norms) {
    mlp_step = Max(Less(mlp_step, NormSaved(t.norm, d.bs, d.h)), norm_step);
  }
  Checked step =
      Max(mlp_step, Less(Sum({attn_work, waiting}), after_attention));
  step = Max(step, Max(o_proj_step, qkv_step));
  if (!t.parallel_block) {
    step = Max(step, Less(norm_step, Sum({mlp_and_masks, Hidden(d, 2)})));
  }
  step = Max(step, Less(norm_step, beyond_first_norm));
  if (t.post_norm && !activation::SplitByTp(t.tp)) {
    // OPT's post-norm layer: its last norm (final_layer_norm, after the
    // MLP's residual) runs its backward first, over all the saves, and
    // releases them (its input, mean and rstd) before every other step
    // (measured on the whole model only: at a tp rank the post-norm peak
    // measured as the pre-norm one, docs/plan.md "What is measured").
    step = Max(Less(step, norm), norm_step);
  }
  // Falcon's parallel layer: the MLP's dropout's gradient (2N) stays for
  // the attention's branch beside the output's, held for the residual.
  return Sum({Hidden(d, dropout_grad_kept ? 4 : 2), step});
}

// Re-running an eager layer under checkpointing, its softmax holds the
// 16-bit scores, their fp32 copy and the result at once (GPT-2: the scores
// and the result), over the saves made before it (v repeated among them),
// the tensors the attention's locals still hold (q, k and v before their
// copies) and the incoming gradient. 0 for another attention.
Checked ForwardSoftmax(const TransformerShape& t, const Dims& d,
                       Attention attention) {
  if (!EagerPath(t, d, attention)) return Wide{0};
  const Checked q = Mul({d.bs, d.a, d.d, 2});
  const Checked p = Mul({d.b, d.a, d.s, d.s});
  const Wide qk = t.gptj_rotary ? 2 : 1;  // GPT-J: q and k in fp32
  const Checked before =
      Sum({NormSaved(t.norm, d.bs, d.h), Hidden(d, 2), QkNormSaved(t, d),
           activation::Llama4QkNormSaved(t, d), Mul({q, qk}),
           Mul({EagerKv(d), qk}), t.value_view ? EagerKv(d) : EagerV(t, d),
           t.scale_by_tensor ? Checked{Wide{2}} : Wide{0}});
  const Checked kv_locals =
      (d.kv == 1 && d.b == 1) ? Checked{Wide{0}} : Mul({d.bs, d.kv, d.d, 4});
  return Sum({Hidden(d, 2), before, q, kv_locals,
              Mul({p, t.fp32_softmax ? Wide{10} : Wide{4}})});
}

// The adapters' stored bytes: per module 2sbr, and 3sb x in_features with
// dropout (a 1-byte mask and the 2-byte output lora_A reads); the modules
// inside the layers only without checkpointing (a recomputed layer keeps
// only its input).
Checked Adapters(const Dims& d, const AdapterShape& adapters,
                 bool checkpointing) {
  Checked out = Wide{0};
  for (const auto& [modules, in_features, stored] :
       {std::tuple{adapters.layer_modules, adapters.layer_in_features,
                   !checkpointing},
        std::tuple{adapters.other_modules, adapters.other_in_features, true}}) {
    if (!stored) continue;
    out = Sum({out, Mul({d.bs, adapters.rank, 2, modules})});
    if (adapters.dropout) out = Sum({out, Mul({d.bs, in_features, 3})});
  }
  return out;
}

// What the loss's and the final norm's backward release before the layers
// run theirs.
Checked ReleasedBeforeLayers(const TransformerShape& t, const Dims& d,
                             Checked loss) {
  // (Gemma-2's logits' tanh too, released by the head's backward)
  const Checked softcap =
      t.final_softcap ? Mul({d.bs, d.v, 2}) : Checked{Wide{0}};
  // (OPT's project_out: its output, lm_head's saved input, too)
  const Checked projected = d.e != d.h ? Mul({d.bs, d.e, 2}) : Checked{Wide{0}};
  return Sum({loss, FinalNormSaved(t, d), Hidden(d, 2), softcap, projected});
}

// lm_head's backward: the 16-bit logits' gradient, its input's and its
// weight's (and its bias's, GPT-J), once the loss's saves are gone.
Checked HeadBackward(const TransformerShape& t, const Dims& d, Checked loss) {
  return Less(
      activation::HeadSteps(d, Mul({d.bs, d.v, 2}), {}, d.v, t.head_bias),
      loss);
}

// OPT's project_out after lm_head (word_embed_proj_dim e != h): its
// weight's and its input's gradients beside the incoming one (lm_head's
// saved input released), a tied weight's gradient (`rows` x e) held, once
// the loss's saves are gone; 0 without project_out.
Checked ProjectOutBackward(const TransformerShape& t, const Dims& d, Wide rows,
                           Checked loss) {
  if (d.e == d.h) return Wide{0};
  const Checked tied =
      t.tied_embeddings ? Mul({rows, d.e, 2}) : Checked{Wide{0}};
  return Less(Sum({Mul({d.e, d.h, 2}), Mul({d.bs, d.h, 2}), tied}), loss);
}

// The embedding's backward, last: its output's gradient and its weight's
// (`rows` of them; with a tied lm_head, the held gradient and their sum,
// out of place), once all but its indices and the logits (the output,
// `logits` bytes) is released.
Checked EmbeddingBackward(const TransformerShape& t, const Dims& d,
                          Checked total, Wide rows, Checked logits) {
  const Checked positions = t.mask_positions        ? Mul({d.bs, 8})
                            : (t.rotary || t.alibi) ? Checked{Wide{0}}
                                                    : Mul({d.s, 8});
  const Checked kept = Sum({Mul({d.bs, 8}), positions, logits});
  // (embedding_dense_backward's weight gradient beside the incoming one;
  // tied, the engine frees that before it adds the two weight gradients
  // out of place)
  const Checked weight = Mul({rows, d.e, 2});
  const Checked incoming = Mul({d.bs, d.e, 2});
  const Checked step = t.tied_embeddings
                           ? Sum({weight, weight, Max(incoming, weight)})
                           : Sum({incoming, weight});
  return Less(step, Less(total, kept));
}

// What a re-run layer's saves share with what the checkpoint keeps: a
// LayerNorm saves the layer's input, the checkpoint's own argument.
Checked RerunKept(const TransformerShape& t, const Dims& d) {
  return t.norm == NormKind::kLayerNorm ? Hidden(d, 2) : Checked{Wide{0}};
}

// One kind of decoder layer (dense, or sparse: an MoE layer): its saves,
// what its backward holds above them, and the most the layers' backward
// holds with it (checkpointing: its re-run saves plus that, or the re-run
// forward's own peaks). All 0 where `count` (layers of the kind) is 0.
struct LayerTerms {
  Checked saved = Wide{0}, backward = Wide{0}, inside = Wide{0};
};
LayerTerms KindTerms(const TransformerShape& t, const Dims& d,
                     Attention attention, bool ckpt, bool sparse,
                     uint64_t count) {
  LayerTerms out;
  if (count == 0) return out;
  out.saved = LayerSaved(t, d, attention, sparse);
  out.backward = LayerBackward(t, d, attention, sparse);
  if (!ckpt) {
    out.inside = out.backward;
    return out;
  }
  // A re-run layer's own output (2N) stays held while checkpoint's inner
  // backward runs over it; the re-run saves all but what the checkpoint
  // keeps already.
  const Checked rerun = Less(out.saved, RerunKept(t, d));
  out.inside = Max(Sum({rerun, out.backward, Hidden(d, 2)}),
                   ForwardSoftmax(t, d, attention));
  if (sparse) {  // the block re-run, with the incoming gradient
    // (DeepseekV3MoE's shared experts' saves are not made yet)
    const Checked later = (t.deepseek_moe || t.deepseek_v2)
                              ? activation::DeepseekSharedSaved(t, d)
                              : Checked{Wide{0}};
    out.inside = Max(out.inside,
                     Less(Sum({rerun, Hidden(d, 2), MoeForward(t, d)}), later));
  }
  // The re-run's last step: the last projection's output (or its dropout's
  // input and output) and the residual sum, 4N (and the attention's output
  // where the block keeps it, 2N), beside all the re-run's saves and the
  // incoming gradient (2N): above the backward's own steps where those are
  // narrow (one tp rank's MLP). Falcon's dropout_add keeps the MLP's
  // output bound beside the dropout's output, 2N more where hidden dropout
  // is drawn (a bound: a sequential layer's one mask may be the
  // attention's). GPT-J's parallel block ends holding the attention's and
  // the MLP's outputs, their sum and the residual sum: 4N more than the
  // sequential block's 4N (measured at tp 4, where its MLP is narrow).
  const Wide end = (t.attention_output_held ? 8
                    : t.single_norm         ? 10
                                            : 6) +
                   (t.direct_sdpa && t.hidden_dropout ? 2 : 0);
  out.inside = Max(out.inside, Sum({rerun, Hidden(d, end)}));
  return out;
}

// A GPT-2 or BLOOM block under sequence parallelism (activation_sp.h), from the
// block's own terms over the whole sequence at rank dims.
LayerTerms SequenceParallelKind(const TransformerShape& t, const Dims& d,
                                Attention attention, bool ckpt) {
  activation::SpLayerPieces pieces;
  pieces.layer = LayerSaved(t, d, attention, false);
  pieces.sharded =
      Sum({Mul({Sum({NormSaved(t.norm, d.bs, d.h), Hidden(d, 2)}), 2}),
           ResidualMasks(t, d)});
  pieces.mlp = MlpSaved(t, d);
  const Checked q = Mul({d.bs, d.a, d.d, 2});
  pieces.attn_work = Mul({q, 4});
  pieces.attn_released = Wide{0};
  if (EagerPath(t, d, attention)) {
    const Checked p = Mul({d.b, d.a, d.s, d.s});
    pieces.attn_work =
        Max(pieces.attn_work, Mul({p, t.fp32_softmax ? Wide{8} : Wide{4}}));
    pieces.attn_released =
        Sum({PvOperand(t, d), t.attention_dropout ? Mul({p, 3})
                              : t.fp32_softmax    ? Mul({p, 2})
                                                  : Checked{Wide{0}}});
  }
  const activation::SpLayerTerms sp =
      activation::SequenceParallelLayer(t, d, pieces, ckpt);
  return {sp.saved, sp.backward, sp.inside};
}

// EstimateActivationBytes of `shape` as given (its head tied or not as
// shape.tied_embeddings says).
absl::StatusOr<ActivationBytes> EstimateAsGiven(
    const TransformerShape& shape, const ActivationWorkload& workload) {
  absl::StatusOr<Dims> dims = DimsOf(shape, workload);
  if (!dims.ok()) return dims.status();
  const bool split = activation::SplitByTp(shape.tp);
  if (split) {  // one tp rank's heads and MLP width (activation_tp.h)
    if (absl::Status st = activation::ToTpRank(shape.tp, &*dims); !st.ok()) {
      return st;
    }
  }
  // GPT-2's and BLOOM's blocks on the rank's sequence shard (activation_sp.h).
  const bool sp = split && shape.tp.sequence_parallel;
  if (sp) {
    if (absl::Status st = activation::CheckSequenceSplit(shape.tp, *dims);
        !st.ok()) {
      return st;
    }
  }
  const Dims& d = *dims;
  const absl::StatusOr<ActivationWorkload> run = AsRun(shape, workload);
  if (!run.ok()) return run.status();
  const Attention attention = run->attention;
  const bool ckpt = workload.activation_checkpointing;
  // Dense layers and, in an MoE family, sparse ones (Llama 4's each with
  // and without RoPE): the most one holds, and all together.
  TransformerShape nope;
  if (shape.llama4) {
    nope = shape;
    nope.rotary = false;
  }
  LayerTerms most;
  Checked all_saved = Wide{0};
  for (const activation::LayerKind& kind :
       activation::LayerKinds(shape, nope)) {
    const LayerTerms terms =
        KindTerms(*kind.shape, d, attention, ckpt, kind.sparse, kind.count);
    most.saved = Max(most.saved, terms.saved);
    most.backward = Max(most.backward, terms.backward);
    most.inside = Max(most.inside, terms.inside);
    all_saved = Sum({all_saved, Mul({terms.saved, kind.count})});
  }
  if (sp) {  // GPT-2's, BLOOM's blocks under sequence parallelism
             // (activation_sp.h)
    most = SequenceParallelKind(shape, d, attention, ckpt);
    all_saved = Mul({most.saved, shape.num_layers});
  }
  const Checked layer = most.saved;
  // The checkpointed input (and a LayerNorm's saved input, the same), on
  // the shard under sequence parallelism.
  const Checked block_input =
      sp ? activation::OnShard(Hidden(d, 2), shape.tp.tp_size) : Hidden(d, 2);
  const Checked per_layer = ckpt ? block_input : layer;
  const Checked logits32 = Mul({d.bs, d.v, 4});
  // The whole model's loss, logits, embedding and backward steps, or a tp
  // rank's (ShardFormer's vocab-parallel layers and dist_cross_entropy).
  Checked loss = shape.deepseek_v2 ? activation::DeepseekV2LossSaved(d)
                                   : Sum({logits32, Targets(d), Wide{4}});
  Checked logits = Logits(shape, d);
  Checked embedding_mask = Wide{0};
  Wide embedding_rows = d.v;
  // The loss's backward: nll_loss's fp32 gradient (4bsv), then, once
  // nll_loss's saves (the targets and its fp32 total_weight) are released,
  // log_softmax's beside it (measured: the peak of a whole-model Falcon at
  // hidden 8, where v is small beside b·s).
  Checked loss_backward =
      shape.deepseek_v2
          ? activation::DeepseekV2LossBackward(d)
          : Max(logits32, Less(Mul({logits32, 2}), Sum({Targets(d), Wide{4}})));
  Checked head_backward = HeadBackward(shape, d, loss);
  if (split) {
    const activation::TpTerms tp =
        activation::TpRankTerms(shape.tp, d, shape.head_bias);
    embedding_mask = tp.embedding_mask;
    embedding_rows = tp.embedding_rows;
    if (shape.tp.gathered_head) {  // the whole model's loss and logits
      head_backward =
          activation::GatheredHeadBackward(shape.tp, d, shape.head_bias, loss);
    } else {
      loss = tp.loss;
      logits = tp.held_logits;
      loss_backward = tp.loss_backward;
      head_backward = tp.head_backward;
    }
  }
  head_backward =
      Max(head_backward, ProjectOutBackward(shape, d, embedding_rows, loss));
  const Checked held =
      Sum({logits, (ckpt && shape.rotary && !shape.gptj_rotary &&
                    !shape.llama4 && !shape.deepseek_v2)
                       ? Mul({d.s, d.rotary, 4, RotaryTables(shape, true)})
                       : Checked{Wide{0}}});
  // Re-run under checkpointing, less a LayerNorm's saved input: the
  // layer's input, which the checkpoint keeps already.
  const Checked recompute =
      ckpt ? Less(layer, sp ? block_input : RerunKept(shape, d))
           : Checked{Wide{0}};
  const Checked layer_backward = most.backward;

  ActivationBytes out;
  const Checked layers = ckpt ? Mul({per_layer, shape.num_layers}) : all_saved;
  const Checked outside = Sum({OutsideSaved(shape, d, *run), embedding_mask});
  const Checked adapters = Adapters(d, shape.adapters, ckpt);
  const Checked saved = Sum({layers, outside, loss, adapters});
  const Checked total = Sum({saved, held});
  // A tied lm_head / embedding weight's gradient waits in AccumulateGrad's
  // input buffer for the embedding's share: held through the layers, which
  // run on what the loss and the final norm left.
  const Checked tied =
      shape.tied_embeddings ? Mul({embedding_rows, d.e, 2}) : Checked{Wide{0}};
  const Checked rerun = most.inside;
  const Checked inside =
      Less(Sum({rerun, tied}), ReleasedBeforeLayers(shape, d, loss));
  const Checked embedding_backward =
      sp ? activation::SequenceParallelEmbedding(
               shape, d, embedding_rows,
               Less(total,
                    activation::SequenceParallelKept(shape, d, logits, ckpt)))
         : EmbeddingBackward(shape, d, total, embedding_rows, logits);
  // The final norm's backward, once the loss and lm_head released theirs.
  const Checked final_norm_backward =
      shape.no_final_norm ? Checked{Wide{0}}
                          : Less(NormBackward(shape.norm, d), loss);
  Checked transient = Max(loss_backward, head_backward);
  transient = Max(transient, final_norm_backward);
  transient = Max(transient, Max(inside, embedding_backward));
  for (const auto& [value, part, field] : {
           std::tuple{per_layer, "per_layer_bytes", &out.per_layer_bytes},
           std::tuple{layers, "layers_bytes", &out.layers_bytes},
           std::tuple{outside, "outside_layers_bytes",
                      &out.outside_layers_bytes},
           std::tuple{loss, "loss_bytes", &out.loss_bytes},
           std::tuple{adapters, "adapter_bytes", &out.adapter_bytes},
           std::tuple{saved, "saved_bytes", &out.saved_bytes},
           std::tuple{held, "held_bytes", &out.held_bytes},
           std::tuple{total, "total_bytes", &out.total_bytes},
           std::tuple{loss_backward, "loss_backward_bytes",
                      &out.loss_backward_bytes},
           std::tuple{head_backward, "head_backward_bytes",
                      &out.head_backward_bytes},
           std::tuple{final_norm_backward, "final_norm_backward_bytes",
                      &out.final_norm_backward_bytes},
           std::tuple{recompute, "recompute_bytes", &out.recompute_bytes},
           std::tuple{layer_backward, "layer_backward_bytes",
                      &out.layer_backward_bytes},
           std::tuple{embedding_backward, "embedding_backward_bytes",
                      &out.embedding_backward_bytes},
           std::tuple{transient, "transient_bytes", &out.transient_bytes},
       }) {
    if (absl::Status st = Narrow(value, part, field); !st.ok()) return st;
  }
  return out;
}

}  // namespace

absl::StatusOr<ActivationBytes> EstimateActivationBytes(
    const TransformerShape& shape, const ActivationWorkload& workload) {
  // A policy that binds lm_head to the embedding under tp whatever the
  // config says (TensorParallelShape.ties_head: OPT's postprocess).
  if (activation::SplitByTp(shape.tp) && shape.tp.ties_head &&
      !shape.tied_embeddings) {
    TransformerShape tied = shape;
    tied.tied_embeddings = true;
    return EstimateAsGiven(tied, workload);
  }
  return EstimateAsGiven(shape, workload);
}

}  // namespace chunkplan::planner
