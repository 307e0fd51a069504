#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_LLAMA4_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_LLAMA4_H_

// Llama 4's layer in the activation estimate (docs/plan.md,
// "llama4_text"): what Llama4TextAttention's extras and Llama4TextMoe save
// for backward under torch >= 2.2, and the block's backward, as
// transformers' 4.51-era modeling_llama4.py runs them. Internal to the
// planner.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "chunkplan/planner/workload_types.h"
#include "server/planner/plan_search/activation_arith.h"

namespace chunkplan::planner::activation {

// Where shape.llama4: INVALID_ARGUMENT naming shape.nope_layers where it
// exceeds the layers, shape.nope_moe_layers where it exceeds nope_layers
// or moe_layers, or shape.moe_layers where the MoE layers with RoPE exceed
// the layers with RoPE. OK otherwise.
absl::Status CheckLlama4(const TransformerShape& shape);

// One kind of decoder layer: `shape` (a NoPE kind's with rotary false),
// whether its MLP is the sparse block, and how many layers are of it.
struct LayerKind {
  const TransformerShape* shape;
  bool sparse;
  uint64_t count;
};

// The kinds of layer of `shape` (dense, and moe_layers sparse; Llama 4's
// each with and without RoPE, `nope` the NoPE kinds' shape, which must
// outlive the answer); kinds of no layer left out.
std::vector<LayerKind> LayerKinds(const TransformerShape& shape,
                                  const TransformerShape& nope);

// Llama 4's L2 qk_norm's saves on a RoPE layer (t.rotary) with
// t.l2_qk_norm:
// q's and k's fp32 copies and rsqrt; 0 otherwise.
Checked Llama4QkNormSaved(const TransformerShape& t, const Dims& d);

// Llama 4's temperature tuning's fp32 (1, s, 1, 1) scale on a NoPE layer
// (not
// t.rotary) with t.temperature_tuning; 0 otherwise.
Checked Llama4TemperatureSaved(const TransformerShape& t, const Dims& d);

// What Llama4TextMoe saves, its input aside: topk's int64 indices,
// sigmoid's fp32 scores, the (E T, 1) int64 index, the gathered and the
// scaled rows, the scores' 16-bit copy, the experts' gate_up, act and
// product over all E T rows, the shared expert's gated MLP.
Checked Llama4MoeSaved(const TransformerShape& t, const Dims& d);

// Llama4TextMoe's backward above its saves and the residual stream's
// gradient: scatter_add_'s gathered source gradient (E T rows) held
// through the shared expert's step (`shared_step`: its gated MLP's, run
// first) and the experts' down bmm (its input and weight gradients, once
// the shared expert's saves are released), the product's gradients, or
// gate_up's bmm (its output's, input's and weight's gradients, once its
// output, act(gate) and the product are released).
Checked Llama4MoeBackward(const TransformerShape& t, const Dims& d,
                          Checked shared_step);

}  // namespace chunkplan::planner::activation

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_LLAMA4_H_
