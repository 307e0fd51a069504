#ifndef CHUNKPLAN_SERVER_METRICS_HISTOGRAM_H_
#define CHUNKPLAN_SERVER_METRICS_HISTOGRAM_H_

// A Prometheus histogram: counts of observations at or below fixed upper
// bounds, their sum and their count. Not thread-safe: its owner locks.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace chunkplan::metrics {

class Histogram {
 public:
  // `bounds`: the finite upper bounds, strictly increasing; the +Inf bucket
  // is implied.
  explicit Histogram(std::vector<double> bounds);

  // Adds `value` to every bucket whose bound is >= value, to the sum and to
  // the count.
  void Observe(double value);

  // Appends the histogram's sample lines for metric `name` to `out`:
  // name_bucket{<labels>,le="..."} (cumulative, ending with le="+Inf"),
  // name_sum{<labels>} and name_count{<labels>}. `labels` is a rendered,
  // possibly empty, label list without braces, e.g. method="Search".
  void AppendSamples(absl::string_view name, absl::string_view labels,
                     std::string& out) const;

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last: +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// 1, 10, 100, ... 10^(decades-1): bounds for counts that span decades.
std::vector<double> DecadeBounds(int decades);

// A sample value as the text exposition writes it: integers without a
// fraction, others with enough digits to round-trip; "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

}  // namespace chunkplan::metrics

#endif  // CHUNKPLAN_SERVER_METRICS_HISTOGRAM_H_
