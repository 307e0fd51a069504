#ifndef CHUNKPLAN_CLIENT_CLI_MODEL_REQUEST_H_
#define CHUNKPLAN_CLIENT_CLI_MODEL_REQUEST_H_

// `--hf-config FILE [--architecture NAME] --dp N [--hidden-dim H]`: the
// search of a Hugging Face model as GeminiPlugin runs it (or with other
// search settings: --search-range-m, --search-interval, --min-chunk-size-m,
// --no-filter), in place of a request file; and `chunkplan describe`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "client/cli/command_output.h"
#include "client/cli/remote_call.h"

namespace chunkplan::cli {

// The model flags.
struct ModelFlags {
  std::string config_path;  // the config.json, or "-" for stdin
  // --params: a parameter list in place of config_path, "-" for stdin; sent
  // as the model's param_list_json (the server reads it:
  // server/models/param_list.h), lora, freeze and train beside it.
  std::string params_path;
  // With params_path: a workload was asked for without --shape-from, so the
  // request goes without it (IntervalNote says why the estimate is absent).
  bool workload_without_shape = false;
  std::string architecture;  // empty: the config's architectures[0]
  uint32_t dp = 1;           // the data-parallel degree of every parameter
  // GeminiPlugin's hidden_dim, when the trainer passes one.
  std::optional<uint64_t> hidden_dim;
  // Search settings other than GeminiPlugin's, where given: the sweep's
  // width and step (in place of hidden_dim), the minimum chunk size, and
  // the filter of extra-large parameters turned off.
  std::optional<double> search_range_m;
  std::optional<uint64_t> search_interval;
  std::optional<double> min_chunk_size_m;
  bool no_filter = false;
  // describe: GeminiPlugin's tp_size (0: none) and sequence parallelism.
  uint32_t tp_size = 0;
  bool sequence_parallelism = false;
  // What is trained (chunkplan.v1.ModelConfig's lora, freeze, train):
  // LoRA's r (0: none), target modules and dropout; RE2 patterns.
  uint32_t lora_rank = 0;
  std::vector<std::string> lora_targets;
  std::optional<double> lora_dropout;
  std::string freeze;
  std::string train;
};

// GeminiPlugin's search settings besides the interval: search_range_m 32
// (min_chunk_size_m 32 and the filter on are the proto's defaults).
inline constexpr double kGeminiSearchRangeM = 32;

// The ModelConfig of `flags`: the config file's text (with params_path, the
// parameter list's, as param_list_json), the architecture, and lora, freeze
// and train where given. Errors: the file's (NOT_FOUND etc. naming the
// path).
absl::StatusOr<v1::ModelConfig> ReadModelConfig(const ModelFlags& flags);

// The search GeminiPlugin runs for the model: `model` (ReadModelConfig),
// dp_degrees {dp}, search_range_m 32, search_interval = hidden_dim if
// given, else 1024 (GeminiPlugin's default without hidden_dim); the search
// settings of `flags` replace these where given. The server describes the
// model: a list's requires_grad and the freeze and train patterns give the
// frozen mask there. Errors: ReadModelConfig's.
absl::StatusOr<v1::ChunkSearchRequest> ModelSearchRequest(
    const ModelFlags& flags);

// Which interval the search uses and why, one line ending in '\n', e.g.
// "search interval 1024 (GeminiPlugin's default: no hidden_dim; set it
// with --hidden-dim)" or "search interval 128 (--search-interval)"; with
// workload_without_shape, a second line saying why the activation estimate
// is absent.
std::string IntervalNote(const ModelFlags& flags);

// IntervalNote's first line alone.
std::string SearchIntervalNote(const ModelFlags& flags);

// `chunkplan describe`: the model's parameters, answered by `server` or,
// without one, in this process. `table`: the config's keys (read, ignored,
// harmless) and warnings, a summary and one row per parameter; else the
// ModelDescription as one line of protobuf JSON, its warnings in
// `warnings` (for stderr).
// Errors: ReadModelConfig's, then Describe's (INVALID_ARGUMENT for a bad
// config, ...) and the call's.
absl::StatusOr<CommandOutput> RunDescribe(
    const ModelFlags& flags, const std::optional<RemoteTarget>& server,
    bool table);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_MODEL_REQUEST_H_
