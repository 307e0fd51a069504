#ifndef CHUNKPLAN_PLANNER_ACTIVATION_ESTIMATE_H_
#define CHUNKPLAN_PLANNER_ACTIVATION_ESTIMATE_H_

// An ESTIMATE of the activation memory one data-parallel rank holds for a
// decoder-only model's training step: the tensors transformers 4.51.3's
// modeling code saves for backward under torch >= 2.2 (16-bit activations,
// fp32 where the code upcasts), tensor by tensor from one parameterized
// decoder layer (workload_types.h's traits), and the largest transient of
// the backward pass. docs/plan.md lists every tensor, what a torch oracle
// measures and what is left out (the kernels' own workspaces).

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "chunkplan/planner/workload_types.h"

namespace chunkplan::planner {

// The note an answer at `tp_size` carries beside activation_bytes where
// the estimate is not one tp rank's (docs/tensor-parallelism.md,
// "Activations"): "activations not split by tp: <why>; activation_bytes
// is the estimate without tensor parallelism (tp_size 1)", why being
// shape.tp.not_split or, where shape.tp was not set for `tp_size`, that the
// model was not described at it. nullopt where tp_size is 1 or the split
// is modelled.
std::optional<std::string> TpActivationNote(const TransformerShape& shape,
                                            uint32_t tp_size);

// The estimate by part, in bytes.
struct ActivationBytes {
  uint64_t per_layer_bytes = 0;       // saved by one decoder layer (its input
                                      // alone under checkpointing)
  uint64_t layers_bytes = 0;          // L x per_layer_bytes
  uint64_t outside_layers_bytes = 0;  // embedding indices, positions, rotary
                                      // tables or the checkpoint's mask,
                                      // dropout, final norm, lm_head input
  uint64_t loss_bytes = 0;            // fp32 log-probabilities, targets, weight
  // LoRA adapters (docs/lora.md): per adapted module 2sbr (lora_B's
  // input) and, with dropout, 3sb x in_features (mask and output); those
  // inside the layers are not stored under checkpointing.
  uint64_t adapter_bytes = 0;
  uint64_t saved_bytes = 0;  // the four above: unique storages saved
  uint64_t held_bytes = 0;   // held, not saved: the 16-bit logits (the
                             // model's output), rotary tables the
                             // checkpoint keeps as Python objects
  uint64_t total_bytes = 0;  // saved_bytes + held_bytes: activation_bytes
  // Transients of the backward pass, each the most it holds above
  // total_bytes at one point (docs/plan.md, "Transients"):
  uint64_t loss_backward_bytes = 0;        // fp32 gradients of the
                                           // log-probabilities and the logits
  uint64_t head_backward_bytes = 0;        // lm_head's gradients, the loss's
                                           // saves released
  uint64_t final_norm_backward_bytes = 0;  // the final norm's fp32
                                           // temporaries
  uint64_t recompute_bytes = 0;            // checkpointing: one layer's saves
                                           // while it is re-run, less a
                                           // LayerNorm's input (the
                                           // checkpoint's; else 0)
  uint64_t layer_backward_bytes = 0;       // the gradients one layer's backward
                                           // holds above its saves
  uint64_t embedding_backward_bytes = 0;   // the embedding's, last
  // The largest: loss_backward_bytes, head_backward_bytes,
  // final_norm_backward_bytes, recompute_bytes + layer_backward_bytes (+ a
  // tied weight's held gradient) less what the loss and the final norm
  // released, or embedding_backward_bytes.
  uint64_t transient_bytes = 0;
};

// The activation bytes per rank of `shape` running `workload`
// (docs/plan.md, "Activations"). Errors: INVALID_ARGUMENT naming the field
// when workload.micro_batch, workload.sequence_length or a shape size is 0,
// or when head_dim is unset and hidden_size / num_attention_heads does not
// divide, or num_key_value_heads does not divide num_attention_heads, or
// when a part exceeds 2^64-1 bytes ("activations.<part> exceeds 2^64-1
// bytes"); UNIMPLEMENTED with the family's reason when shape.not_estimated
// is set.
absl::StatusOr<ActivationBytes> EstimateActivationBytes(
    const TransformerShape& shape, const ActivationWorkload& workload);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_ACTIVATION_ESTIMATE_H_
