#include "client/cli/plan_table.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/verdict_text.h"

namespace chunkplan::cli {
namespace {

double GiB(uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
}

// The chunk size of an option's chunk_config_dict: the first config that
// is not kept gathered, else "gathered".
std::string ChunkSizeLabel(const v1::PlanOption& option) {
  for (const v1::ChunkConfig& c : option.configs()) {
    if (!c.keep_gathered()) return absl::StrCat(c.chunk_size());
  }
  return "gathered";
}

// The verdict of `o` as the server sent it; from its fits and why_not
// fields where a server before issue 41 sent none.
v1::Verdict VerdictOf(const v1::PlanOption& o) {
  if (o.has_verdict()) return o.verdict();
  v1::Verdict v;
  v.set_fits(o.fits());
  v.set_why_not(o.why_not());
  return v;
}

void AppendCluster(const v1::Cluster& c, const v1::PlanResponse& response,
                   std::string* out) {
  absl::StrAppendFormat(out, "device memory %.2f GiB per GPU",
                        GiB(c.device_memory_bytes()));
  if (c.reserve_bytes() != 0) {
    absl::StrAppendFormat(out, " (%.2f GiB reserved)", GiB(c.reserve_bytes()));
  }
  if (!response.options().empty() && response.options(0).has_verdict()) {
    absl::StrAppend(out, ", ", MarginWords(response.options(0).verdict()),
                    " kept free");
  }
  if (c.host_memory_bytes() != 0) {
    absl::StrAppendFormat(out, ", host memory %.2f GiB per node",
                          GiB(c.host_memory_bytes()));
  } else {
    out->append(", host memory not checked");
  }
  absl::StrAppendFormat(out, ", %u GPUs per node", c.gpus_per_node());
  if (c.whole_nodes()) {
    absl::StrAppendFormat(out, ", whole nodes up to %u", c.max_nodes());
  }
  out->append("\n\n");
}

// Each distinct note once, in first-seen order, with the options (counted
// from 1, as rows are read) it holds for.
void AppendNotes(const v1::PlanResponse& response, std::string* out) {
  std::vector<std::pair<std::string, std::vector<int>>> notes;
  for (int i = 0; i < response.options_size(); ++i) {
    for (const std::string& note : response.options(i).notes()) {
      auto it = std::find_if(notes.begin(), notes.end(),
                             [&](const auto& n) { return n.first == note; });
      if (it == notes.end()) it = notes.insert(notes.end(), {note, {}});
      it->second.push_back(i + 1);
    }
  }
  if (!notes.empty()) out->append("\n");
  for (const auto& [note, options] : notes) {
    absl::StrAppend(out, "note  option", options.size() > 1 ? "s " : " ",
                    absl::StrJoin(options, ","), ": ", note, "\n");
  }
}

}  // namespace

std::string PlacementLabel(const v1::GeminiSettings& gemini) {
  if (gemini.placement() == v1::PLACEMENT_AUTO) return "auto";
  std::string out = "static";
  if (gemini.has_shard_param_frac() && gemini.shard_param_frac() != 1) {
    absl::StrAppendFormat(&out, ", shard %.6g", gemini.shard_param_frac());
  }
  if (gemini.offload_optim_frac() != 0) {
    absl::StrAppendFormat(&out, ", optim %.6g", gemini.offload_optim_frac());
  }
  if (gemini.offload_param_frac() != 0) {
    absl::StrAppendFormat(&out, ", param %.6g", gemini.offload_param_frac());
  }
  return out;
}

std::string FormatPlanTable(const v1::PlanRequest& request,
                            const v1::PlanResponse& response) {
  std::string out;
  AppendCluster(request.cluster(), response, &out);
  // The mesh column only where an option has one (tp or extra_dp above 1):
  // zero x extra_dp x tp, the server's fields.
  const bool mesh = std::any_of(
      response.options().begin(), response.options().end(),
      [](const v1::PlanOption& o) {
        return o.gemini().tp_size() > 1 || o.gemini().extra_dp_size() > 1;
      });
  absl::StrAppendFormat(
      &out, "%5s  %5s  %s%-28s  %12s  %-20s  %21s  %24s  %12s  %14s  %s\n",
      "world", "nodes", mesh ? "zero x dp x tp  " : "", "placement",
      "chunk size", "chunk size from", "gathered GiB (chunks)",
      "device need / memory GiB", "headroom GiB", "host/node GiB", "verdict");
  const double memory = GiB(request.cluster().device_memory_bytes());
  for (const v1::PlanOption& o : response.options()) {
    const v1::Verdict v = VerdictOf(o);
    const std::string mesh_text =
        mesh ? absl::StrFormat(
                   "%-15s  ",
                   absl::StrFormat("%u x %u x %u", o.zero_size(),
                                   std::max(1u, o.gemini().extra_dp_size()),
                                   std::max(1u, o.gemini().tp_size())))
             : "";
    absl::StrAppendFormat(
        &out,
        "%5u  %5u  %s%-28s  %12s  %-20s  %21s  %24s  %12.2f  %14.2f  %s\n",
        o.world_size(), o.nodes(), mesh_text, PlacementLabel(o.gemini()),
        ChunkSizeLabel(o), o.chunk_size_from(),
        absl::StrFormat("%.2f (%u)", GiB(o.gathered_chunk_bytes()),
                        o.gathered_chunks()),
        absl::StrFormat("%.2f / %.2f", GiB(o.device_need_bytes()), memory),
        GiB(v.headroom_bytes()), GiB(o.host_bytes_per_node()), VerdictWords(v));
  }
  if (response.options().empty()) out += "(no option)\n";
  if (request.has_workload() && !response.options().empty()) {
    absl::StrAppendFormat(
        &out,
        "\nactivations: an ESTIMATE (docs/plan.md), %.2f GiB per rank held "
        "for backward and %.2f GiB transient in backward, both counted in "
        "the device need\n",
        GiB(response.options(0).activation_bytes()),
        GiB(response.options(0).transient_bytes()));
  }
  AppendNotes(response, &out);
  absl::StrAppendFormat(
      &out, "\noptions considered  %u\nplan time           %.2f ms\n",
      response.options_considered(),
      static_cast<double>(response.plan_nanos()) / 1e6);
  if (!response.options().empty()) {
    absl::StrAppend(&out, "\noption 1  GeminiPlugin(",
                    response.options(0).colossalai(), ")\n");
  }
  return out;
}

std::optional<std::string> NothingFits(const v1::PlanResponse& response) {
  if (response.options().empty()) return "the plan has no option";
  for (const v1::PlanOption& o : response.options()) {
    if (o.fits()) return std::nullopt;
  }
  return absl::StrCat("no option fits; option 1 ",
                      VerdictWords(VerdictOf(response.options(0))));
}

absl::StatusOr<std::string> EmitColossalai(const v1::PlanResponse& response) {
  if (response.options().empty()) {
    return absl::NotFoundError("the plan has no option to emit");
  }
  return absl::StrCat("GeminiPlugin(", response.options(0).colossalai(), ")\n");
}

}  // namespace chunkplan::cli
