#include "client/cli/table_format.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "client/cli/verdict_text.h"

namespace chunkplan::cli {
namespace {

constexpr double kElementsPerMi = 1 << 20;

// "12.3 µs" below a millisecond, else "4.56 ms".
std::string FormatNanos(uint64_t nanos) {
  if (nanos < 1'000'000) return absl::StrFormat("%.1f µs", nanos / 1e3);
  return absl::StrFormat("%.2f ms", nanos / 1e6);
}

// `part` as a percentage of `whole`, 2 decimals; "-" for an empty whole.
std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  return absl::StrFormat(
      "%.2f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// The engine, candidates and time lines of a search.
void AppendRun(v1::Engine engine, uint64_t candidates, uint64_t nanos,
               std::string* out) {
  absl::StrAppendFormat(out, "engine        %s\n", EngineLabel(engine));
  absl::StrAppendFormat(out, "candidates    %u\n", candidates);
  absl::StrAppendFormat(out, "time          %s\n", FormatNanos(nanos));
}

void AppendSearchRun(const v1::ChunkSearchResponse& response,
                     std::string* out) {
  AppendRun(response.engine(), response.candidates(), response.search_nanos(),
            out);
}

}  // namespace

std::string Gib(uint64_t bytes) {
  return absl::StrFormat("%.2f GiB",
                         static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

std::string EngineLabel(v1::Engine engine) {
  const std::string& name = v1::Engine_Name(engine);
  if (name.empty()) return absl::StrCat(static_cast<int>(engine));
  return std::string(absl::StripPrefix(name, "ENGINE_"));
}

std::string FormatTable(const v1::ChunkSearchResponse& response) {
  std::string out =
      "dp degree  chunk size (elements)  chunk size (MiB)  keep gathered\n";
  for (const v1::ChunkConfig& c : response.configs()) {
    absl::StrAppendFormat(&out, "%9u  %21u  %16.2f  %s\n", c.dp_degree(),
                          c.chunk_size(), c.chunk_size() / kElementsPerMi,
                          c.keep_gathered() ? "yes" : "no");
  }
  absl::StrAppendFormat(&out, "\ntotal params  %u\n",
                        response.total_param_size());
  absl::StrAppendFormat(
      &out, "waste         %u elements (%s of total)\n",
      response.min_chunk_waste(),
      Percent(response.min_chunk_waste(), response.total_param_size()));
  AppendSearchRun(response, &out);
  return out;
}

std::string FormatLayoutTable(const v1::LayoutResponse& response) {
  std::string out =
      "dp degree  chunk size (elements)  keep gathered  chunks  padding "
      "(elements)\n";
  uint64_t placed = 0;
  for (const v1::GroupLayout& g : response.groups()) {
    absl::StrAppendFormat(&out, "%9u  %21u  %13s  %6u  %18u\n", g.dp_degree(),
                          g.chunk_size(), g.keep_gathered() ? "yes" : "no",
                          g.chunks_size(), g.padding());
    for (const v1::ChunkLayout& c : g.chunks()) placed += c.used();
  }
  absl::StrAppendFormat(&out, "\nplaced params  %u elements\n", placed);
  absl::StrAppendFormat(&out, "real padding   %u elements (%s of placed)\n",
                        response.layout_padding(),
                        Percent(response.layout_padding(), placed));
  if (response.has_search()) {
    absl::StrAppendFormat(&out,
                          "search's waste %u elements (ColossalAI's search's "
                          "figure, %s of its %u params)\n",
                          response.search().min_chunk_waste(),
                          Percent(response.search().min_chunk_waste(),
                                  response.search().total_param_size()),
                          response.search().total_param_size());
  }
  const v1::RankMemory& most = response.most_loaded_rank();
  const v1::RankMemory& best = response.most_loaded_rank_least();
  const v1::RankMemory& least = response.least_loaded_rank();
  out +=
      "\npart              most loaded (rank 0)  (best order)  least loaded "
      "(rank P-1)\n";
  using Part = uint64_t (v1::RankMemory::*)() const;
  for (const auto& [name, part] :
       {std::pair<const char*, Part>{"params", &v1::RankMemory::param_bytes},
        {"master weights", &v1::RankMemory::master_bytes},
        {"gradients", &v1::RankMemory::grad_bytes},
        {"optimizer", &v1::RankMemory::optimizer_bytes},
        {"frozen", &v1::RankMemory::frozen_bytes},
        {"device total", &v1::RankMemory::device_bytes},
        {"pinned host", &v1::RankMemory::pinned_host_bytes},
        {"offloaded host", &v1::RankMemory::offloaded_host_bytes},
        {"host total", &v1::RankMemory::host_bytes}}) {
    absl::StrAppendFormat(&out, "%-16s  %20s  %12s  %23s\n", name,
                          Gib((most.*part)()), Gib((best.*part)()),
                          Gib((least.*part)()));
  }
  const v1::PlacementOutcome& p = response.placement();
  absl::StrAppendFormat(
      &out,
      "\noffloaded chunks       %u .. %u (least .. most over every chunk "
      "order), %.1f%% of the fp16 chunk bytes\n",
      p.offloaded_chunks(), p.offloaded_chunks_max(),
      100 * p.effective_offload_optim_frac());
  if (p.gathered_at_run_time() > 0) {
    absl::StrAppendFormat(&out, "gathered at run time   %u chunks\n",
                          p.gathered_at_run_time());
  }
  if (p.param_offloaded_chunks() > 0) {
    absl::StrAppendFormat(&out, "fp16 shards on host    %u chunks\n",
                          p.param_offloaded_chunks());
  }
  for (const std::string& note : p.notes()) {
    absl::StrAppendFormat(&out, "note  %s\n", note);
  }
  absl::StrAppendFormat(
      &out, "\ngathered chunk buffer  %s, %u chunks at the peak\n",
      Gib(response.gathered_chunk_bytes()), response.gathered_chunks());
  if (response.has_verdict()) {
    absl::StrAppend(&out, "\n", FormatVerdict(response.verdict()));
  }
  if (response.has_search()) AppendSearchRun(response.search(), &out);
  return out;
}

std::string FormatFrontierTable(const v1::FrontierResponse& response,
                                v1::Objective objective) {
  std::string out = absl::StrFormat(
      "candidate  chunk size (elements)  %20s  search waste (elements)  real "
      "padding (elements)  rank 0 peak\n",
      objective == v1::OBJECTIVE_PEAK_RANK_BYTES ? "value (bytes)"
                                                 : "value (elements)");
  for (const v1::FrontierPoint& p : response.points()) {
    absl::StrAppendFormat(&out, "%9u  %21u  %20u  %23u  %23u  %11s\n",
                          p.candidate(), p.chunk_size(), p.value(),
                          p.seed_waste(), p.layout_padding(),
                          Gib(p.peak_rank_bytes()));
  }
  out += "\n";
  AppendRun(response.engine(), response.candidates(), response.search_nanos(),
            &out);
  return out;
}

}  // namespace chunkplan::cli
