#include "server/planner/plan_search/activation_mla.h"

namespace chunkplan::planner::activation {
namespace {

// An RMS norm's own saves over rows x width: the fp32 input, the fp32
// rsqrt, the 16-bit normalized input.
Checked RmsSaved(Checked rows, Wide width) {
  return Sum({Mul({rows, width, 6}), Mul({rows, 4})});
}

// V as eager PV's matmul keeps it: a strided view of kv_b_proj's output
// (b, s, a (nope + v)), which matmul's reshape to bmm's batch keeps as a
// view when b, a or s is 1 (then bmm keeps the whole output); else a copy.
Checked EagerV(const TransformerShape& t, const Dims& d) {
  if (d.b == 1 || d.a == 1 || d.s == 1) {
    return Mul({d.bs, d.a, d.d - t.qk_rope_head_dim + t.v_head_dim, 2});
  }
  return Mul({d.bs, d.a, t.v_head_dim, 2});
}

}  // namespace

absl::Status CheckMla(const TransformerShape& shape, Wide head_dim) {
  if (shape.kv_lora_rank == 0) return absl::OkStatus();
  if (shape.v_head_dim == 0) {
    return absl::InvalidArgumentError(
        "shape.v_head_dim must be at least 1 when shape.kv_lora_rank is set");
  }
  if (shape.qk_rope_head_dim > head_dim) {
    return absl::InvalidArgumentError(
        "shape.qk_rope_head_dim must be at most the head dimension when "
        "shape.kv_lora_rank is set");
  }
  return absl::OkStatus();
}

Checked MlaAttentionSaved(const TransformerShape& t, const Dims& d,
                          Attention attention) {
  Checked out =
      Sum({RmsSaved(d.bs, t.kv_lora_rank), Mul({d.bs, t.kv_lora_rank, 2})});
  if (t.q_lora_rank != 0) {
    out = Sum(
        {out, RmsSaved(d.bs, t.q_lora_rank), Mul({d.bs, t.q_lora_rank, 2})});
  }
  const Checked q = Mul({d.bs, d.a, d.d, 2});  // q and k: d wide
  const Checked o = Mul({d.bs, d.a, t.v_head_dim, 2});
  const Checked lse = Mul({d.bs, d.a, 4});
  switch (attention) {
    case Attention::kFlashAttention2: {
      // q, k, v (padded to d where narrower: a copy; else a view of
      // kv_b_proj's output), out at d, lse, rng_state; out sliced to v
      // and copied for o_proj where narrower.
      const bool narrow = t.v_head_dim != d.d;
      const Checked v =
          narrow ? q
                 : Mul({d.bs, d.a, d.d - t.qk_rope_head_dim + t.v_head_dim, 2});
      return Sum(
          {out, q, q, v, q, lse, Wide{16}, narrow ? o : Checked{Wide{0}}});
    }
    case Attention::kSdpa:  // q, k, v (a contiguous copy), out, lse
      return Sum({out, q, q, o, o, lse});
    default:
      break;
  }
  const Checked p = Mul({d.b, d.a, d.s, d.s});
  // softmax's fp32 result; PV's 16-bit copy, or the dropout mask and
  // output.
  const Checked for_pv = t.attention_dropout ? Mul({p, 3}) : Mul({p, 2});
  return Sum({out, q, q, Mul({p, 4}), for_pv, EagerV(t, d), o});
}

Checked DeepseekSharedSaved(const TransformerShape& t, const Dims& d) {
  return Mul({d.bs, t.shared_expert_intermediate_size, 8});
}

Checked DeepseekMoeSaved(const TransformerShape& t, const Dims& d) {
  const Checked pairs = Mul({d.bs, t.experts_per_token});
  const Checked norm_topk = t.norm_topk_prob
                                ? Sum({Mul({d.bs, 4}), Mul({pairs, 4})})
                                : Checked{Wide{0}};
  const Checked router =
      Sum({Mul({d.bs, d.h, 4}), Mul({t.num_experts, d.h, 4}),
           Mul({d.bs, t.num_experts, 4}), Mul({pairs, 8}), norm_topk});
  const Checked per_pair =
      Sum({Wide{20}, Mul({d.h, 8}), Mul({t.moe_intermediate_size, Wide{8}})});
  return Sum({router, Mul({pairs, per_pair}), DeepseekSharedSaved(t, d)});
}

}  // namespace chunkplan::planner::activation
