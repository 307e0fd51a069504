#include "server/metrics/histogram.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace chunkplan::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  // The first bound >= value; past the end: the +Inf bucket.
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  ++counts_[static_cast<size_t>(it - bounds_.begin())];
  sum_ += value;
  ++count_;
}

void Histogram::AppendSamples(absl::string_view name, absl::string_view labels,
                              std::string& out) const {
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le =
        i < bounds_.size() ? FormatValue(bounds_[i]) : std::string("+Inf");
    absl::StrAppend(&out, name, "_bucket{", labels, sep, "le=\"", le, "\"} ",
                    cumulative, "\n");
  }
  const std::string braced =
      labels.empty() ? std::string() : absl::StrCat("{", labels, "}");
  absl::StrAppend(&out, name, "_sum", braced, " ", FormatValue(sum_), "\n");
  absl::StrAppend(&out, name, "_count", braced, " ", count_, "\n");
}

std::vector<double> DecadeBounds(int decades) {
  std::vector<double> bounds;
  double bound = 1;
  for (int i = 0; i < decades; ++i, bound *= 10) bounds.push_back(bound);
  return bounds;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return absl::StrFormat("%.0f", value);
  }
  // Shortest text that reads back as `value`.
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

}  // namespace chunkplan::metrics
