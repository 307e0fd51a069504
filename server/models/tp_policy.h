#ifndef CHUNKPLAN_SERVER_MODELS_TP_POLICY_H_
#define CHUNKPLAN_SERVER_MODELS_TP_POLICY_H_

// ColossalAI's ShardFormer policy for a family, as data: which submodules
// become which parallel layer when GeminiPlugin(tp_size > 1) shards the
// model before GeminiDDP, and the asserts the policy makes. Each family's
// file defines its TpPolicy beside its parameter list; tp_shard.h applies
// it. The rules are those of shardformer/policies/<family>.py and
// shardformer/layer/{linear,embedding,qkv_fused_linear}.py
// (docs/tensor-parallelism.md).

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/strings/string_view.h"

namespace chunkplan::models {

// What a parallel layer keeps of each of its parameters on one tp rank.
enum class TpLayer {
  // Linear1D_Col (nn.Linear weight [out, in]): out/tp rows of the weight
  // and of the bias; kept whole where out < tp; out % tp != 0 refused.
  kColumn,
  // Linear1D_Row: in/tp columns of the weight, the whole bias; kept whole
  // where in < tp; in % tp != 0 refused.
  kRow,
  // VocabParallelEmbedding1D / VocabParallelLMHead1D: the rows (and a
  // head's bias) padded to a multiple of 64 * tp, 1/tp of them kept.
  kVocab,
  // GPT2FusedLinearConv1D_Col (Conv1D weight [in, out]): each of
  // `fused_parts` equal splits of out divided by tp (each must divide);
  // kept whole where out < tp.
  kConv1DColumn,
  // GPT2FusedLinearConv1D_Row (Conv1D weight [in, out]): in/tp rows, the
  // whole bias; kept whole where in < tp.
  kConv1DRow,
};

// One submodule the policy replaces: its path's last components (e.g.
// "self_attn.q_proj"; "cls.predictions" for BERT's head bias) and the
// layer it becomes.
struct TpRule {
  absl::string_view module;
  TpLayer layer;
  uint32_t fused_parts = 1;  // kConv1DColumn only: q, k, v = 3
};

// What the policy's causal-LM forward does to the logits under tensor
// parallelism, which the activation estimate's tp split reads
// (docs/tensor-parallelism.md, "Activations"): ColossalAI replaces the
// forward with one that calls dist_cross_entropy (shardformer/layer/
// loss.py) on each rank's vocabulary columns.
struct TpCausalLm {
  // The split is modelled (measured against the activation oracle's torch
  // stand-ins); false: the estimate stays the whole model's, with a note.
  bool modelled = false;
  bool logits_fp32 = false;  // logits.float() before the loss
  bool loss_fp32 = false;    // dist_cross_entropy's dtype is fp32
  // The forward holds lm_head(...).contiguous() (OPT's): the valid
  // columns copied out of the padded output.
  bool logits_contiguous = false;
  // The policy's postprocess ties lm_head to the embedding under tp
  // whatever the config says (OPT's binding_map).
  bool ties_head = false;
  // lm_head gathers its output (gather_output=True) and transformers' own
  // causal-LM forward and loss run on the whole vocabulary (GPT-J's
  // VocabParallelLMHead1D, Mixtral's Linear1D_Col; no forward replaced).
  bool gathered_head = false;
  // Sequence parallelism under GeminiPlugin (split_gather, which it leaves
  // the only mode, and no sequence_parallel_process_group) where the
  // policy keeps it on (CheckSequenceParallelism, tp_shard.h, refuses on
  // these facts): the file and lines of ColossalAI's attention forward
  // (shardformer/modeling/) that asserts "Must specify sp_size and
  // sp_group for sequence parallel" (the policy's sp_group is None: the
  // first forward fails, refused at every mesh); or, GPT-2, that its
  // forward splits the sequence over the tp group but gathers it over
  // sequence_parallel_process_group (None: the whole world; refused where
  // zero x extra_dp > 1). Otherwise the split is not modelled (a note).
  absl::string_view sp_group_assert = "";
  bool sp_gathers_over_world = false;
  // Where sequence parallelism runs: its split is modelled (GPT-2's and
  // BLOOM's, measured against the activation oracle's torch stand-ins);
  // false: the estimate stays the whole model's, with a note.
  bool sp_modelled = false;
};

// A config flag and the value that triggers a condition.
struct TpFlag {
  absl::string_view key;
  bool value;
};

struct TpPolicy {
  // ColossalAI's policy file, e.g. "llama" (shardformer/policies/llama.py).
  absl::string_view file;
  std::vector<TpRule> rules = {};
  // The config key of the query heads the policy asserts divisible by tp.
  absl::string_view heads_key = "num_attention_heads";
  // The config key of the key/value heads it asserts divisible ("" where
  // it asserts nothing of them); unset in the config: the query heads.
  absl::string_view kv_heads_key = "";
  // LLaMA's and Command's form: kv heads also at least tp.
  bool kv_heads_at_least_tp = false;
  // Where every flag holds, the policy turns tensor parallelism off with
  // a warning (Falcon's multi-query layout): the model stays whole.
  std::vector<TpFlag> tp_ignored_when = {};
  // The policy's own words where it refuses tensor parallelism outright
  // (empty: it shards).
  absl::string_view refuses_tp = "";
  // The policy's warning where it turns sequence parallelism off (empty:
  // it keeps it; the mode under GeminiPlugin is always split_gather).
  absl::string_view ignores_sp = "";
  TpCausalLm causal_lm = {};
};

// The vocabulary multiple before tp (ShardConfig.make_vocab_size_divisible_by,
// which GeminiPlugin leaves at its default).
inline constexpr uint64_t kMakeVocabSizeDivisibleBy = 64;

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_TP_POLICY_H_
