#include "client/cli/layout_output.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "chunkplan/planner/plan_colossalai.h"
#include "client/cli/padding_warning.h"
#include "client/cli/verdict_text.h"
#include "common/status_macros.h"
#include "server/service/plan_convert.h"
#include "server/service/proto_convert.h"

namespace chunkplan::cli {
namespace {

double GiB(uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
}

}  // namespace

std::string FormatLayoutRows(const std::vector<DegreeLayout>& layouts) {
  bool activations = false;
  bool verdicts = false;
  for (const DegreeLayout& l : layouts) {
    activations = activations || l.response.activation_bytes() > 0;
    verdicts = verdicts || l.response.has_verdict();
  }
  std::string out =
      "dp degree  chunk size (elements)  keep gathered  padding (elements)  "
      "search waste (elements)  device total GiB  gathered chunk GiB  "
      "gathered chunks  host total GiB";
  if (activations) {
    out += "  activations GiB (ESTIMATE)  transient GiB (ESTIMATE)";
  }
  if (verdicts) out += "  headroom GiB  verdict";
  out += "\n";
  for (const DegreeLayout& l : layouts) {
    const v1::LayoutResponse& r = l.response;
    const v1::GroupLayout first =
        r.groups().empty() ? v1::GroupLayout() : r.groups(0);
    absl::StrAppendFormat(
        &out, "%9u  %21u  %13s  %18u  %23s  %16.2f  %18.2f  %15u  %14.2f",
        l.dp_degree, first.chunk_size(), first.keep_gathered() ? "yes" : "no",
        r.layout_padding(),
        r.has_search() ? absl::StrCat(r.search().min_chunk_waste()) : "-",
        GiB(r.most_loaded_rank().device_bytes()), GiB(r.gathered_chunk_bytes()),
        r.gathered_chunks(), GiB(r.most_loaded_rank().host_bytes()));
    if (activations) {
      absl::StrAppendFormat(&out, "  %26.2f  %24.2f", GiB(r.activation_bytes()),
                            GiB(r.transient_bytes()));
    }
    if (r.has_verdict()) {
      absl::StrAppendFormat(&out, "  %12.2f  %s",
                            GiB(r.verdict().headroom_bytes()),
                            VerdictWords(r.verdict()));
    }
    out += "\n";
  }
  for (const DegreeLayout& l : layouts) {
    const std::string warning = PaddingWarning(l.response);
    if (!warning.empty()) {
      absl::StrAppend(&out, "\ndp degree ", l.dp_degree, ":", warning);
    }
  }
  return out;
}

std::array<double, 21> SweepFractions() {
  std::array<double, 21> fractions;
  for (size_t i = 0; i < fractions.size(); ++i) fractions[i] = i / 20.0;
  return fractions;
}

v1::LayoutRequest SweepRequest(const DegreeLayout& layout, double fraction) {
  v1::LayoutRequest request = layout.request;
  request.clear_configs();
  for (const v1::GroupLayout& g : layout.response.groups()) {
    v1::ChunkConfig* config = request.add_configs();
    config->set_dp_degree(g.dp_degree());
    config->set_chunk_size(g.chunk_size());
    config->set_keep_gathered(g.keep_gathered());
  }
  request.set_objective(v1::OBJECTIVE_SEED_WASTE);
  v1::GeminiSettings* gemini = request.mutable_gemini();
  gemini->set_placement(v1::PLACEMENT_STATIC);
  gemini->clear_device_memory_bytes();
  gemini->set_offload_optim_frac(fraction);
  return request;
}

std::string FormatOffloadSweep(
    const std::vector<std::pair<double, v1::LayoutResponse>>& rows) {
  bool verdicts = false;
  for (const auto& row : rows) verdicts = verdicts || row.second.has_verdict();
  std::string out =
      "offload_optim_frac  offloaded chunks  of fp16 bytes  device GiB (worst "
      ".. best order)  host GiB";
  out += verdicts ? "  verdict\n" : "\n";
  for (const auto& [fraction, r] : rows) {
    const v1::PlacementOutcome& p = r.placement();
    absl::StrAppendFormat(
        &out, "%18.2f  %16s  %12.1f%%  %32s  %8.2f", fraction,
        absl::StrCat(p.offloaded_chunks(), " .. ", p.offloaded_chunks_max()),
        100 * p.effective_offload_optim_frac(),
        absl::StrFormat("%.2f .. %.2f",
                        GiB(r.most_loaded_rank().device_bytes()),
                        GiB(r.most_loaded_rank_least().device_bytes())),
        GiB(r.most_loaded_rank().host_bytes()));
    if (r.has_verdict()) absl::StrAppend(&out, "  ", VerdictWords(r.verdict()));
    out += "\n";
  }
  return out;
}

absl::StatusOr<std::string> EmitLayoutColossalai(
    const v1::LayoutRequest& request, const v1::LayoutResponse& response) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::GeminiSettings settings,
                             service::FromProto(request.gemini()));
  std::vector<planner::ChunkConfig> configs;
  for (const v1::GroupLayout& g : response.groups()) {
    configs.push_back({g.dp_degree(), g.chunk_size(), g.keep_gathered()});
  }
  return absl::StrCat(
      "GeminiPlugin(",
      planner::ColossalaiKwargs(
          settings, service::PrecisionName(request.gemini().precision()),
          configs),
      ")\n");
}

}  // namespace chunkplan::cli
