// Plan against the Python plan oracle (tests/oracle/plan_oracle.py, written
// from docs/plan.md by brute force over the layout, placement and activation
// oracles, not from this code): fresh random requests every run and the
// LLaMA-2 70B and Mixtral workloads on the cluster, each answered by
// the planner and required to equal the oracle's answer option for option
// (every field, the order, options_considered); a request the oracle refuses
// must be INVALID_ARGUMENT naming the same field.
//
// CHUNKPLAN_DIFF_SEED replays a run (a failure prints it),
// CHUNKPLAN_DIFF_REQUESTS sets the number of random requests (default 30),
// CHUNKPLAN_DIFF_PLAN_ORACLE names another oracle script (to check that a
// broken oracle fails this test).

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "common/json_codec.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/planner/planner.h"
#include "server/service/proto_convert.h"
#include "testing/oracle_runner.h"
#include "tests/differential/mismatch_report.h"
#include "tests/differential/random_plans.h"

#if !defined(CHUNKPLAN_PYTHON) || !defined(CHUNKPLAN_PLAN_ORACLE) || \
    !defined(CHUNKPLAN_WORKLOAD_DIR)
#error "the build names the Python, plan_oracle.py and bench/workloads"
#endif

namespace chunkplan::testing {
namespace {

constexpr int kDefaultRequests = 30;
constexpr uint64_t kGiB = uint64_t{1} << 30;

OracleCommand PlanOracle() {
  const char* script = std::getenv("CHUNKPLAN_DIFF_PLAN_ORACLE");
  return OracleCommand{CHUNKPLAN_PYTHON,
                       script != nullptr ? script : CHUNKPLAN_PLAN_ORACLE};
}

// The planner's request for `request`: the search part, frozen and the fixed
// choices through the Layout request's conversion (the service's), the rest
// copied. Workloads are not converted (these requests carry none).
absl::StatusOr<planner::PlanRequest> ToPlanner(const v1::PlanRequest& request) {
  v1::LayoutRequest layout;
  *layout.mutable_search() = request.search();
  *layout.mutable_frozen() = request.frozen();
  v1::GeminiSettings* gemini = layout.mutable_gemini();
  *gemini = request.gemini();
  gemini->clear_placement();  // ignored by Plan
  gemini->clear_shard_param_frac();
  gemini->clear_offload_optim_frac();
  gemini->clear_offload_param_frac();
  gemini->clear_device_memory_bytes();
  absl::StatusOr<planner::LayoutRequest> plain = service::FromProto(layout);
  if (!plain.ok()) return plain.status();
  planner::PlanRequest out;
  out.search = std::move(plain->search);
  out.frozen = std::move(plain->frozen);
  out.gemini = plain->gemini;
  out.precision =
      request.gemini().precision() == v1::PRECISION_BF16 ? "bf16" : "fp16";
  const v1::Cluster& c = request.cluster();
  out.cluster.device_memory_bytes = c.device_memory_bytes();
  out.cluster.host_memory_bytes = c.host_memory_bytes();
  out.cluster.gpus_per_node = c.gpus_per_node();
  out.cluster.world_sizes.assign(c.world_sizes().begin(),
                                 c.world_sizes().end());
  out.cluster.reserve_bytes = c.reserve_bytes();
  out.max_options = request.max_options();
  return out;
}

// The wire form of `m`, as the service's Layout answer converts it.
v1::RankMemory RankToWire(const planner::RankMemory& m) {
  planner::LayoutResult layout;
  layout.most_loaded_rank = m;
  return service::ToProto(layout).most_loaded_rank();
}

void SetGemini(const planner::GeminiSettings& s, const std::string& precision,
               v1::GeminiSettings* out) {
  out->set_precision(precision == "bf16" ? v1::PRECISION_BF16
                                         : v1::PRECISION_FP16);
  out->set_master_weights(s.master_weights);
  out->set_gradient_accumulation(s.gradient_accumulation);
  out->set_pin_memory(s.pin_memory);
  out->set_optimizer(static_cast<v1::Optimizer>(s.optimizer));
  out->set_placement(static_cast<v1::Placement>(s.placement));
  if (s.shard_param_frac.has_value()) {
    out->set_shard_param_frac(*s.shard_param_frac);
  }
  out->set_offload_optim_frac(s.offload_optim_frac);
  out->set_offload_param_frac(s.offload_param_frac);
  if (s.device_memory_bytes.has_value()) {
    out->set_device_memory_bytes(*s.device_memory_bytes);
  }
}

// The wire form of `result` (plan_nanos left out, as the oracle's).
v1::PlanResponse ToWire(const planner::PlanResult& result,
                        const std::string& precision) {
  v1::PlanResponse out;
  for (const planner::PlanOption& o : result.options) {
    v1::PlanOption* p = out.add_options();
    p->set_world_size(o.world_size);
    SetGemini(o.gemini, precision, p->mutable_gemini());
    for (const planner::ChunkConfig& c : o.configs) {
      v1::ChunkConfig* config = p->add_configs();
      config->set_dp_degree(c.dp_degree);
      config->set_chunk_size(c.chunk_size);
      config->set_keep_gathered(c.keep_gathered);
    }
    p->set_objective(static_cast<v1::Objective>(o.objective));
    *p->mutable_most_loaded_rank() = RankToWire(o.most_loaded_rank);
    p->set_gathered_chunk_bytes(o.gathered_chunk_bytes);
    p->set_host_bytes_per_node(o.host_bytes_per_node);
    p->set_layout_padding(o.layout_padding);
    p->set_fits(o.fits);
    p->set_why_not(o.why_not);
    p->set_colossalai(o.colossalai);
    p->set_activation_bytes(o.activation_bytes);
    p->set_chunk_size_from(planner::ChunkSizeFromName(o.chunk_size_from));
    for (const std::string& note : o.notes) p->add_notes(note);
    p->set_device_need_bytes(o.device_need_bytes);
  }
  out.set_options_considered(result.options_considered);
  return out;
}

// The oracle's answer on one line, or INVALID_ARGUMENT with its refusal.
// Errors: INTERNAL when the line is neither.
absl::StatusOr<absl::StatusOr<v1::PlanResponse>> ParsePlanAnswer(
    const std::string& line) {
  v1::PlanResponse response;
  if (common::JsonToMessage(line, &response).ok()) return response;
  google::protobuf::Struct error;
  if (common::JsonToMessage(line, &error).ok() &&
      error.fields().contains("error")) {
    return absl::StatusOr<v1::PlanResponse>(
        absl::InvalidArgumentError(error.fields().at("error").string_value()));
  }
  return absl::InternalError(absl::StrCat(
      "the plan oracle answered neither a PlanResponse nor an error: ", line));
}

// The planner's answer to `request` in wire form.
absl::StatusOr<v1::PlanResponse> PlannerPlan(const planner::Planner& planner,
                                             const v1::PlanRequest& request) {
  absl::StatusOr<planner::PlanRequest> plain = ToPlanner(request);
  if (!plain.ok()) return plain.status();
  absl::StatusOr<planner::PlanResult> result = planner.Plan(*plain);
  if (!result.ok()) return result.status();
  return ToWire(*result, plain->precision);
}

// "" when `actual` is what the oracle said; else what differs.
std::string Diff(const absl::StatusOr<v1::PlanResponse>& expected,
                 const absl::StatusOr<v1::PlanResponse>& actual) {
  if (!expected.ok()) {
    return RefusalDiff("planner", expected.status().message(), actual.status());
  }
  if (!actual.ok()) return absl::StrCat(actual.status().ToString(), "\n");
  std::string report;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&report);
  if (differ.Compare(*expected, *actual)) return "";
  return absl::StrCat("differs from the oracle (expected -> actual):\n",
                      Clip(report, 6000));
}

// How much of each corner a run reached.
struct Coverage {
  int placements[5] = {};
  int sources[3] = {};
  int refused = 0, fit = 0, not_fit = 0, both_budgets = 0;
};

void Count(const absl::StatusOr<v1::PlanResponse>& answer, Coverage* c) {
  if (!answer.ok()) {
    ++c->refused;
    return;
  }
  for (const v1::PlanOption& o : answer->options()) {
    const v1::GeminiSettings& g = o.gemini();
    int rank = 0;
    if (g.placement() == v1::PLACEMENT_AUTO) {
      rank = 4;
    } else if (g.offload_param_frac() > 0) {
      rank = 3;
    } else if (g.offload_optim_frac() == 1) {
      rank = 2;
    } else if (g.offload_optim_frac() > 0) {
      rank = 1;
    }
    ++c->placements[rank];
    for (int s = 0; s < 3; ++s) {
      c->sources[s] +=
          o.chunk_size_from() ==
          planner::ChunkSizeFromName(static_cast<planner::ChunkSizeFrom>(s));
    }
    ++(o.fits() ? c->fit : c->not_fit);
    c->both_budgets += o.why_not().find(';') != std::string::npos;
  }
}

// Checks every request against the oracle; returns the oracle's answers.
std::vector<absl::StatusOr<v1::PlanResponse>> CheckAgainstOracle(
    const std::vector<v1::PlanRequest>& requests, const std::string& context) {
  std::vector<std::string> lines;
  for (const auto& r : requests) lines.push_back(common::MessageToJson(r));
  std::vector<absl::StatusOr<v1::PlanResponse>> answers(
      requests.size(), absl::UnknownError("not asked"));
  const absl::StatusOr<std::vector<std::string>> oracle =
      RunOracleJsonl(PlanOracle(), lines);
  if (!oracle.ok()) {
    ADD_FAILURE() << context << ": " << oracle.status();
    return answers;
  }
  const planner::Planner planner;
  MismatchReport report(context, PlanOracle());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string diff;
    absl::StatusOr<absl::StatusOr<v1::PlanResponse>> expected =
        ParsePlanAnswer((*oracle)[i]);
    if (!expected.ok()) {
      diff = absl::StrCat(expected.status().message(), "\n");
    } else {
      diff = Diff(*expected, PlannerPlan(planner, requests[i]));
      answers[i] = *std::move(expected);
    }
    report.Add(i, lines[i], diff);
  }
  report.Finish("");
  return answers;
}

TEST(PlanDifferentialTest, RandomRequestsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  const int count =
      static_cast<int>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", kDefaultRequests));
  PlanGenerator generator(seed);
  std::vector<v1::PlanRequest> requests;
  for (int i = 0; i < count; ++i) {
    PlanFault fault;
    requests.push_back(generator.Next(0.15, &fault));
  }
  const auto answers =
      CheckAgainstOracle(requests, absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed));
  Coverage c;
  for (const auto& a : answers) Count(a, &c);
  std::cout << "seed " << seed << ": " << count << " requests, " << c.refused
            << " refused; options shown by placement rank: " << c.placements[0]
            << " " << c.placements[1] << " " << c.placements[2] << " "
            << c.placements[3] << " " << c.placements[4]
            << "; by source: " << c.sources[0] << " " << c.sources[1] << " "
            << c.sources[2] << "; fit " << c.fit << ", not " << c.not_fit
            << " (both budgets " << c.both_budgets << ")\n";
}

// `name`'s search part (bench/workloads) on 80 GiB GPUs, 1 TiB hosts of 8
// GPUs, world sizes {8, 16, 32, 64}.
v1::PlanRequest WorkloadRequest(const std::string& name) {
  std::ifstream in(absl::StrCat(CHUNKPLAN_WORKLOAD_DIR, "/", name, ".json"));
  std::stringstream text;
  text << in.rdbuf();
  v1::PlanRequest r;
  const absl::Status parsed =
      common::JsonToMessage(text.str(), r.mutable_search());
  EXPECT_TRUE(parsed.ok()) << name << ": " << parsed;
  r.mutable_search()->clear_dp_degrees();
  v1::Cluster* c = r.mutable_cluster();
  c->set_device_memory_bytes(80 * kGiB);
  c->set_host_memory_bytes(1024 * kGiB);
  c->set_gpus_per_node(8);
  for (const uint32_t w : {8, 16, 32, 64}) c->add_world_sizes(w);
  return r;
}

TEST(PlanDifferentialTest, WorkloadsMatchTheOracle) {
  const auto answers = CheckAgainstOracle(
      {WorkloadRequest("llama-2-70b"), WorkloadRequest("mixtral-8x7b")},
      "workloads");
  for (const auto& a : answers) {
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_GT(a->options_size(), 0);
  }
}

}  // namespace
}  // namespace chunkplan::testing
