#ifndef CHUNKPLAN_CLIENT_CLI_PLAN_TABLE_H_
#define CHUNKPLAN_CLIENT_CLI_PLAN_TABLE_H_

// `chunkplan plan --format table` and `--emit colossalai`: a PlanResponse
// laid out for people, its verdicts rendered as the server sent them.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// The cluster of `request` on one line, with the margin the server applied
// (MarginWords of the first option's verdict); one row per option of
// `response` in its order: world size, placement with its fractions
// (PlacementLabel), chunk size (the first config not kept gathered;
// "gathered" when every config is), where the chunk size came from, device
// need against device memory in GiB (2**30 bytes, 2 decimals), the
// headroom, host bytes per node in GiB, and VerdictWords; then, when the
// request has a workload, a line saying that activations are an estimate
// and how many GiB each rank is counted for; each distinct note once, with
// the options it holds for ("note  options 1,3: ..."); the options
// considered and the planner's time; and the first option's
// GeminiPlugin(...) line. Every line ends in '\n'.
std::string FormatPlanTable(const v1::PlanRequest& request,
                            const v1::PlanResponse& response);

// "static", "static, optim 0.25", "static, shard 0.5, optim 1, param 0.5"
// (fractions with up to 6 significant digits; those that move nothing, a
// shard fraction of 1 and offload fractions of 0, left out), or "auto".
std::string PlacementLabel(const v1::GeminiSettings& gemini);

// nullopt when some option of `response` fits (by the server's `fits`);
// else why not, in one line: "no option fits; option 1 does not fit: ..."
// (or "the plan has no option").
std::optional<std::string> NothingFits(const v1::PlanResponse& response);

// `--emit colossalai`: "GeminiPlugin(<the first option's colossalai>)\n".
// Errors: NOT_FOUND when the response has no option.
absl::StatusOr<std::string> EmitColossalai(const v1::PlanResponse& response);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_PLAN_TABLE_H_
