#ifndef CHUNKPLAN_CLIENT_CLI_REQUEST_FLAGS_H_
#define CHUNKPLAN_CLIENT_CLI_REQUEST_FLAGS_H_

// The flags that set fields of a request's GeminiPlugin settings, its
// objective and its workload: each replaces the request's field only when
// given, so that a request file keeps what the command line leaves alone.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// GeminiPlugin's settings as flags; unset (nullopt, false) leaves the
// request's field as it is.
struct GeminiFlags {
  // layout, frontier, plan: GeminiPlugin's fixed choices.
  std::optional<v1::Precision> precision;  // --precision fp16|bf16
  bool no_master_weights = false;          // master_weights=False
  bool gradient_accumulation = false;      // enable_gradient_accumulation
  bool no_pin_memory = false;              // pin_memory=False
  std::optional<v1::Optimizer> optimizer;  // --optimizer adam|none
  // layout, frontier: the placement (docs/placement.md).
  std::optional<v1::Placement> placement;
  std::optional<double> shard_param_frac;
  std::optional<double> offload_optim_frac;
  std::optional<double> offload_param_frac;
  // --device-memory or --gpu: whether auto placement's warm-up moves chunks
  // (the server refuses it under static placement).
  std::optional<uint64_t> device_memory_bytes;
  // GeminiPlugin's mesh (--tp-size, --extra-dp-size: one degree, or for
  // plan a list to try; --tp-size search: plan tries 1, 2, 4, 8) and
  // --sequence-parallelism.
  std::vector<uint32_t> tp_sizes;
  bool search_tp = false;
  std::vector<uint32_t> extra_dp_sizes;
  bool sequence_parallelism = false;
};

// The flags given over `gemini`'s fields.
void ApplyGeminiFlags(const GeminiFlags& flags, v1::GeminiSettings* gemini);

// The enum value named `name`, any case, without the enum's prefix:
// "fp16"/"bf16", "adam"/"none", "static"/"auto", "seed_waste"/
// "layout_padding"/"peak_rank_bytes". Errors: INVALID_ARGUMENT naming the
// flag (--precision, ...) and the accepted names.
absl::StatusOr<v1::Precision> ParsePrecision(absl::string_view name);
absl::StatusOr<v1::Optimizer> ParseOptimizer(absl::string_view name);
absl::StatusOr<v1::Placement> ParsePlacement(absl::string_view name);
absl::StatusOr<v1::Objective> ParseObjective(absl::string_view name);

// "8" or "8,16,32": the sizes in the order given, each >= 1 and once
// (--dp, --world-sizes). Errors: INVALID_ARGUMENT naming `flag`.
absl::StatusOr<std::vector<uint32_t>> ParseDegreeList(absl::string_view flag,
                                                      absl::string_view text);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_REQUEST_FLAGS_H_
