// The planner against the Python oracle (tests/oracle/chunk_search_oracle.py,
// the seed on plain data): thousands of fresh random requests per run and a
// few hand-picked edges, every one answered by both CPU engines and required
// to equal the oracle's answer exactly.
//
// The random seed comes from CHUNKPLAN_DIFF_SEED when set (a failure prints
// it; set it to replay), else from std::random_device. CHUNKPLAN_DIFF_REQUESTS
// overrides the number of random requests (default 2000), and
// CHUNKPLAN_DIFF_ORACLE the oracle script (to check that a broken oracle
// makes this test fail).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "common/json_codec.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/service/proto_convert.h"
#include "testing/model_shapes.h"
#include "testing/oracle_runner.h"
#include "tests/differential/mismatch_report.h"
#include "tests/differential/random_requests.h"

namespace chunkplan::testing {
namespace {

constexpr int kDefaultRequests = 2000;

// "" when both CPU engines answer `request` exactly as `expected` (configs in
// order, total, waste); else what differs.
std::string CompareEngines(const planner::Planner& planner,
                           const v1::ChunkSearchRequest& request,
                           const v1::ChunkSearchResponse& expected) {
  std::string diff;
  for (const v1::Engine engine :
       {v1::ENGINE_CPU_SWEEP, v1::ENGINE_CPU_PLATEAU}) {
    v1::ChunkSearchRequest with_engine = request;
    with_engine.set_engine(engine);
    const absl::StatusOr<planner::SearchRequest> converted =
        service::FromProto(with_engine);
    if (!converted.ok()) {
      absl::StrAppend(&diff, v1::Engine_Name(engine),
                      ": FromProto failed: ", converted.status().ToString(),
                      "\n");
      continue;
    }
    const absl::StatusOr<planner::SearchResult> result =
        planner.Search(*converted);
    if (!result.ok()) {
      absl::StrAppend(&diff, v1::Engine_Name(engine),
                      ": planner failed: ", result.status().ToString(), "\n");
      continue;
    }
    const v1::ChunkSearchResponse full = service::ToProto(*result);
    v1::ChunkSearchResponse answer;
    *answer.mutable_configs() = full.configs();
    answer.set_total_param_size(full.total_param_size());
    answer.set_min_chunk_waste(full.min_chunk_waste());
    if (full.engine() != engine) {
      absl::StrAppend(&diff, v1::Engine_Name(engine), ": ran ",
                      v1::Engine_Name(full.engine()), "\n");
    }
    if (!google::protobuf::util::MessageDifferencer::Equals(answer, expected)) {
      absl::StrAppend(&diff, v1::Engine_Name(engine), ":\n  expected (oracle) ",
                      common::MessageToJson(expected), "\n  actual (planner)  ",
                      common::MessageToJson(answer), "\n");
    }
  }
  return diff;
}

// Checks every request against the oracle. Returns the oracle's answers
// (an empty response where it had none); records a failure per mismatch,
// printing the first MismatchReport::kMaxPrinted in full and writing every
// failing request to `replay_path` (when not empty).
std::vector<v1::ChunkSearchResponse> CheckAgainstOracle(
    const std::vector<v1::ChunkSearchRequest>& requests,
    const std::string& context, const std::string& replay_path) {
  std::vector<std::string> lines;
  lines.reserve(requests.size());
  for (const auto& r : requests) lines.push_back(common::MessageToJson(r));

  std::vector<v1::ChunkSearchResponse> answers(requests.size());
  const absl::StatusOr<std::vector<std::string>> oracle =
      RunOracleJsonl(SearchOracle(), lines);
  if (!oracle.ok()) {
    ADD_FAILURE() << context << ": " << oracle.status();
    return answers;
  }

  const planner::Planner planner;
  MismatchReport report(context, SearchOracle());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string diff;
    absl::StatusOr<v1::ChunkSearchResponse> expected =
        ParseOracleAnswer((*oracle)[i]);
    if (!expected.ok()) {
      // Every request here is valid: an oracle error is a generator defect
      // or an oracle defect, never something to skip.
      diff = absl::StrCat(expected.status().message(), "\n");
    } else {
      diff = CompareEngines(planner, requests[i], *expected);
      answers[i] = *std::move(expected);
    }
    report.Add(i, lines[i], diff);
  }
  report.Finish(replay_path);
  return answers;
}

// How much of each corner a run reached.
struct Coverage {
  int shapes[kNumShapes] = {};
  int at_limit_kept = 0;     // a size exactly at mean + 3 std, kept
  int at_limit_dropped = 0;  // ... dropped by float rounding
  int above_limit = 0;       // a size one above the sizes at the limit
  int below_limit = 0;       // the limit pulled down by a size one below
  int some_gathered = 0;     // answers with gathered and swept degrees
  int all_gathered = 0;      // answers with every degree gathered
  int zero_sizes = 0;
  int filter_off = 0;
  int interval_one = 0;
  int interval_above_range = 0;
  int range_zero = 0;
  int half_way_m = 0;     // an _m value exactly half-way between elements
  int emptied_group = 0;  // checked: the seed itself crashes on it
  int over_8192 = 0;
  int hundred_thousand = 0;
};

bool HalfWay(double m) {
  const double twice = std::ldexp(m, 21);
  return std::nearbyint(twice) == twice && std::fmod(twice, 2.0) != 0.0;
}

void Count(const GeneratedRequest& g, const v1::ChunkSearchResponse& answer,
           Coverage* c) {
  const v1::ChunkSearchRequest& r = g.request;
  ++c->shapes[static_cast<int>(g.shape)];
  if (g.reveals_probe && answer.configs_size() == 1) {
    const bool kept = answer.configs(0).chunk_size() == g.probe;
    if (g.probe_offset == 0) {
      ++(kept ? c->at_limit_kept : c->at_limit_dropped);
    } else {
      ++(g.probe_offset > 0 ? c->above_limit : c->below_limit);
    }
  }
  int gathered = 0;
  for (const auto& config : answer.configs())
    gathered += config.keep_gathered();
  if (gathered > 0 && gathered < answer.configs_size()) ++c->some_gathered;
  if (gathered > 0 && gathered == answer.configs_size()) ++c->all_gathered;
  if (std::count(r.numels().begin(), r.numels().end(), 0) > 0) ++c->zero_sizes;
  if (r.has_filter_exlarge_params() && !r.filter_exlarge_params()) {
    ++c->filter_off;
  }
  const double range = std::nearbyint(std::ldexp(r.search_range_m(), 20));
  if (r.search_interval() == 1) ++c->interval_one;
  if (static_cast<double>(r.search_interval()) > range) {
    ++c->interval_above_range;
  }
  if (range == 0) ++c->range_zero;
  if (HalfWay(r.search_range_m()) ||
      (r.has_min_chunk_size_m() && HalfWay(r.min_chunk_size_m()))) {
    ++c->half_way_m;
  }
  if (r.numels_size() > 8192) ++c->over_8192;
  if (r.numels_size() >= 100000) ++c->hundred_thousand;
}

void Print(const Coverage& c, std::ostream& out) {
  out << "coverage:";
  for (int s = 0; s < kNumShapes; ++s) {
    out << " " << ShapeName(static_cast<Shape>(s)) << "=" << c.shapes[s];
  }
  out << "\n  at limit kept=" << c.at_limit_kept
      << " dropped=" << c.at_limit_dropped << ", one above=" << c.above_limit
      << ", one below=" << c.below_limit
      << "\n  some gathered=" << c.some_gathered
      << " all gathered=" << c.all_gathered << " zeros=" << c.zero_sizes
      << " filter off=" << c.filter_off << "\n  interval 1=" << c.interval_one
      << " interval > range=" << c.interval_above_range
      << " range 0=" << c.range_zero << " half-way _m=" << c.half_way_m
      << "\n  emptied group=" << c.emptied_group
      << " >8192 sizes=" << c.over_8192
      << " 100,000 sizes=" << c.hundred_thousand << "\n";
}

TEST(DifferentialTest, RandomRequestsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  const int count =
      static_cast<int>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", kDefaultRequests));
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << " (" << count
            << " requests)\n";
  ::testing::Test::RecordProperty("chunkplan_diff_seed", std::to_string(seed));

  RequestGenerator generator(seed);
  std::vector<GeneratedRequest> generated;
  std::vector<v1::ChunkSearchRequest> requests;
  for (int i = 0; i < count; ++i) {
    // Every shape twice first, whatever the draws.
    generated.push_back(i < 2 * kNumShapes
                            ? generator.Next(static_cast<Shape>(i % kNumShapes))
                            : generator.Next());
    requests.push_back(generated.back().request);
  }

  const std::string context = absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed);
  const std::string replay =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("chunkplan_diff_failures_", seed, ".jsonl"))
          .string();
  const std::vector<v1::ChunkSearchResponse> answers =
      CheckAgainstOracle(requests, context, replay);

  Coverage coverage;
  for (int i = 0; i < count; ++i) Count(generated[i], answers[i], &coverage);

  // The extension's cases must really be ones the seed crashes on.
  std::vector<std::string> emptied;
  for (const GeneratedRequest& g : generated) {
    if (g.empties_a_group) emptied.push_back(common::MessageToJson(g.request));
  }
  const absl::StatusOr<std::vector<std::string>> strict =
      RunOracleJsonl(SearchOracle(/*strict=*/true), emptied);
  ASSERT_TRUE(strict.ok()) << strict.status();
  for (size_t i = 0; i < emptied.size(); ++i) {
    if ((*strict)[i].find("max() arg is an empty sequence") !=
        std::string::npos) {
      ++coverage.emptied_group;
    } else {
      ADD_FAILURE() << context << ": built to empty a group, but the seed "
                    << "answers " << (*strict)[i] << "\n  request "
                    << Clip(emptied[i]);
    }
  }

  Print(coverage, std::cout);
  // Each corner in a meaningful share of a full-size run, so that the
  // generator cannot silently stop reaching one (a smaller run, as the
  // sanitized pass makes, is checked request by request only).
  if (count < kDefaultRequests) return;
  const int need = std::max(1, count / 400);
  EXPECT_GE(coverage.at_limit_kept, need);
  EXPECT_GE(coverage.at_limit_dropped, need)
      << "no size at mean + 3 std was dropped by rounding";
  EXPECT_GE(coverage.above_limit, need);
  EXPECT_GE(coverage.below_limit, need);
  EXPECT_GE(coverage.some_gathered, need);
  EXPECT_GE(coverage.all_gathered, need);
  EXPECT_GE(coverage.zero_sizes, need);
  EXPECT_GE(coverage.filter_off, need);
  EXPECT_GE(coverage.interval_one, need);
  EXPECT_GE(coverage.interval_above_range, need);
  EXPECT_GE(coverage.range_zero, need);
  EXPECT_GE(coverage.half_way_m, need);
  EXPECT_GE(coverage.emptied_group, need);
  EXPECT_GE(coverage.over_8192, 1);
  EXPECT_GE(coverage.hundred_thousand, 1);
}

// ColossalAI's GPT-2 test model (tied head) at one degree.
v1::ChunkSearchRequest Gpt2Request(uint32_t degree, uint64_t interval,
                                   double range_m) {
  v1::ChunkSearchRequest r;
  for (uint64_t n : Gpt2TestNumels()) r.add_numels(n);
  r.add_dp_degrees(degree);
  r.set_search_range_m(range_m);
  r.set_search_interval(interval);
  r.set_min_chunk_size_m(0);
  r.set_filter_exlarge_params(true);
  return r;
}

TEST(DifferentialTest, PublishedGpt2ChunkSize) {
  // ColossalAI's own test: search_range_m 1, interval 128, minimum 0,
  // filter on -> chunk size 527872, at dp 1 and at dp 4.
  const std::vector<v1::ChunkSearchRequest> requests = {Gpt2Request(1, 128, 1),
                                                        Gpt2Request(4, 128, 1)};
  const std::vector<v1::ChunkSearchResponse> answers =
      CheckAgainstOracle(requests, "GPT-2", "");
  for (const v1::ChunkSearchResponse& answer : answers) {
    ASSERT_EQ(answer.configs_size(), 1);
    EXPECT_EQ(answer.configs(0).chunk_size(), kGpt2TestChunkSize);
    EXPECT_FALSE(answer.configs(0).keep_gathered());
  }
}

// Requests picked by hand for the corners, as protobuf JSON.
std::vector<std::string> EdgeRequests() {
  std::vector<std::string> edges = {
      // One size 0: start 0, a chunk size of 0.
      R"({"numels": ["0"], "search_interval": "1", "min_chunk_size_m": 0})",
      // Only zeros, several candidates from 0.
      R"({"numels": ["0", "0", "0"], "search_interval": "5",
          "search_range_m": 1.9073486328125e-05, "min_chunk_size_m": 0})",
      // One size 0 under the default minimum: gathered, chunk size 0.
      R"({"numels": ["0"], "search_interval": "1"})",
      // Every group gathered under the default minimum, gathered first.
      R"({"numels": ["10", "20", "30"], "dp_degrees": [3, 1, 3],
          "search_interval": "7", "search_range_m": 1})",
      // A gathered degree seen after a swept one still comes first.
      R"({"numels": ["1000", "5", "900", "6"], "dp_degrees": [4, 2, 4, 2],
          "search_interval": "64", "search_range_m": 0.0009765625,
          "min_chunk_size_m": 0.00095367431640625})",
      // The extension: degree 2 holds only an outlier.
      R"({"numels": ["3", "3", "3", "3", "3", "3", "3", "3", "3", "3", "3",
                     "3", "3", "3", "3", "3", "3", "3", "3", "3", "1000"],
          "dp_degrees": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                         1, 1, 1, 2],
          "search_interval": "1", "search_range_m": 2.86102294921875e-06,
          "min_chunk_size_m": 0})",
      // The outlier group seen first.
      R"({"numels": ["5000000000", "7", "9", "11", "13", "15", "17", "19",
                     "21", "23", "25", "27", "29", "31", "33", "35", "37",
                     "39", "41", "43", "45", "47", "49"],
          "dp_degrees": [8, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                         3, 3, 3, 3, 3, 3],
          "search_interval": "2", "search_range_m": 3.814697265625e-05,
          "min_chunk_size_m": 0})",
      // The filter off keeps the outlier.
      R"({"numels": ["5000000000", "7", "9", "11", "13", "15", "17", "19",
                     "21", "23", "25", "27", "29", "31", "33", "35", "37",
                     "39", "41", "43", "45", "47", "49"],
          "dp_degrees": [8, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                         3, 3, 3, 3, 3, 3],
          "search_interval": "2", "search_range_m": 3.814697265625e-05,
          "min_chunk_size_m": 0, "filter_exlarge_params": false})",
      // Exactly at the limit in exact arithmetic too: 9 x 0 and 10
      // (mean 1, std 3); and 19 x 0 and 10, where 10 goes.
      R"({"numels": ["0", "0", "0", "0", "0", "0", "0", "0", "0", "10"],
          "search_interval": "1", "min_chunk_size_m": 0})",
      R"({"numels": ["0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
                     "0", "0", "0", "0", "0", "0", "0", "0", "10"],
          "search_interval": "1",
          "min_chunk_size_m": 3.814697265625e-06})",
      // Half-way ranges: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2 elements.
      R"({"numels": ["3", "5", "2"], "search_interval": "1",
          "search_range_m": 4.76837158203125e-07, "min_chunk_size_m": 0,
          "filter_exlarge_params": false})",
      R"({"numels": ["3", "5", "2"], "search_interval": "1",
          "search_range_m": 1.430511474609375e-06, "min_chunk_size_m": 0,
          "filter_exlarge_params": false})",
      R"({"numels": ["3", "5", "2"], "search_interval": "1",
          "search_range_m": 2.384185791015625e-06, "min_chunk_size_m": 0,
          "filter_exlarge_params": false})",
      // Tiny negative _m values round to -0: valid.
      R"({"numels": ["3", "5", "2"], "search_interval": "1",
          "search_range_m": -4.76837158203125e-07,
          "min_chunk_size_m": -4.291534423828125e-07})",
      // A half-way minimum: 1.5 -> 2 elements, 2.5 -> 2.
      R"({"numels": ["1", "1"], "search_interval": "1",
          "min_chunk_size_m": 1.430511474609375e-06})",
      R"({"numels": ["1", "1"], "search_interval": "1",
          "min_chunk_size_m": 2.384185791015625e-06})",
      // Interval far above everything; coprime degrees and their lcm.
      R"({"numels": ["100", "100", "100", "100"], "dp_degrees": [2, 3, 5, 7],
          "search_interval": "1099511627776", "search_range_m": 4096,
          "min_chunk_size_m": 0})",
      R"({"numels": ["100", "100", "100"], "dp_degrees": [2, 3, 5],
          "search_interval": "7", "min_chunk_size_m": 0,
          "filter_exlarge_params": false})",
      // Twelve degrees: lcm 27720.
      R"({"numels": ["11", "12", "13", "14", "15", "16", "17", "18", "19",
                     "20", "21", "22"],
          "dp_degrees": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
          "search_interval": "3", "search_range_m": 3.0517578125e-05,
          "min_chunk_size_m": 0})",
      // Sizes past 2^53: the filter compares them as doubles; interval 2
      // keeps the seed's float division exact.
      R"({"numels": ["9007199254740994", "9007199254740991",
                     "9007199254740993", "12345"],
          "search_interval": "2", "search_range_m": 3.814697265625e-06,
          "min_chunk_size_m": 0})",
      // A non-dyadic range: 0.3 Mi elements.
      R"({"numels": ["4096", "4096", "12288", "8192", "1"],
          "search_interval": "100", "search_range_m": 0.3,
          "min_chunk_size_m": 0})",
  };
  // Equal sizes beyond one numpy buffer (std 0), and 9k : k at the limit
  // with 100,000 sizes (numpy adds them in blocks of 8192).
  std::string equal = R"({"numels": [)";
  for (int i = 0; i < 9000; ++i) absl::StrAppend(&equal, i ? "," : "", "12289");
  absl::StrAppend(&equal, R"(], "search_interval": "4096",
      "search_range_m": 0.01171875, "min_chunk_size_m": 0})");
  edges.push_back(equal);
  std::string limit = R"({"numels": [)";
  for (int i = 0; i < 100000; ++i) {
    absl::StrAppend(&limit, i ? "," : "",
                    i % 10 == 3 ? "1048576000003" : "1000000000001");
  }
  absl::StrAppend(&limit,
                  R"(], "search_interval": "1", "min_chunk_size_m": 0})");
  edges.push_back(limit);
  return edges;
}

TEST(DifferentialTest, HandPickedEdgesMatchTheOracle) {
  std::vector<v1::ChunkSearchRequest> requests;
  for (const std::string& json : EdgeRequests()) {
    v1::ChunkSearchRequest r;
    ASSERT_TRUE(common::JsonToMessage(json, &r).ok()) << json;
    requests.push_back(r);
  }
  // GPT-2 with the ColossalAI test's finer grid: 2^16 + 1 and 2^20 + 1
  // candidates, where the plateau engine skips most.
  requests.push_back(Gpt2Request(1, 16, 1));
  requests.push_back(Gpt2Request(3, 1, 1));
  CheckAgainstOracle(requests, "hand-picked edges", "");
}

}  // namespace
}  // namespace chunkplan::testing
