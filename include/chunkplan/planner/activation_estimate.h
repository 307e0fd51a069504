#ifndef CHUNKPLAN_PLANNER_ACTIVATION_ESTIMATE_H_
#define CHUNKPLAN_PLANNER_ACTIVATION_ESTIMATE_H_

// An ESTIMATE of the activation bytes one data-parallel rank keeps for the
// backward pass of a decoder-only transformer, from the published formula of
// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
// Models" (2022, arXiv 2205.05198), Sec. 4 and Table 2, at t = 1 (no tensor
// or sequence parallelism) and p = 1 (no pipeline), as under Gemini.
// docs/plan.md works the formula through and lists what it leaves out.

#include <cstdint>

#include "absl/status/statusor.h"
#include "chunkplan/planner/workload_types.h"

namespace chunkplan::planner {

// The estimate by part, in bytes (16-bit activations, 1-byte dropout masks).
struct ActivationBytes {
  uint64_t per_layer_bytes = 0;          // 34sbh + 5as^2b; 34sbh with flash
                                         // attention; 2sbh with checkpointing
  uint64_t layers_bytes = 0;             // L x per_layer_bytes
  uint64_t embedding_dropout_bytes = 0;  // sbh: the dropout mask
  uint64_t final_norm_bytes = 0;         // 2sbh: the last layer norm's input
  uint64_t output_input_bytes = 0;       // 2sbh: the output projection's input
  uint64_t logits_bytes = 0;             // 4sbv: fp32 logits for the loss
  // LoRA adapters (docs/lora.md): per adapted module 2sbr (lora_B's
  // input) and, with dropout, 3sb x in_features (mask and output); those
  // inside the layers are not stored under checkpointing.
  uint64_t adapter_bytes = 0;
  uint64_t total_bytes = 0;  // the sum of the six above
};

// The activation bytes per rank of `shape` running `workload`: the paper's
// Table 2 per layer (its first row without checkpointing, its last, 2sbh,
// with it; flash attention drops the 5as^2b attention-score terms) times L,
// plus its Sec. 4 terms outside the layers at p = 1 (embedding dropout,
// last layer norm, output layer input, fp32 logits), plus the LoRA
// adapters' own tensors (adapter_bytes).
// It is an estimate of the paper's GPT layer (LayerNorm, a x 4h GeLU MLP,
// dropout, K and V as wide as Q): SwiGLU MLPs, grouped-query K/V, RMSNorm and
// dropout-free models are counted as that layer, and the allocator, the
// recomputed layer's working set under checkpointing, the backward pass's
// temporaries and the loss's gradient are left out (docs/plan.md).
// Errors: INVALID_ARGUMENT naming the field when workload.micro_batch,
// workload.sequence_length or a shape field is 0, or when a part exceeds
// 2^64-1 bytes (named as "activations.<part>", in the order above).
absl::StatusOr<ActivationBytes> EstimateActivationBytes(
    const TransformerShape& shape, const ActivationWorkload& workload);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_ACTIVATION_ESTIMATE_H_
