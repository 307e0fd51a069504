#ifndef CHUNKPLAN_SERVER_MODELS_MODEL_DESCRIPTION_H_
#define CHUNKPLAN_SERVER_MODELS_MODEL_DESCRIPTION_H_

// The model families: a Hugging Face config.json turned into the parameters
// of the model it builds, in transformers' model.parameters() order. Plain
// C++ (abseil and nlohmann-json): no gRPC, no protobuf, no logging.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/models/tp_policy.h"

namespace chunkplan::models {

// The traits of a decoder-only family's layer that decide what its training
// forward saves for backward (the service maps them onto the planner's
// TransformerShape).
struct DecoderTraits {
  uint64_t head_dim = 0;
  std::string norm = "rms";  // "rms", "gemma_rms", "layer_norm" or
                             // "cohere_layer_norm"
  bool gated_mlp = true;     // down(act(gate(x)) * up(x))
  bool gelu_new = false;     // the MLP's act is gelu_new (else one op)
  bool rotary = true;        // RoPE (else learned positions)
  bool qk_norm = false, fp32_softmax = true, scale_by_tensor = false,
       embed_scale = false, tied_embeddings = false, fused_qkv = false;
  bool attention_output_held = false;  // GPT2Block's attn_output
  bool attention_dropout = false, hidden_dropout = false,
       embedding_dropout = false;
  // Non-empty: the layer is not modelled, and why.
  std::string not_estimated = "the family's layer is not modelled";
  // MoE families (moe_layer.h): how many layers have the sparse block, and
  // its sizes; 0: none.
  uint64_t moe_layers = 0, num_experts = 0, experts_per_token = 0,
           moe_intermediate_size = 0, shared_expert_intermediate_size = 0;
  bool norm_topk_prob = false;
  // LayerNorm families (gpt_neox, opt, gptj, falcon, bloom)
  bool gelu_fast = false, relu = false;  // the MLP's act (else as above)
  uint64_t rotary_dim = 0;  // RoPE's width (0: head_dim; Phi-3 too)
  bool parallel_residual = false, value_view = false;
  bool mask_positions = false, no_final_norm = false;
  bool post_norm = false;       // OPT's do_layer_norm_before false
  uint64_t embed_proj_dim = 0;  // 0: hidden_size
  bool single_norm = false, gptj_rotary = false, fp32_logits = false,
       no_sdpa = false;
  bool head_bias = false;  // lm_head.bias (GPT-J)
  // Falcon and BLOOM (the planner's TransformerShape says what each means)
  bool kv_broadcast = false, indexed_kv = false, one_residual_mask = false,
       direct_sdpa = false, alibi = false, embedding_norm = false,
       no_flash = false, bloom_gelu = false;
  // dense families (phi3, cohere, gemma2/3)
  bool fused_gate_up = false;
  bool parallel_block = false;  // attention and MLP on one norm (Cohere)
  bool four_norms = false, attn_softcap = false, final_softcap = false;
  bool local_rotary = false, both_rotary_used = false;  // Gemma-3
  // DeepSeek-V3's latent attention and DeepseekV3MoE (deepseek.cc; the
  // planner's TransformerShape says what each means); 0 / false: none.
  uint64_t q_lora_rank = 0, kv_lora_rank = 0, qk_rope_head_dim = 0,
           v_head_dim = 0;
  bool deepseek_moe = false;
  // DeepSeek-V2's remote code (deepseek.cc): its layer, MoEGate's n_group
  // under group_limited_greedy (0: greedy) and its auxiliary loss's kind.
  bool deepseek_v2 = false;
  uint64_t router_groups = 0;
  bool seq_aux = false;
  // Llama 4's layer kinds and attention (llama4.cc; the planner's
  // TransformerShape says what each means); false / 0: none.
  bool llama4 = false, l2_qk_norm = false, temperature_tuning = false;
  uint64_t nope_layers = 0, nope_moe_layers = 0;
};

// An nn.Linear (or transformers' Conv1D) of the model: where a LoRA adapter
// attaches. Its parameters (weight, bias) are contiguous in the list.
struct LinearModule {
  std::string name;          // e.g. "model.layers.0.self_attn.q_proj"
  uint64_t in = 0, out = 0;  // in_features, out_features
  size_t first_param = 0;    // the index of its first parameter
  size_t params = 0;         // how many it has (1 or 2)
  bool in_layer = false;     // inside a repeated block (a layer, an expert)
};

// What the activation estimate reads of the LoRA adapters: a module's
// adapter stores its r-wide intermediate (the input of lora_B) and, with
// dropout, its dropout mask and output (the input of lora_A).
struct AdapterFacts {
  uint64_t rank = 0;  // 0: no adapters
  bool dropout = false;
  uint64_t layer_modules = 0;      // adapted modules inside the layers, all
  uint64_t layer_in_features = 0;  // their in_features, summed
  uint64_t other_modules = 0;      // adapted modules outside the layers
  uint64_t other_in_features = 0;  // their in_features, summed
};

// The config's top-level keys, each in exactly one of the first three
// lists (each sorted), and the warnings (config_keys.h has the rule).
struct ConfigKeys {
  std::vector<std::string> read;      // read by the family
  std::vector<std::string> ignored;   // not read, not known harmless
  std::vector<std::string> harmless;  // not read; no parameter depends on
                                      // them (token ids, dtype, ...)
  // One per ignored key that looks like a key the family knows, naming
  // both, e.g. "config key \"num_hidden_layer\" was ignored; did you mean
  // \"num_hidden_layers\"? (\"num_hidden_layers\" took its default, 32)".
  std::vector<std::string> warnings;
};

// One model class built from a config: its parameters, a tied weight once
// (under the name of its first registration), and the shape facts that an
// activation estimate needs.
struct ModelDescription {
  // Described from a parameter list (param_list.h), not a config: no
  // family, so model_type, architecture and the shape facts stay empty.
  bool param_list = false;
  std::string model_type;    // the config's model_type, e.g. "llama"
  std::string architecture;  // e.g. "LlamaForCausalLM"
  uint64_t hidden_size = 0;
  std::vector<uint64_t> numels;  // model.parameters() order, a tied weight once
  std::vector<std::string> names;  // same order, e.g.
                                   // "model.layers.0.self_attn.q_proj.weight"
  uint64_t total = 0;              // sum of numels
  // Shape facts for the Plan issue's activation estimate (0 where not
  // applicable):
  bool decoder_only = false;
  uint64_t num_layers = 0, num_attention_heads = 0, num_key_value_heads = 0,
           intermediate_size = 0, vocab_size = 0;
  // The operations of one forward pass, in the order the modeling code runs
  // them, each the parameters (indices into numels) that one torch function
  // takes: what ColossalAI's GeminiZeROHook gathers per operation (the
  // gathered-chunk rule, docs/plan.md). Empty where the family has no
  // operation sequence yet.
  std::vector<std::vector<uint64_t>> operations;
  // One per operation: the decoder layer it runs in (the family's repeated
  // block, which transformers runs in torch.utils.checkpoint under gradient
  // checkpointing), -1 outside one (embeddings, final norm, head).
  std::vector<int64_t> operation_layers;
  // What the decoder layer saves for backward (transformers 4.51.3),
  // docs/plan.md "Activations"; set by the decoder-only families.
  DecoderTraits traits;
  // The linear layers, in registration order (filled when storing).
  std::vector<LinearModule> linears;
  // Empty: every parameter trainable; else one per parameter, true where
  // frozen (requires_grad=False). Set by lora.h / trainable.h, and by
  // param_list.h from a list's requires_grad.
  std::vector<bool> frozen;
  uint64_t trainable = 0;  // the trainable parameters' numels, summed
  AdapterFacts adapters;   // the LoRA adapters added (lora.h)
  // Which of the config's keys the family read and which it ignored.
  ConfigKeys config_keys;
  // Tensor parallelism (GeminiPlugin's tp_size): numels, names and total
  // are then tp rank 0's local shards as the family's ShardFormer policy
  // leaves them; every tp rank holds the same shapes (tp_shard.h), so rank
  // 0 is also the most loaded. 1: the whole model.
  uint32_t tp_size = 1;
  // The policy file applied ("llama"), empty at tp_size 1 or where the
  // policy turned tensor parallelism off.
  std::string tp_policy;
  // The vocabulary as the vocab-parallel layers pad it (a multiple of
  // 64 * tp_size); 0 where none is sharded.
  uint64_t padded_vocab_size = 0;
  // What the policy did beside sharding, in its words (tensor or sequence
  // parallelism turned off).
  std::vector<std::string> tp_notes;
  // What tp rank 0 runs, for the activation estimate's split (set with
  // tp_policy): the policy's causal-LM forward, whether lm_head is a plain
  // Linear1D_Col (no vocabulary padding), and whether sequence parallelism
  // stays on (GeminiPlugin's split_gather).
  TpCausalLm tp_causal_lm;
  bool tp_column_head = false;
  bool tp_sequence_parallelism = false;
};

// GeminiPlugin's settings that change the described parameters.
struct TpOptions {
  uint32_t tp_size = 1;               // >= 1
  bool sequence_parallelism = false;  // enable_sequence_parallelism
};

// Describes the model a Hugging Face config.json builds. `architecture`
// empty: the config's architectures[0] (or the family's default class when
// absent). Keys the config leaves out (or sets to null) take the defaults of
// the family's transformers config class.
// Refuses before allocating anything when the model would have more than
// `max_params` parameters (tensors): RESOURCE_EXHAUSTED, as the service
// answers a request with more than --max_params numels. Every other error
// is INVALID_ARGUMENT naming the field (its JSON path) and what is wrong:
// text that is not a JSON object, or over 1 MiB, or nested deeper than 64;
// a wrong type, negative, fractional or zero size; an unknown model_type
// (the message lists the supported ones); an unsupported architecture; an
// option that changes the parameter set and is not modelled; a tensor or a
// total past 64 bits. The work is bounded by the text's size and by
// max_params (the parameters are counted before they are stored).
//
// With `tp.tp_size` > 1 the parameters are tp rank 0's shards under the
// family's ShardFormer policy (server/models/tp_policy.h). INVALID_ARGUMENT
// naming "gemini.tp_size" and the family where the family has no policy
// (ColossalAI's auto_policy lists none for it), where the policy refuses
// tensor parallelism (DeepSeek-V3), and, in ColossalAI's own words, where
// its asserts fail (heads or key/value heads not divisible by tp) or a
// parallel layer refuses its features; tp_size 0 is INVALID_ARGUMENT too.
// With `tp.sequence_parallelism` at tp_size > 1, INVALID_ARGUMENT naming
// "gemini.enable_sequence_parallelism" where the policy's forward asserts
// a sequence group GeminiPlugin does not make (CheckSequenceParallelism
// without a mesh; CheckSequenceParallelMesh once the mesh is known).
absl::StatusOr<ModelDescription> DescribeModel(std::string_view hf_config_json,
                                               std::string_view architecture,
                                               uint64_t max_params,
                                               const TpOptions& tp = {});

// Sequence parallelism on a mesh of the model `d` describes (at its
// tp_size): CheckSequenceParallelism (tp_shard.h) with the mesh's
// `zero_x_extra_dp`, where the description kept it on
// (tp_sequence_parallelism); OK otherwise. Layout and Plan call it where
// the mesh is known; DescribeModel has refused what needs no mesh.
absl::Status CheckSequenceParallelMesh(const ModelDescription& d,
                                       uint64_t zero_x_extra_dp);

// The supported model_type values, sorted.
std::vector<std::string> SupportedModelTypes();

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_MODEL_DESCRIPTION_H_
