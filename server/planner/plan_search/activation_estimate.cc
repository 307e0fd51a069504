#include "chunkplan/planner/activation_estimate.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/planner/plan_search/activation_arith.h"
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
  d.d = shape.head_dim != 0 ? Wide{shape.head_dim} : d.h / d.a;
  d.inter =
      shape.intermediate_size != 0 ? Wide{shape.intermediate_size} : 4 * d.h;
  d.rd = shape.rotary_dim != 0 ? Wide{shape.rotary_dim} : d.d;
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

// V as eager attention's PV matmul keeps it. With one fused q/k/v
// projection and RoPE (Phi-3's qkv_proj), q and k are RoPE's fresh tensors
// but v stays a slice of the fused output, (b, kv, s, d) with strides
// (sW, d, W, 1), W = (a + 2kv)d: repeat_kv's and matmul's reshapes stay
// views where b = 1 and kv is 1 or a, or where a = 1, and then the whole
// fused output, 2bsW, is kept. (Without RoPE, GPT-2's q, k and v are all
// views of one storage: as many bytes as three.)
Checked EagerV(const TransformerShape& t, const Dims& d) {
  if (t.fused_qkv && t.rotary &&
      ((d.b == 1 && (d.kv == 1 || d.kv == d.a)) || d.a == 1)) {
    return Mul({d.bs, d.a + 2 * d.kv, d.d, 2});
  }
  return EagerKv(d);
}

// V as flash_attention_2 keeps it, at its own heads: flash-attn copies only
// a tensor whose last stride is not 1, so a fused projection's slice keeps
// the fused output's whole storage (with RoPE; see EagerV).
Checked KernelV(const TransformerShape& t, const Dims& d) {
  if (t.fused_qkv && t.rotary) return Mul({d.bs, d.a + 2 * d.kv, d.d, 2});
  return Mul({d.bs, d.kv, d.d, 2});
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
  return Sum({NormSaved(NormKind::kRmsNorm, Mul({d.bs, d.a}), d.d),
              NormSaved(NormKind::kRmsNorm, Mul({d.bs, d.kv}), d.d)});
}

// What one layer's attention saves, its input (the norm's output) aside.
Checked AttentionSaved(const TransformerShape& t, const Dims& d,
                       Attention attention) {
  const Checked q = Mul({d.bs, d.a, d.d, 2});    // 16 bits, a heads
  const Checked kv = Mul({d.bs, d.kv, d.d, 2});  // 16 bits, kv heads
  const Checked lse = Mul({d.bs, d.a, 4});       // fp32 log-sum-exp
  const Checked out = QkNormSaved(t, d);
  switch (Resolved(attention)) {
    case Attention::kFlashAttention2:  // q, k, v (kv heads), out, lse,
                                       // rng_state (2 x int64)
      return Sum({out, q, kv, KernelV(t, d), q, lse, Wide{16}});
    case Attention::kSdpa:  // q, k, v repeated to a heads, out, lse
      return Sum({out, q, q, q, q, lse});
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
  return Sum(
      {out, q, EagerKv(d), softmax, for_pv, scale, EagerV(t, d), q, softcap});
}

// What one layer's MLP saves, its input aside.
Checked MlpSaved(const TransformerShape& t, const Dims& d) {
  const Checked i = Mul({d.bs, d.inter, 2});
  const Checked act = t.activation == MlpActivation::kGeluNew ? Mul({i, 4}) : i;
  if (t.gated_mlp) {  // act's saves, act(gate), up, the product
    return Sum({act, i, i, i});
  }
  return Sum({act, i});  // act's saves, down's input
}

// Bytes of one N = b x s x h 16-bit tensor, a dropout mask (1 byte) of it.
Checked Hidden(const Dims& d, Wide bytes) { return Mul({d.bs, d.h, bytes}); }

// Gemma-2's post_attention_layernorm and post_feedforward_layernorm (of
// o_proj's and down_proj's outputs): their saves; their outputs go to the
// residual add, which keeps nothing.
Checked SandwichNorms(const TransformerShape& t, const Dims& d) {
  if (!t.four_norms) return Wide{0};
  return Mul({NormSaved(t.norm, d.bs, d.h), 2});
}

// One decoder layer's saves without checkpointing.
Checked LayerSaved(const TransformerShape& t, const Dims& d,
                   Attention attention) {
  const Checked norm = Sum({NormSaved(t.norm, d.bs, d.h), Hidden(d, 2)});
  // Cohere's attention and MLP read one norm's output.
  const Checked second_norm = t.parallel_block ? Checked{Wide{0}} : norm;
  // Two residual dropouts (after attention, after the MLP), 1-byte masks.
  const Checked residual_masks =
      t.hidden_dropout ? Hidden(d, 2) : Checked{Wide{0}};
  return Sum({norm, AttentionSaved(t, d, attention), second_norm,
              MlpSaved(t, d), residual_masks, SandwichNorms(t, d)});
}

// Saves outside the layers but the loss.
Checked OutsideSaved(const TransformerShape& t, const Dims& d,
                     const ActivationWorkload& w) {
  const bool ckpt = w.activation_checkpointing;
  const bool eager = Resolved(w.attention) == Attention::kEager;
  const Checked indices = Mul({d.bs, 8});  // input_ids (int64)
  // position_ids: the learned embedding keeps them; under checkpointing
  // they are an argument of every layer (cache_position's storage).
  const Checked positions =
      (!t.rotary || ckpt) ? Mul({d.s, 8}) : Checked{Wide{0}};
  // cos and sin, (1, s, d) 16-bit, kept by RoPE's multiplications.
  const Checked rotary =
      (t.rotary && !ckpt) ? Mul({d.s, d.rd, 4}) : Checked{Wide{0}};
  // The eager mask the checkpoint keeps as an argument: the causal
  // (b, 1, s, s) mask, or GPT-2's padding row (b, 1, 1, s).
  Checked mask = Wide{0};
  if (ckpt && eager) mask = t.rotary ? Mul({d.b, d.s, d.s, 2}) : Mul({d.bs, 2});
  const Checked embed_mask =
      t.embedding_dropout ? Hidden(d, 1) : Checked{Wide{0}};
  const Checked normalizer = t.embed_scale ? Checked{Wide{2}} : Wide{0};
  const Checked final_norm = Sum({NormSaved(t.norm, d.bs, d.h), Hidden(d, 2)});
  // Gemma-2's final soft-capping: tanh keeps its 16-bit (b, s, v) result.
  const Checked softcap =
      t.final_softcap ? Mul({d.bs, d.v, 2}) : Checked{Wide{0}};
  return Sum({indices, positions, rotary, mask, embed_mask, normalizer,
              final_norm, softcap});
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
                      Attention attention) {
  const Wide ad = d.a * d.d;
  const Wide kvd = d.kv * d.d;
  const Checked i = Mul({d.bs, d.inter, 2});
  Checked mlp_step = Max(Sum({i, Mul({d.h, d.inter, 2})}), Mul({i, 2}));
  if (t.fused_gate_up) mlp_step = Max(mlp_step, FusedGateUpStep(d));
  const Checked q = Mul({d.bs, ad, 2});
  const Checked norm = NormSaved(t.norm, d.bs, d.h);
  const Checked masks = t.hidden_dropout ? Hidden(d, 2) : Checked{Wide{0}};
  const Checked mlp_and_masks = Sum({MlpSaved(t, d), masks});
  Checked attn_work = Max(Mul({q, 4}), Sum({q, Mul({d.h, ad, 2})}));
  Checked after_attention =
      t.parallel_block
          ? Sum({mlp_and_masks, q, SandwichNorms(t, d)})
          : Sum({mlp_and_masks, norm, Hidden(d, 2), q, SandwichNorms(t, d)});
  if (Resolved(attention) == Attention::kEager) {
    const Checked p = Mul({d.b, d.a, d.s, d.s});
    attn_work = Max(attn_work, Mul({p, t.fp32_softmax ? Wide{8} : Wide{4}}));
    const Checked for_pv = t.attention_dropout ? Mul({p, 3})
                           : t.fp32_softmax    ? Mul({p, 2})
                                               : Checked{Wide{0}};
    after_attention = Sum({after_attention, EagerV(t, d), for_pv});
  }
  // All of the layer's saves but the first norm's and its output.
  const Checked beyond_first_norm =
      Less(LayerSaved(t, d, attention), Sum({norm, Hidden(d, 2)}));
  // Cohere's MLP runs its backward first (it ran last): its input's
  // gradient (2N) waits for the attention's share, and no second norm.
  const Checked waiting = t.parallel_block ? Hidden(d, 2) : Checked{Wide{0}};
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
  step = Max(step, qkv_step);
  if (!t.parallel_block) {
    step = Max(step, Less(norm_step, Sum({mlp_and_masks, Hidden(d, 2)})));
  }
  step = Max(step, Less(norm_step, beyond_first_norm));
  return Sum({Hidden(d, 2), step});
}

// Re-running an eager layer under checkpointing, its softmax holds the
// 16-bit scores, their fp32 copy and the result at once (GPT-2: the scores
// and the result), over the saves made before it (v repeated among them),
// the tensors the attention's locals still hold (q, k and v before their
// copies) and the incoming gradient. 0 for another attention.
Checked ForwardSoftmax(const TransformerShape& t, const Dims& d,
                       Attention attention) {
  if (Resolved(attention) != Attention::kEager) return Wide{0};
  const Checked q = Mul({d.bs, d.a, d.d, 2});
  const Checked p = Mul({d.b, d.a, d.s, d.s});
  const Checked before = Sum({NormSaved(t.norm, d.bs, d.h), Hidden(d, 2),
                              QkNormSaved(t, d), q, EagerKv(d), EagerV(t, d),
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
  return Sum({loss, NormSaved(t.norm, d.bs, d.h), Hidden(d, 2), softcap});
}

// lm_head's backward: the 16-bit logits' gradient, its input's and its
// weight's, once the loss's saves are gone.
Checked HeadBackward(const Dims& d, Checked loss) {
  return Less(Sum({Mul({d.bs, d.v, 2}), Hidden(d, 2), Mul({d.v, d.h, 2})}),
              loss);
}

// The embedding's backward, last: its output's gradient and its weight's
// (`rows` of them; with a tied lm_head, the held gradient and their sum,
// out of place), once all but its indices and the logits (the output,
// `logits` bytes) is released.
Checked EmbeddingBackward(const TransformerShape& t, const Dims& d,
                          Checked total, Wide rows, Checked logits) {
  const Checked kept = Sum(
      {Mul({d.bs, 8}), t.rotary ? Checked{Wide{0}} : Mul({d.s, 8}), logits});
  return Less(Sum({Hidden(d, 2),
                   Mul({rows, d.h, t.tied_embeddings ? Wide{6} : Wide{2}})}),
              Less(total, kept));
}

}  // namespace

absl::StatusOr<ActivationBytes> EstimateActivationBytes(
    const TransformerShape& shape, const ActivationWorkload& workload) {
  absl::StatusOr<Dims> dims = DimsOf(shape, workload);
  if (!dims.ok()) return dims.status();
  const bool split = activation::SplitByTp(shape.tp);
  if (split) {  // one tp rank's heads and MLP width (activation_tp.h)
    if (absl::Status st = activation::ToTpRank(shape.tp, &*dims); !st.ok()) {
      return st;
    }
  }
  const Dims& d = *dims;
  const Attention attention = workload.attention;
  const bool ckpt = workload.activation_checkpointing;
  const Checked layer = LayerSaved(shape, d, attention);
  const Checked per_layer = ckpt ? Hidden(d, 2) : layer;
  const Checked logits32 = Mul({d.bs, d.v, 4});
  // The whole model's loss, logits, embedding and backward steps, or a tp
  // rank's (ShardFormer's vocab-parallel layers and dist_cross_entropy).
  Checked loss = Sum({logits32, Targets(d), Wide{4}});
  Checked logits = Mul({d.bs, d.v, 2});
  Checked embedding_mask = Wide{0};
  Wide embedding_rows = d.v;
  Checked loss_backward = Mul({logits32, 2});
  Checked head_backward = HeadBackward(d, loss);
  if (split) {
    const activation::TpTerms tp = activation::TpRankTerms(shape.tp, d);
    loss = tp.loss;
    logits = tp.held_logits;
    embedding_mask = tp.embedding_mask;
    embedding_rows = tp.embedding_rows;
    loss_backward = tp.loss_backward;
    head_backward = tp.head_backward;
  }
  const Checked held = Sum({logits, (ckpt && shape.rotary) ? Mul({d.s, d.rd, 4})
                                                           : Checked{Wide{0}}});
  const Checked recompute = ckpt ? layer : Checked{Wide{0}};
  const Checked layer_backward = LayerBackward(shape, d, attention);

  ActivationBytes out;
  const Checked layers = Mul({per_layer, shape.num_layers});
  const Checked outside =
      Sum({OutsideSaved(shape, d, workload), embedding_mask});
  const Checked adapters = Adapters(d, shape.adapters, ckpt);
  const Checked saved = Sum({layers, outside, loss, adapters});
  const Checked total = Sum({saved, held});
  // A tied lm_head / embedding weight's gradient waits in AccumulateGrad's
  // input buffer for the embedding's share: held through the layers, which
  // run on what the loss and the final norm left.
  const Checked tied =
      shape.tied_embeddings ? Mul({embedding_rows, d.h, 2}) : Checked{Wide{0}};
  // A re-run layer's own output (2N) stays held while checkpoint's inner
  // backward runs over it.
  const Checked rerun =
      ckpt ? Max(Sum({recompute, layer_backward, Hidden(d, 2)}),
                 ForwardSoftmax(shape, d, attention))
           : Sum({recompute, layer_backward});
  const Checked inside =
      Less(Sum({rerun, tied}), ReleasedBeforeLayers(shape, d, loss));
  const Checked embedding_backward =
      EmbeddingBackward(shape, d, total, embedding_rows, logits);
  // The final norm's backward, once the loss and lm_head released theirs.
  const Checked final_norm_backward = Less(NormBackward(shape.norm, d), loss);
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

}  // namespace chunkplan::planner
