#ifndef CHUNKPLAN_PLANNER_WORKLOAD_TYPES_H_
#define CHUNKPLAN_PLANNER_WORKLOAD_TYPES_H_

// The activation estimate's inputs as plain values, shared by the Layout and
// Plan requests (chunkplan.v1.Workload plus the described model's shape).
// The estimate itself: activation_estimate.h; its rules: docs/plan.md.

#include <cstdint>

namespace chunkplan::planner {

// The LoRA adapters' facts the estimate reads (docs/lora.md): each adapted
// module stores its r-wide intermediate (lora_B's input) and, with dropout,
// its dropout mask and output (lora_A's input); without dropout lora_A's
// input is the module's own input, already counted.
struct AdapterShape {
  uint64_t rank = 0;               // r; 0: no adapters
  bool dropout = false;            // lora_dropout > 0
  uint64_t layer_modules = 0;      // adapted modules inside the L layers
  uint64_t layer_in_features = 0;  // their in_features, summed
  uint64_t other_modules = 0;      // adapted modules outside the layers
  uint64_t other_in_features = 0;  // their in_features, summed
};

// The shape facts the formula reads; nothing else of the model enters it.
struct TransformerShape {
  uint64_t num_layers = 0;           // L
  uint64_t hidden_size = 0;          // h
  uint64_t num_attention_heads = 0;  // a (query heads)
  uint64_t vocab_size = 0;           // v: the fp32 logits of the loss
  AdapterShape adapters;             // none by default
};

// One micro-batch's work (the request's Workload).
struct ActivationWorkload {
  uint32_t micro_batch = 0;               // b
  uint32_t sequence_length = 0;           // s
  bool activation_checkpointing = false;  // full recomputation of each layer
  bool flash_attention = false;           // no s x s attention scores stored
};

// The activation estimate's inputs: the model's shape (from the service's
// model description) and the request's workload.
struct PlanWorkload {
  TransformerShape shape;
  ActivationWorkload workload;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_WORKLOAD_TYPES_H_
