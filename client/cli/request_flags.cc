#include "client/cli/request_flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"

namespace chunkplan::cli {
namespace {

// The value of the enum `descriptor` named `prefix` + `name` (any case), or
// INVALID_ARGUMENT naming `flag` and every value's name without `prefix`.
template <typename Enum>
absl::StatusOr<Enum> ParseEnum(const google::protobuf::EnumDescriptor* type,
                               absl::string_view prefix, absl::string_view flag,
                               absl::string_view name) {
  const std::string full = absl::StrCat(prefix, absl::AsciiStrToUpper(name));
  if (const auto* value = type->FindValueByName(full); value != nullptr) {
    return static_cast<Enum>(value->number());
  }
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    names.push_back(absl::AsciiStrToLower(
        absl::StripPrefix(type->value(i)->name(), prefix)));
  }
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " must be one of ",
                                                 absl::StrJoin(names, ", "),
                                                 ", not '", name, "'"));
}

}  // namespace

void ApplyGeminiFlags(const GeminiFlags& flags, v1::GeminiSettings* gemini) {
  if (flags.precision) gemini->set_precision(*flags.precision);
  if (flags.no_master_weights) gemini->set_master_weights(false);
  if (flags.gradient_accumulation) gemini->set_gradient_accumulation(true);
  if (flags.no_pin_memory) gemini->set_pin_memory(false);
  if (flags.optimizer) gemini->set_optimizer(*flags.optimizer);
  if (flags.placement) gemini->set_placement(*flags.placement);
  if (flags.shard_param_frac) {
    gemini->set_shard_param_frac(*flags.shard_param_frac);
  }
  if (flags.offload_optim_frac) {
    gemini->set_offload_optim_frac(*flags.offload_optim_frac);
  }
  if (flags.offload_param_frac) {
    gemini->set_offload_param_frac(*flags.offload_param_frac);
  }
  if (flags.device_memory_bytes) {
    gemini->set_device_memory_bytes(*flags.device_memory_bytes);
  }
  if (flags.tp_sizes.size() == 1) gemini->set_tp_size(flags.tp_sizes[0]);
  if (flags.extra_dp_sizes.size() == 1) {
    gemini->set_extra_dp_size(flags.extra_dp_sizes[0]);
  }
  if (flags.sequence_parallelism) {
    gemini->set_enable_sequence_parallelism(true);
  }
}

absl::StatusOr<v1::Precision> ParsePrecision(absl::string_view name) {
  return ParseEnum<v1::Precision>(v1::Precision_descriptor(), "PRECISION_",
                                  "precision", name);
}

absl::StatusOr<v1::Optimizer> ParseOptimizer(absl::string_view name) {
  return ParseEnum<v1::Optimizer>(v1::Optimizer_descriptor(), "OPTIMIZER_",
                                  "optimizer", name);
}

absl::StatusOr<v1::Placement> ParsePlacement(absl::string_view name) {
  return ParseEnum<v1::Placement>(v1::Placement_descriptor(), "PLACEMENT_",
                                  "placement", name);
}

absl::StatusOr<v1::Objective> ParseObjective(absl::string_view name) {
  return ParseEnum<v1::Objective>(v1::Objective_descriptor(), "OBJECTIVE_",
                                  "objective", name);
}

absl::StatusOr<std::vector<uint32_t>> ParseDegreeList(absl::string_view flag,
                                                      absl::string_view text) {
  std::vector<uint32_t> out;
  for (const absl::string_view part : absl::StrSplit(text, ',')) {
    uint32_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size == 0 ||
        std::find(out.begin(), out.end(), size) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": '", text.substr(0, 64),
          "' is not a list of distinct sizes >= 1, e.g. 8 or 8,16,32"));
    }
    out.push_back(size);
  }
  return out;
}

}  // namespace chunkplan::cli
