#include "server/planner/plan_search/activation_deepseek_v2.h"

namespace chunkplan::planner::activation {

Checked DeepseekV2RopeSaved(const TransformerShape& t, const Dims& d) {
  return Mul({d.s, t.qk_rope_head_dim, 4});
}

Checked DeepseekV2MoeSaved(const TransformerShape& t, const Dims& d) {
  const Checked pairs = Mul({d.bs, t.experts_per_token});
  const Wide experts = t.num_experts;
  const Checked groups =
      t.router_groups != 0 ? Mul({d.bs, experts}) : Checked{Wide{0}};
  const Checked norm_topk = (t.experts_per_token > 1 && t.norm_topk_prob)
                                ? Sum({Mul({pairs, 4}), Mul({d.bs, 4})})
                                : Checked{Wide{0}};
  const Checked aux = Mul({t.seq_aux ? d.b : Wide{1}, experts, 4});
  const Checked gate =
      Sum({Mul({d.bs, d.h, 4}), Mul({experts, d.h, 4}), Mul({d.bs, experts, 4}),
           groups, Mul({pairs, 8}), norm_topk, aux});
  // Per pair: two bool masks an expert, the token's state and y (16-bit,
  // h wide), the gated MLP (8 bytes an intermediate element), the weight.
  const Checked per_pair = Sum({Mul({experts, 2}), Mul({d.h, 4}),
                                Mul({t.moe_intermediate_size, 8}), Wide{4}});
  return Sum({gate, Mul({pairs, per_pair}),
              Mul({d.bs, t.shared_expert_intermediate_size, 8})});
}

Checked DeepseekV2MoeBackward(const TransformerShape& t, const Dims& d,
                              Checked shared_step, Checked routed_step,
                              Checked shared_saves) {
  const Checked ph = Mul({d.bs, t.experts_per_token, d.h, 2});  // 2P h
  const Checked sum = Sum({Mul({d.bs, d.h, 4}), Mul({ph, 5})});
  Checked out = Max(shared_step, Less(sum, shared_saves));
  out = Max(out, Less(Sum({Mul({ph, 2}), routed_step}), shared_saves));
  return Max(out, Less(Mul({ph, 3}), shared_saves));
}

Checked DeepseekV2MoeForward(const TransformerShape& t, const Dims& d) {
  return Sum({Mul({d.bs, t.experts_per_token, d.h, 6}), Mul({d.bs, d.h, 4})});
}

Checked DeepseekV2LossSaved(const Dims& d) {
  const Checked rows = Mul({d.b, d.s - 1});
  const Checked targets = d.b == 1 ? Mul({d.s, 8}) : Mul({rows, 8});
  return Sum({Mul({rows, d.v, 4}), targets, Wide{4}});
}

Checked DeepseekV2LossBackward(const Dims& d) {
  return Max(Mul({d.b, d.s - 1, d.v, 8}), Mul({d.b, d.v, 2 * d.s + 4}));
}

}  // namespace chunkplan::planner::activation
