// Unit tests of the server's Prometheus metrics (server/metrics): histogram
// buckets and the text exposition, with expected text written from the
// format's rules (cumulative buckets, +Inf, _sum and _count, escaping).

#include "server/metrics/call_metrics.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/metrics/histogram.h"
#include "server/service/call_log.h"

namespace chunkplan::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HistogramTest, BucketsAreCumulativeAndBoundsInclusive) {
  Histogram histogram({1, 10});
  for (const double v : {0.5, 1.0, 2.0, 10.0, 11.0}) histogram.Observe(v);
  std::string out;
  histogram.AppendSamples("x", "m=\"a\"", out);
  EXPECT_EQ(out,
            "x_bucket{m=\"a\",le=\"1\"} 2\n"
            "x_bucket{m=\"a\",le=\"10\"} 4\n"
            "x_bucket{m=\"a\",le=\"+Inf\"} 5\n"
            "x_sum{m=\"a\"} 24.5\n"
            "x_count{m=\"a\"} 5\n");
}

TEST(HistogramTest, NoLabels) {
  Histogram histogram({2});
  histogram.Observe(3);
  std::string out;
  histogram.AppendSamples("y", "", out);
  EXPECT_EQ(out,
            "y_bucket{le=\"2\"} 0\n"
            "y_bucket{le=\"+Inf\"} 1\n"
            "y_sum 3\n"
            "y_count 1\n");
}

TEST(FormatValueTest, IntegersPlainOthersRoundTrip) {
  EXPECT_EQ(FormatValue(1000000), "1000000");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(std::stod(FormatValue(0.1 + 0.2)), 0.1 + 0.2);
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
}

TEST(EscapeLabelValueTest, EscapesBackslashQuoteNewline) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(CallMetricsTest, CountsCallsByCodeAndSearchesByEngine) {
  int in_flight = 3;
  CallMetrics metrics("9.9.9", "CPU_SWEEP", [&in_flight] { return in_flight; });
  service::CallRecord ok;
  ok.params = 5;
  ok.candidates = 20;
  ok.engine = planner::Engine::kCpuSweep;
  ok.micros = 1500;
  metrics.Observe("Search", ok);
  metrics.Observe("Search", ok);
  service::CallRecord bad;
  bad.status = absl::InvalidArgumentError("no numels");
  metrics.Observe("Search", bad);

  const std::string text = metrics.Exposition();
  EXPECT_THAT(text, HasSubstr("chunkplan_build_info{version=\"9.9.9\","
                              "engines=\"CPU_SWEEP\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("chunkplan_calls_total{method=\"Search\","
                              "code=\"OK\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("chunkplan_calls_total{method=\"Search\","
                              "code=\"INVALID_ARGUMENT\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("chunkplan_searches_total{engine=\"CPU_SWEEP\"}"
                              " 2\n"));
  EXPECT_THAT(text, Not(HasSubstr("chunkplan_searches_total{engine=\"AUTO\"")));
  EXPECT_THAT(text, HasSubstr("chunkplan_call_params_sum{method=\"Search\"} "
                              "10\n"));
  // The failed call ran no search: two candidate observations, not three.
  EXPECT_THAT(text, HasSubstr("chunkplan_call_candidates_count{method="
                              "\"Search\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("chunkplan_call_duration_seconds_sum{method="
                              "\"Search\"} 0.003\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE chunkplan_call_duration_seconds "
                              "histogram\n"));
  EXPECT_THAT(text, HasSubstr("chunkplan_searches_in_flight 3\n"));
}

TEST(CallMetricsTest, FallbacksCountedByTheEngineThatFinished) {
  CallMetrics metrics("1", "CPU_SWEEP");
  service::CallRecord record;
  record.engine = planner::Engine::kCpuPlateau;
  record.fallback_reason = "device lost";
  metrics.Observe("Search", record);
  const std::string text = metrics.Exposition();
  EXPECT_THAT(text, HasSubstr("chunkplan_engine_fallbacks_total{engine="
                              "\"CPU_PLATEAU\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("chunkplan_searches_in_flight")));
}

}  // namespace
}  // namespace chunkplan::metrics
