#ifndef CHUNKPLAN_SERVER_MODELS_TP_SHARD_H_
#define CHUNKPLAN_SERVER_MODELS_TP_SHARD_H_

// A family's TpPolicy applied: the shape one tp rank keeps of a parameter,
// and the policy's asserts on the config. Every tp rank keeps the same
// shape under the served policies (each split divides evenly or the layer
// refuses; the vocabulary is padded to a multiple of 64 * tp first), so
// rank 0's shapes are every rank's.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/models/hf_config.h"
#include "server/models/tp_policy.h"

namespace chunkplan::models {

// The dims tp rank 0 keeps of the parameter `param` ("weight", "bias") of
// the submodule at `module` (its dotted path) whose full dims are `dims`,
// under `policy` at `tp` >= 2. Dims are unchanged where no rule names the
// module or the layer keeps it whole. INVALID_ARGUMENT in ColossalAI's own
// words where the layer refuses (out or in features not a multiple of tp,
// a fused split not divisible), prefixed with the parameter's name.
absl::StatusOr<std::vector<uint64_t>> TpLocalDims(
    const TpPolicy& policy, uint32_t tp, absl::string_view module,
    absl::string_view param, const std::vector<uint64_t>& dims);

// `vocab` padded as VocabParallelEmbedding1D pads it at `tp`: up to a
// multiple of 64 * tp.
uint64_t PaddedVocab(uint64_t vocab, uint32_t tp);

// The policy's asserts on `cfg` at `tp` >= 2: the heads (and, where the
// policy asserts them, the key/value heads) divisible by tp, in the
// policy's words: INVALID_ARGUMENT "gemini.tp_size: <tp>: <family>: <its
// message> (<key> = <value>)".
absl::Status CheckTpHeads(const TpPolicy& policy, absl::string_view family,
                          const HfConfig& cfg, uint32_t tp);

// The rules BLOOM's and Falcon's policies share (bloom.py, falcon.py):
// self_attention.query_key_value and mlp.dense_h_to_4h Linear1D_Col,
// self_attention.dense and mlp.dense_4h_to_h Linear1D_Row, word_embeddings
// and lm_head vocab-parallel.
std::vector<TpRule> FusedQkvTpRules();

// GeminiPlugin's sequence parallelism under `lm`, the causal-LM forward of
// the policy for `family` at `tp` >= 2, where the policy keeps it on
// (split_gather, no sequence_parallel_process_group: gemini_plugin.py
// passes none). `zero_x_extra_dp`: the mesh's zero x extra_dp, nullopt
// where the world is not known (Describe). INVALID_ARGUMENT
// "gemini.enable_sequence_parallelism: model_type \"<family>\" at
// tp_size <tp>: ..." quoting ColossalAI's assert with its file and lines
// where lm.sp_group_assert is set (every mesh), and where
// lm.sp_gathers_over_world and zero_x_extra_dp is known and above 1; OK
// otherwise.
absl::Status CheckSequenceParallelism(const TpCausalLm& lm,
                                      absl::string_view family, uint32_t tp,
                                      std::optional<uint64_t> zero_x_extra_dp);

// Whether the policy turns tensor parallelism off for `cfg` (every flag of
// tp_ignored_when holds).
absl::StatusOr<bool> TpIgnored(const TpPolicy& policy, const HfConfig& cfg);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_TP_SHARD_H_
