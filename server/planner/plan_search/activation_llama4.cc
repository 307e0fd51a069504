#include "server/planner/plan_search/activation_llama4.h"

#include <algorithm>

namespace chunkplan::planner::activation {

absl::Status CheckLlama4(const TransformerShape& shape) {
  if (!shape.llama4) return absl::OkStatus();
  if (shape.nope_layers > shape.num_layers) {
    return absl::InvalidArgumentError(
        "shape.nope_layers must be at most shape.num_layers");
  }
  if (shape.nope_moe_layers > std::min(shape.nope_layers, shape.moe_layers)) {
    return absl::InvalidArgumentError(
        "shape.nope_moe_layers must be at most shape.nope_layers and "
        "shape.moe_layers");
  }
  if (shape.moe_layers - shape.nope_moe_layers >
      shape.num_layers - shape.nope_layers) {
    return absl::InvalidArgumentError(
        "shape.moe_layers less shape.nope_moe_layers must be at most the "
        "layers with RoPE");
  }
  return absl::OkStatus();
}

std::vector<LayerKind> LayerKinds(const TransformerShape& shape,
                                  const TransformerShape& nope) {
  const uint64_t moe = shape.moe_layers;
  std::vector<LayerKind> all;
  if (shape.llama4) {
    const uint64_t nope_moe = shape.nope_moe_layers;
    all = {{&shape, false,
            shape.num_layers - shape.nope_layers - (moe - nope_moe)},
           {&shape, true, moe - nope_moe},
           {&nope, false, shape.nope_layers - nope_moe},
           {&nope, true, nope_moe}};
  } else {
    all = {{&shape, false, shape.num_layers - moe}, {&shape, true, moe}};
  }
  std::vector<LayerKind> out;
  for (const LayerKind& kind : all) {
    if (kind.count != 0) out.push_back(kind);
  }
  return out;
}

Checked Llama4QkNormSaved(const TransformerShape& t, const Dims& d) {
  if (!t.llama4 || !t.rotary || !t.l2_qk_norm) return Wide{0};
  return Sum({Mul({d.bs, d.a + d.kv, d.d, 4}), Mul({d.bs, d.a + d.kv, 4})});
}

Checked Llama4TemperatureSaved(const TransformerShape& t, const Dims& d) {
  if (!t.llama4 || t.rotary || !t.temperature_tuning) return Wide{0};
  return Mul({d.s, 4});
}

Checked Llama4MoeSaved(const TransformerShape& t, const Dims& d) {
  const Checked rows = Mul({d.bs, t.num_experts});  // E T
  const Wide i = t.moe_intermediate_size;
  // The (E T, 1) index: a copy of arange(T) expanded, or with one token a
  // view of arange(1) itself.
  const Checked index = d.bs > 1 ? Mul({rows, 8}) : Checked{Wide{8}};
  return Sum({Mul({d.bs, t.experts_per_token, 8}), Mul({rows, 4}), index,
              Mul({rows, d.h, 4}), Mul({rows, 2}), Mul({rows, i, 8}),
              Mul({d.bs, i, 8})});
}

Checked Llama4MoeBackward(const TransformerShape& t, const Dims& d,
                          Checked shared_step) {
  const Wide e = t.num_experts, i = t.moe_intermediate_size;
  const Checked src = Mul({d.bs, e, d.h, 2});
  const Checked shared_saves = Mul({d.bs, i, 8});
  const Checked down = Sum({src, Mul({d.bs, e, i, 2}), Mul({e, i, d.h, 2})});
  // gate_up's: its output's joined gradient, its input's and its weight's,
  // once act(gate), the product and its output are released too.
  const Checked gate_up = Sum({Mul({d.bs, e, i, 4}), src, Mul({e, d.h, i, 4})});
  const Checked released = Sum({Mul({d.bs, e, i, 8}), shared_saves});
  return Max(
      Max(Sum({src, shared_step}), Less(down, shared_saves)),
      Max(Less(Mul({d.bs, e, i, 4}), shared_saves), Less(gate_up, released)));
}

}  // namespace chunkplan::planner::activation
