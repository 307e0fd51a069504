#include "server/models/moe_layer.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace chunkplan::models {

void ModelSparseBlock(const HfConfig& cfg, const SparseBlock& block,
                      ModelDescription& d) {
  DecoderTraits& t = d.traits;
  if (!t.not_estimated.empty() || block.layers == 0) return;
  auto refuse = [&t](const absl::Status& status) {
    t.not_estimated = std::string(status.message());
  };
  const absl::StatusOr<uint64_t> top_k = cfg.Size("num_experts_per_tok");
  if (!top_k.ok()) return refuse(top_k.status());
  if (*top_k > block.experts) {
    t.not_estimated =
        absl::StrCat("num_experts_per_tok ", *top_k, " exceeds the experts (",
                     block.experts, "): torch.topk refuses it");
    return;
  }
  bool norm_topk = block.always_norm_topk;
  if (!norm_topk) {
    const absl::StatusOr<bool> flag = cfg.Flag("norm_topk_prob");
    if (!flag.ok()) return refuse(flag.status());
    norm_topk = *flag;
  }
  const absl::StatusOr<bool> aux =
      block.router_logits_key ? cfg.Flag("output_router_logits") : false;
  if (!aux.ok()) return refuse(aux.status());
  if (*aux) {
    t.not_estimated =
        "output_router_logits: the router's auxiliary loss is not modelled";
    return;
  }
  if (block.jitter) {
    const absl::StatusOr<bool> jitter =
        cfg.NonZeroProbability("router_jitter_noise");
    if (!jitter.ok()) return refuse(jitter.status());
    if (*jitter) {
      t.not_estimated =
          "router_jitter_noise: the router's noise is not modelled";
      return;
    }
  }
  t.moe_layers = block.layers;
  t.num_experts = block.experts;
  t.experts_per_token = *top_k;
  t.moe_intermediate_size = block.expert_inter;
  t.shared_expert_intermediate_size = block.shared_inter;
  t.norm_topk_prob = norm_topk;
}

void GatedMlpOps(ParamBuilder& b, absl::string_view module) {
  for (const char* p : {".gate_proj", ".up_proj", ".down_proj"}) {
    b.Op({absl::StrCat(module, p)});
  }
}

void RouterAndExpertOps(ParamBuilder& b, uint64_t experts) {
  b.Op({"mlp.gate"});
  for (uint64_t e = 0; e < experts && b.status().ok(); ++e) {
    GatedMlpOps(b, absl::StrCat("mlp.experts.", e));
  }
}

}  // namespace chunkplan::models
