#ifndef CHUNKPLAN_CLIENT_CLI_LAYOUT_OUTPUT_H_
#define CHUNKPLAN_CLIENT_CLI_LAYOUT_OUTPUT_H_

// `chunkplan layout` beyond one table: one row per dp degree, the offload
// sweep, and `--emit colossalai`. Every figure printed is a field of the
// server's LayoutResponse; nothing is judged here (a verdict is the
// server's, rendered by VerdictWords).

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// One dp degree's layout: the request sent and the server's answer.
struct DegreeLayout {
  uint32_t dp_degree = 0;
  v1::LayoutRequest request;
  v1::LayoutResponse response;
};

// One row per layout, in order: dp degree, the first group's chunk size
// and keep gathered (every parameter is at that degree), the real padding,
// ColossalAI's search's waste ("-" without a search), and the most loaded
// rank's device total (worst chunk order), the gathered chunk and the
// most loaded rank's host total in GiB (2**30 bytes, 2 decimals), with a
// column of the activation ESTIMATE where any layout has one, and the
// headroom in GiB and VerdictWords where any layout has a verdict; then, per
// degree whose chunks dwarf what they hold, PaddingWarning's lines under
// "dp degree N:". Every line ends in '\n'.
std::string FormatLayoutRows(const std::vector<DegreeLayout>& layouts);

// --offload-sweep's fractions of the optimizer offloaded: 0, 0.05, ..., 1.
std::array<double, 21> SweepFractions();

// `layout` laid out again at `fraction`: its request with the response's
// configs given (nothing searched, objective seed_waste), static placement
// and offload_optim_frac = `fraction` (device_memory_bytes cleared; the
// cluster kept, so that each row is judged).
v1::LayoutRequest SweepRequest(const DegreeLayout& layout, double fraction);

// The sweep's table: one row per (fraction, LayoutResponse): the fraction,
// the chunks offloaded (least .. most over every chunk order), their share
// of the fp16 chunk bytes, the most loaded rank's device total under its
// worst .. best chunk order and its host total in GiB, and VerdictWords
// where the response has a verdict. Every line ends in '\n'.
std::string FormatOffloadSweep(
    const std::vector<std::pair<double, v1::LayoutResponse>>& rows);

// `--emit colossalai`: "GeminiPlugin(<keyword arguments>)\n" for the
// configs `response` laid out under `request`'s GeminiPlugin settings, the
// text Plan's options carry (planner::ColossalaiKwargs). Errors:
// INVALID_ARGUMENT for settings outside chunkplan.v1's enums.
absl::StatusOr<std::string> EmitLayoutColossalai(
    const v1::LayoutRequest& request, const v1::LayoutResponse& response);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_LAYOUT_OUTPUT_H_
