#ifndef CHUNKPLAN_SERVER_MODELS_MOE_LAYER_H_
#define CHUNKPLAN_SERVER_MODELS_MOE_LAYER_H_

// The activation estimate's traits of a sparse MoE block (transformers
// 4.51.3's MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock,
// Qwen3MoeSparseMoeBlock): how many layers have it and its sizes, read
// beside the layer's own traits (ModelLlamaLayer). docs/plan.md, "MoE
// layers".

#include <cstdint>

#include "absl/strings/string_view.h"
#include "server/models/hf_config.h"
#include "server/models/model_description.h"
#include "server/models/param_builder.h"

namespace chunkplan::models {

// A family's sparse block as its builder knows it.
struct SparseBlock {
  uint64_t layers = 0;        // layers with the block (0: none)
  uint64_t experts = 0;       // routed experts
  uint64_t expert_inter = 0;  // an expert's MLP width
  uint64_t shared_inter = 0;  // the shared expert's (0: none)
  // Mixtral renormalizes the top-k weights always; the Qwen MoE families
  // where norm_topk_prob.
  bool always_norm_topk = false;
  bool jitter = false;  // Mixtral: router_jitter_noise is read
  // output_router_logits is read (DeepSeek-V3's config has none: no
  // auxiliary loss in its 4.51.3 forward).
  bool router_logits_key = true;
};

// Sets d.traits' MoE facts from `block` and the config's
// num_experts_per_tok (and, per `block`, norm_topk_prob), once
// ModelLlamaLayer has modelled the layer (a reason already set is kept, no
// key read). Leaves traits.not_estimated set to the reason where a key
// does not read, num_experts_per_tok exceeds the experts,
// output_router_logits is true (the router's auxiliary loss) or Mixtral's
// router_jitter_noise is not 0 (its in-place noise).
void ModelSparseBlock(const HfConfig& cfg, const SparseBlock& block,
                      ModelDescription& d);

// Records a gated MLP's operations in forward order (down(act(gate(x)) *
// up(x))): `<module>.gate_proj`, `.up_proj`, `.down_proj`.
void GatedMlpOps(ParamBuilder& b, absl::string_view module);

// Records a sparse block's router `mlp.gate`, then every routed expert in
// turn (`mlp.experts.<e>`, a gated MLP each), stopping once the builder
// has refused (more experts than --max_params).
void RouterAndExpertOps(ParamBuilder& b, uint64_t experts);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_MOE_LAYER_H_
