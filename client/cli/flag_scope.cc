#include "client/cli/flag_scope.h"

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace chunkplan::cli {
namespace {

struct FlagScope {
  absl::string_view flag;  // its registered name (underscores)
  uint32_t commands;       // the Command bits it applies to
  absl::string_view hint;  // said after the commands, or empty
};

constexpr uint32_t kRequests = kSearch | kLayout | kFrontier | kPlan;
constexpr uint32_t kGemini = kLayout | kFrontier | kPlan;
constexpr uint32_t kLayouts = kLayout | kFrontier;
constexpr char kPlanPlaces[] = "plan chooses the placement";
constexpr char kPlanSizes[] = "plan takes --world-sizes, not --dp";

constexpr FlagScope kScopes[] = {
    {"request", kRequests, ""},
    {"hf_config", kRequests | kDescribe, ""},
    {"params", kRequests | kDescribe, ""},
    {"shape_from", kLayout | kPlan, ""},
    {"architecture", kRequests | kDescribe, ""},
    {"dp", kSearch | kLayout | kFrontier, kPlanSizes},
    {"hidden_dim", kRequests, ""},
    {"search_range_m", kRequests, ""},
    {"search_interval", kRequests, ""},
    {"min_chunk_size_m", kRequests, ""},
    {"no_filter", kRequests, ""},
    {"lora_rank", kRequests | kDescribe, ""},
    {"lora_targets", kRequests | kDescribe, ""},
    {"lora_dropout", kRequests | kDescribe, ""},
    {"freeze", kRequests | kDescribe, ""},
    {"train", kRequests | kDescribe, ""},
    {"local", kRequests | kDescribe, ""},
    {"engine", kRequests, ""},
    {"objective", kLayouts, ""},
    {"placement", kLayouts, kPlanPlaces},
    {"shard_param_frac", kLayouts, kPlanPlaces},
    {"offload_optim_frac", kLayouts, kPlanPlaces},
    {"offload_param_frac", kLayouts, kPlanPlaces},
    {"precision", kGemini, ""},
    {"no_master_weights", kGemini, ""},
    {"gradient_accumulation", kGemini, ""},
    {"no_pin_memory", kGemini, ""},
    {"optimizer", kGemini, ""},
    {"device_memory", kGemini, ""},
    {"gpu", kGemini, ""},
    {"gpus_per_node", kLayout | kPlan, ""},
    {"host_memory", kLayout | kPlan, ""},
    {"reserve", kLayout | kPlan, ""},
    {"margin", kLayout | kPlan, ""},
    {"world_sizes", kPlan, ""},
    {"whole_nodes", kPlan, ""},
    {"max_nodes", kPlan, ""},
    {"max_options", kPlan, ""},
    {"micro_batch", kLayout | kPlan, ""},
    {"sequence_length", kLayout | kPlan, ""},
    {"activation_checkpointing", kLayout | kPlan, ""},
    {"flash_attention", kLayout | kPlan, ""},
    {"attention", kLayout | kPlan, ""},
    {"emit", kGemini, ""},
    {"tp_size", kGemini | kDescribe, ""},
    {"extra_dp_size", kGemini, ""},
    {"sequence_parallelism", kGemini | kDescribe, ""},
    {"offload_sweep", kLayout, ""},
    {"service", kHealth, ""},
};

// "search, layout and frontier" for the bits of `commands`.
std::string CommandNames(uint32_t commands) {
  std::vector<absl::string_view> names;
  for (const auto& [bit, name] :
       {std::pair<Command, absl::string_view>{kSearch, "search"},
        {kLayout, "layout"},
        {kFrontier, "frontier"},
        {kPlan, "plan"},
        {kDescribe, "describe"},
        {kHealth, "health"}}) {
    if (commands & bit) names.push_back(name);
  }
  if (names.size() == 1) return std::string(names[0]);
  const absl::string_view last = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " and ", last);
}

}  // namespace

absl::Status CheckFlagsApply(Command command) {
  for (const FlagScope& scope : kScopes) {
    if (scope.commands & command) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(scope.flag);
    if (flag == nullptr || flag->CurrentValue() == flag->DefaultValue()) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "--", absl::StrReplaceAll(scope.flag, {{"_", "-"}}), " applies to ",
        CommandNames(scope.commands), " only",
        scope.hint.empty() ? "" : absl::StrCat(" (", scope.hint, ")")));
  }
  return absl::OkStatus();
}

}  // namespace chunkplan::cli
