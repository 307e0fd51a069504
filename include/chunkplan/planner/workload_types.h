#ifndef CHUNKPLAN_PLANNER_WORKLOAD_TYPES_H_
#define CHUNKPLAN_PLANNER_WORKLOAD_TYPES_H_

// The activation estimate's inputs as plain values, shared by the Layout and
// Plan requests (chunkplan.v1.Workload plus the described model's traits).
// The estimate itself: activation_estimate.h; its rules: docs/plan.md.

#include <cstdint>
#include <string>

namespace chunkplan::planner {

// How a family's decoder layer normalizes (transformers 4.51.3).
enum class NormKind : uint8_t {
  kRmsNorm,          // LlamaRMSNorm: fp32 upcast, weight * x.to(dtype)
  kGemmaRmsNorm,     // GemmaRMSNorm: fp32 throughout, x * (1 + weight)
  kLayerNorm,        // nn.LayerNorm (fp32 mean and rstd kept)
  kCohereLayerNorm,  // CohereLayerNorm: fp32, no bias, x - mean twice
};

// What the MLP's activation saves: one op that keeps its input (silu,
// gelu, gelu_pytorch_tanh), or GPT-2's gelu_new written as tanh arithmetic
// (its input, tanh's result, 0.5x and 1 + tanh); FastGELUActivation's
// gelu_fast (seven tensors); relu, which keeps its result (the next
// projection's input); BLOOM's GeLUFunction (its input; a backward of
// tanh arithmetic).
enum class MlpActivation : uint8_t {
  kSingleOp,
  kGeluNew,
  kGeluFast,
  kRelu,
  kBloomGelu
};

// The attention implementation a trainer runs (transformers'
// attn_implementation); kDefault is transformers 4.51.3's default, sdpa.
enum class Attention : uint8_t { kDefault, kEager, kSdpa, kFlashAttention2 };

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

// What one tensor-parallel rank runs under ColossalAI's ShardFormer
// (GeminiPlugin(tp_size > 1), docs/tensor-parallelism.md, "Activations"):
// the family's policy splits the heads, the key/value heads and the MLP
// width by tp (the hidden size, the norms and the residual stream stay
// whole), the embedding keeps padded_vocab / tp rows, lm_head splits the
// vocabulary, and the loss is ColossalAI's dist_cross_entropy. Set by the
// service from the model's description at tp_size.
struct TensorParallelShape {
  uint32_t tp_size = 1;  // 1: every rank runs the whole model
  // The vocabulary padded as VocabParallelEmbedding1D pads it (a multiple
  // of 64 x tp_size): the embedding's rows over all ranks.
  uint64_t padded_vocab = 0;
  // lm_head is a plain Linear1D_Col (Qwen3): vocab / tp rows, no padding
  // (whole where vocab < tp); else VocabParallelLMHead1D: padded_vocab /
  // tp rows, rank 0's logits sliced to min(those, vocab).
  bool column_head = false;
  bool logits_fp32 = false;  // the forward upcasts the logits (.float())
  bool loss_fp32 = false;    // dist_cross_entropy's dtype is fp32
  // GPT-2 (where the world is the tp group) or BLOOM under GeminiPlugin's
  // sequence parallelism (split_gather): the blocks on the rank's sequence
  // shard, the Col layers' gathered inputs (docs/tensor-parallelism.md).
  bool sequence_parallel = false;
  // The forward holds the sliced logits' contiguous copy (OPT's
  // lm_head(...).contiguous()), not lm_head's padded output.
  bool logits_contiguous = false;
  // lm_head gathers the logits (GPT-J, Mixtral): transformers' own loss
  // on the whole vocabulary, the split only in the head's backward.
  bool gathered_head = false;
  // The policy binds lm_head to the embedding at this degree whatever the
  // shape's tied_embeddings says (OPT's postprocess): the split's head is
  // tied.
  bool ties_head = false;
  // Non-empty: the split is not modelled for this run (a family's forward
  // under ShardFormer, sequence parallelism); why. The estimate is then
  // the whole model's, and the answer says so (TpActivationNote).
  std::string not_split;
  // The family (model_type) where a description gave the shape: named in
  // the refusals of its policy's forward ("": none named).
  std::string model_type;
};

// The traits of a decoder-only family that decide what its training
// forward saves for backward: one parameterized layer, set by the family
// from its config (server/models).
struct TransformerShape {
  uint64_t num_layers = 0;           // L
  uint64_t hidden_size = 0;          // h
  uint64_t num_attention_heads = 0;  // a (query heads)
  uint64_t vocab_size = 0;           // v: the logits of the loss
  uint64_t num_key_value_heads = 0;  // kv (0: a)
  uint64_t head_dim = 0;             // d (0: h / a)
  uint64_t intermediate_size = 0;    // the MLP's width (0: 4h)
  bool tied_embeddings = false;      // lm_head shares the embedding's weight
  bool fused_qkv = false;            // one q/k/v projection (GPT-2's c_attn)
  NormKind norm = NormKind::kRmsNorm;
  bool gated_mlp = true;  // down(act(gate(x)) * up(x)); else fc, act, proj
  MlpActivation activation = MlpActivation::kSingleOp;
  bool rotary = true;            // RoPE (cos, sin); else learned positions
  bool qk_norm = false;          // RMS norms over q and k per head (Qwen3)
  bool fp32_softmax = true;      // softmax(dtype=float32) then back to 16 bits
  bool scale_by_tensor = false;  // scores divided by a 0-dim tensor (GPT-2)
  bool embed_scale = false;      // embeddings times a 0-dim normalizer
  // The block keeps its attention's output bound until it returns
  // (GPT2Block's attn_output): 2N more at a re-run layer's last step.
  bool attention_output_held = false;
  // Dropout with a non-zero probability in the config (a 1-byte mask).
  bool attention_dropout = false, hidden_dropout = false,
       embedding_dropout = false;
  // Non-empty: the family's layer is not modelled; the reason.
  std::string not_estimated;
  AdapterShape adapters;   // LoRA; none by default
  TensorParallelShape tp;  // one tp rank's split; none by default
  // MoE families (Mixtral, Qwen2-MoE, Qwen3-MoE): moe_layers of the
  // num_layers layers have the sparse block (a router over num_experts
  // experts, experts_per_token of them per token, each a gated MLP of
  // moe_intermediate_size; a shared expert of
  // shared_expert_intermediate_size beside them where non-zero) in place
  // of the dense MLP (intermediate_size). 0: no sparse layer.
  uint64_t moe_layers = 0;
  uint64_t num_experts = 0;
  uint64_t experts_per_token = 0;
  uint64_t moe_intermediate_size = 0;
  uint64_t shared_expert_intermediate_size = 0;
  bool norm_topk_prob = false;  // the top-k weights renormalized (div_)
  // LayerNorm families (gpt_neox, opt, gptj, falcon, bloom)
  // The width RoPE's cos and sin cover (0: d): GPT-NeoX's rotary_pct,
  // GPT-J's rotary_dim, Phi-3's partial_rotary_factor.
  uint64_t rotary_dim = 0;
  // The second LayerNorm reads the layer's input, as the first does
  // (GPT-NeoX's use_parallel_residual): one saved input for both.
  bool parallel_residual = false;
  // V is a strided view of the fused q/k/v output (GPT-NeoX): eager PV's
  // bmm keeps the whole output when b, a or s is 1, flash_attn always.
  bool value_view = false;
  // OPT's learned positions: indexed by (b, s) position_ids from the
  // mask's cumsum (the embedding keeps them + 2); under checkpointing
  // position_ids, cache_position and the eager (b, 1, s, s) mask are
  // arguments of every layer.
  bool mask_positions = false;
  bool no_final_norm = false;   // no norm after the last layer (OPT's
                                // post-norm or _remove_final_layer_norm)
  uint64_t embed_proj_dim = 0;  // OPT's word_embed_proj_dim (0: h):
                                // project_in / project_out around the layers
  // OPT's do_layer_norm_before false: each norm after its residual add (the
  // same saves); the layer's last norm runs its backward first.
  bool post_norm = false;
  // GPT-J: attention and MLP read one norm's output (no second norm).
  bool single_norm = false;
  // GPT-J's RoPE: fp32 sin and cos gathered in each layer, (1, s, 1, r)
  // for q and again for k, which become fp32 (and are upcast for the
  // scores): eager keeps q and k at 4 bytes; nothing outside the layers.
  bool gptj_rotary = false;
  bool fp32_logits = false;  // the logits cast to fp32 (held at 4 bytes)
  // lm_head has a bias (GPT-J): its gradient (2 bytes a vocabulary row)
  // is made beside the weight's at the head's last backward step.
  bool head_bias = false;
  // No sdpa path in transformers 4.51.3: the default runs eager and
  // ATTENTION_SDPA is refused (INVALID_ARGUMENT).
  bool no_sdpa = false;
  // Falcon and BLOOM (docs/plan.md, "Falcon and BLOOM").
  // Falcon's new architecture: K and V broadcast from num_key_value_heads
  // to every query head before RoPE (K rotated at a heads; V a copy, or a
  // stride-0 view of its one head where kv is 1).
  bool kv_broadcast = false;
  // K and V picked by a list index (Falcon's multi-query and new
  // architecture): each index keeps its int64 index, 8 bytes a layer each.
  bool indexed_kv = false;
  // hidden_dropout gives one residual mask a layer, not two.
  bool one_residual_mask = false;
  // The family calls F.scaled_dot_product_attention on its own q, k, v
  // (Falcon): V kept as the fused view (value_view) or the broadcast, and
  // with fewer key/value heads than query heads the math path (eager's
  // 16-bit saves).
  bool direct_sdpa = false;
  // BLOOM's ALiBi attention: q, k, v reshaped views of the fused output
  // (kept once by baddbmm and bmm when b, a or s is 1, else three copies),
  // no positions, the alibi (b a, 1, s) and eager mask checkpoint
  // arguments.
  bool alibi = false;
  bool embedding_norm = false;  // a LayerNorm after the word embeddings
  // No flash_attention_2 path in transformers 4.51.3 (BLOOM):
  // ATTENTION_FLASH_ATTENTION_2 is refused (INVALID_ARGUMENT).
  bool no_flash = false;
  // dense families (phi3, cohere, gemma2/3)
  bool fused_gate_up = false;   // one gate_up_proj whose halves are views
                                // (Phi-3)
  bool parallel_block = false;  // attention and MLP side by side on one
                                // norm's output (Cohere)
  bool four_norms = false;    // norms after attention and the MLP too (Gemma-2)
  bool attn_softcap = false;  // eager scores cap * tanh(scores / cap)
  bool final_softcap = false;  // logits cap * tanh(logits / cap)
  // Gemma-3: a local rotary table (the sliding layers') beside the global
  // one, both arguments of every layer (held under checkpointing);
  // both_rotary_used: layers of each kind, so RoPE keeps both tables.
  bool local_rotary = false;
  bool both_rotary_used = false;
  // DeepSeek-V3 (activation_mla.h): kv_lora_rank non-zero makes the
  // attention multi-head latent attention, q through a q_lora_rank
  // bottleneck (0: a plain q_proj), k and v from a kv_lora_rank latent, each
  // with its RMSNorm; head_dim is q's and k's width (qk_nope_head_dim +
  // qk_rope_head_dim), v_head_dim v's and the output's; rotary_dim is
  // qk_rope_head_dim.
  uint64_t q_lora_rank = 0, kv_lora_rank = 0, qk_rope_head_dim = 0,
           v_head_dim = 0;
  // The sparse block is DeepseekV3MoE: a sigmoid router on fp32 copies,
  // fp32 weighted outputs, shared experts without a gate.
  bool deepseek_moe = false;
  // DeepSeek-V2's remote code (activation_deepseek_v2.h): each layer's own
  // RoPE tables, DeepseekV2MoE's training branch on the sparse layers
  // (MoEGate's softmax router with its auxiliary loss, the experts over
  // repeat_interleave'd tokens), the loss over shifted fp32 logits.
  // router_groups: MoEGate's n_group under group_limited_greedy (0:
  // greedy); seq_aux: the auxiliary loss per sequence (else per batch).
  bool deepseek_v2 = false;
  uint64_t router_groups = 0;
  bool seq_aux = false;
  // Llama 4 (activation_llama4.h): llama4 makes the layer
  // Llama4TextDecoderLayer: nope_layers of the num_layers skip RoPE
  // (nope_moe_layers of them, and moe_layers in all, hold Llama4TextMoe:
  // num_experts experts of moe_intermediate_size on every token beside a
  // shared expert as wide; intermediate_size is a dense layer's MLP);
  // RoPE is a complex product with a (1, s, d/2) complex64 table (a tensor
  // argument of every checkpointed layer); the eager softmax is fp32;
  // l2_qk_norm: the L2 norm over q and k on the RoPE layers;
  // temperature_tuning: q scaled by an fp32 (1, s, 1, 1) factor on the
  // NoPE layers.
  bool llama4 = false, l2_qk_norm = false, temperature_tuning = false;
  uint64_t nope_layers = 0, nope_moe_layers = 0;
};

// One micro-batch's work (the request's Workload).
struct ActivationWorkload {
  uint32_t micro_batch = 0;               // b
  uint32_t sequence_length = 0;           // s
  bool activation_checkpointing = false;  // each layer re-run in backward
  Attention attention = Attention::kDefault;
};

// The activation estimate's inputs: the model's traits (from the service's
// model description) and the request's workload.
struct PlanWorkload {
  TransformerShape shape;
  ActivationWorkload workload;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_WORKLOAD_TYPES_H_
