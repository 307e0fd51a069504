#include "client/cli/table_format.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

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

}  // namespace

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
  absl::StrAppendFormat(&out, "engine        %s\n",
                        EngineLabel(response.engine()));
  absl::StrAppendFormat(&out, "candidates    %u\n", response.candidates());
  absl::StrAppendFormat(&out, "time          %s\n",
                        FormatNanos(response.search_nanos()));
  return out;
}

}  // namespace chunkplan::cli
