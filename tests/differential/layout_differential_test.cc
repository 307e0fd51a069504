// Layout against the Python layout oracle (tests/oracle/layout_oracle.py,
// written from the rules, not from this code): thousands of fresh random
// LayoutRequests per run, the model workloads and hand-picked edges, each
// answered by the planner with both CPU engines and by the service behind a
// real gRPC server (its in-process channel), and required to equal the
// oracle's answer field for field; a request the oracle refuses must be
// INVALID_ARGUMENT on both paths, naming the same field.
//
// CHUNKPLAN_DIFF_SEED replays a run (a failure prints it),
// CHUNKPLAN_DIFF_REQUESTS sets the number of random requests (default
// 2000), CHUNKPLAN_DIFF_LAYOUT_ORACLE names another oracle script (to check
// that a broken oracle fails this test).

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/json_codec.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/planner/layout/placement.h"
#include "server/planner/request/search_plan.h"
#include "server/service/chunk_search_service.h"
#include "server/service/proto_convert.h"
#include "testing/oracle_runner.h"
#include "tests/differential/in_process_server.h"
#include "tests/differential/mismatch_report.h"
#include "tests/differential/random_layouts.h"
#include "tests/differential/random_placements.h"

#ifndef CHUNKPLAN_WORKLOAD_DIR
#error "CHUNKPLAN_WORKLOAD_DIR must name bench/workloads (the build sets it)"
#endif

namespace chunkplan::testing {
namespace {

constexpr int kDefaultRequests = 2000;

// The planner's answer with `engine` forced on the search part.
absl::StatusOr<v1::LayoutResponse> PlannerLayout(
    const planner::Planner& planner, v1::LayoutRequest request,
    v1::Engine engine) {
  request.mutable_search()->set_engine(engine);
  absl::StatusOr<planner::LayoutRequest> plain = service::FromProto(request);
  if (!plain.ok()) return plain.status();
  absl::StatusOr<planner::LayoutResult> result = planner.Layout(*plain);
  if (!result.ok()) return result.status();
  return service::ToProto(*result);
}

// Whether the planner refuses `request` on `engine` by design: the peak
// objective under a placement that moves chunks by their size is
// CPU_SWEEP's alone (AUTO picks it; planner/engines/engine_choice.h).
bool RefusedOn(const v1::LayoutRequest& request, v1::Engine engine) {
  if (engine != v1::ENGINE_CPU_PLATEAU && engine != v1::ENGINE_CUDA) {
    return false;
  }
  const absl::StatusOr<planner::LayoutRequest> plain =
      service::FromProto(request);
  return plain.ok() && plain->objective == planner::Objective::kPeakRankBytes &&
         planner::CheckPlacement(plain->gemini).ok() &&
         planner::MovesBySize(plain->gemini);
}

// "" when `actual` is the refusal RefusedOn promises; else what it is.
std::string DiffRefused(absl::string_view who, const absl::Status& actual) {
  if (actual.code() == absl::StatusCode::kInvalidArgument &&
      absl::StartsWith(actual.message(), "search.engine: ")) {
    return "";
  }
  return absl::StrCat(who, ": ", actual.ToString(),
                      "\n  expected INVALID_ARGUMENT naming search.engine\n");
}

// The server's Layout and Frontier (in_process_server.h).
class LayoutServer {
 public:
  absl::StatusOr<v1::FrontierResponse> Frontier(
      const v1::LayoutRequest& request) {
    return server_.Call(request, &v1::ChunkSearch::Stub::Frontier);
  }

  absl::StatusOr<v1::LayoutResponse> Layout(const v1::LayoutRequest& request) {
    return server_.Call(request, &v1::ChunkSearch::Stub::Layout);
  }

 private:
  InProcessServer server_;
};

// Checks every request against the oracle through the planner (both CPU
// engines) and the server. Returns the oracle's answers; records a failure
// per mismatch (the first MismatchReport::kMaxPrinted in full) and writes the
// failing requests to `replay_path` when it is not empty.
std::vector<absl::StatusOr<v1::LayoutResponse>> CheckAgainstOracle(
    const std::vector<v1::LayoutRequest>& requests, const std::string& context,
    const std::string& replay_path,
    const std::vector<v1::Engine>& engines = {v1::ENGINE_CPU_SWEEP,
                                              v1::ENGINE_CPU_PLATEAU}) {
  std::vector<std::string> lines;
  lines.reserve(requests.size());
  for (const auto& r : requests) lines.push_back(common::MessageToJson(r));
  std::vector<absl::StatusOr<v1::LayoutResponse>> answers(
      requests.size(), absl::UnknownError("not asked"));
  const absl::StatusOr<std::vector<std::string>> oracle =
      RunOracleJsonl(LayoutOracle(), lines);
  if (!oracle.ok()) {
    ADD_FAILURE() << context << ": " << oracle.status();
    return answers;
  }

  const planner::Planner planner;
  LayoutServer server;
  MismatchReport report(context, LayoutOracle());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string diff;
    absl::StatusOr<absl::StatusOr<v1::LayoutResponse>> expected =
        ParseLayoutAnswer((*oracle)[i]);
    if (!expected.ok()) {
      diff = absl::StrCat(expected.status().message(), "\n");
    } else {
      for (const v1::Engine engine : engines) {
        const std::string who =
            absl::StrCat("planner ", v1::Engine_Name(engine));
        const absl::StatusOr<v1::LayoutResponse> got =
            PlannerLayout(planner, requests[i], engine);
        absl::StrAppend(&diff, expected->ok() && RefusedOn(requests[i], engine)
                                   ? DiffRefused(who, got.status())
                                   : LayoutDiff(who, *expected, got));
      }
      absl::StrAppend(
          &diff, LayoutDiff("server", *expected, server.Layout(requests[i])));
      answers[i] = *std::move(expected);
    }
    report.Add(i, lines[i], diff);
  }
  report.Finish(replay_path);
  return answers;
}

// How much of each corner a run reached.
struct Coverage {
  int faults[kNumLayoutFaults] = {};
  int given = 0, searched = 0;
  int oversize_chunk = 0;       // a chunk larger than its group's chunk size
  int oversize_with_slack = 0;  // ... that later tensors joined
  int zero_size_chunk = 0;      // a chunk whose tensors are all of size 0
  int empty_group = 0;          // a group with every parameter frozen
  int kept_gathered = 0, some_frozen = 0, several_degrees = 0;
  int no_master = 0, accumulation = 0, no_pinning = 0, no_optimizer = 0;
  int rank_differs = 0;  // most and least loaded ranks differ
};

void Count(const GeneratedLayout& g,
           const absl::StatusOr<v1::LayoutResponse>& answer, Coverage* c) {
  ++c->faults[static_cast<int>(g.fault)];
  if (!answer.ok()) return;
  const v1::LayoutRequest& r = g.request;
  ++(r.configs_size() > 0 ? c->given : c->searched);
  bool oversize = false, slack = false, zero = false, empty = false,
       gathered = false;
  for (const v1::GroupLayout& group : answer->groups()) {
    empty |= group.chunks_size() == 0;
    gathered |= group.keep_gathered();
    for (const v1::ChunkLayout& chunk : group.chunks()) {
      if (chunk.size() > group.chunk_size()) {
        oversize = true;
        slack |= chunk.num_params() > 1;
      }
      zero |= chunk.used() == 0;
    }
  }
  c->oversize_chunk += oversize;
  c->oversize_with_slack += slack;
  c->zero_size_chunk += zero;
  c->empty_group += empty;
  c->kept_gathered += gathered;
  c->several_degrees += answer->groups_size() > 1;
  c->some_frozen += std::count(r.frozen().begin(), r.frozen().end(), true) > 0;
  const v1::GeminiSettings& s = r.gemini();
  c->no_master += s.has_master_weights() && !s.master_weights();
  c->accumulation += s.gradient_accumulation();
  c->no_pinning += s.has_pin_memory() && !s.pin_memory();
  c->no_optimizer += s.optimizer() == v1::OPTIMIZER_NONE;
  c->rank_differs += !google::protobuf::util::MessageDifferencer::Equals(
      answer->most_loaded_rank(), answer->least_loaded_rank());
}

TEST(LayoutDifferentialTest, RandomRequestsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  const int count =
      static_cast<int>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", kDefaultRequests));
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << " (" << count
            << " requests)\n";
  ::testing::Test::RecordProperty("chunkplan_diff_seed", std::to_string(seed));

  LayoutGenerator generator(seed);
  std::vector<GeneratedLayout> generated;
  std::vector<v1::LayoutRequest> requests;
  for (int i = 0; i < count; ++i) {
    // Every fault once first, whatever the draws.
    generated.push_back(generator.Next(i < kNumLayoutFaults
                                           ? static_cast<LayoutFault>(i)
                                           : LayoutFault::kNone));
    requests.push_back(generated.back().request);
  }
  const std::string context = absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed);
  const std::string replay =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("chunkplan_layout_failures_", seed, ".jsonl"))
          .string();
  const auto answers = CheckAgainstOracle(requests, context, replay);

  Coverage c;
  for (int i = 0; i < count; ++i) Count(generated[i], answers[i], &c);
  std::cout << "coverage: given=" << c.given << " searched=" << c.searched
            << " oversize=" << c.oversize_chunk << " (with slack used "
            << c.oversize_with_slack << ")"
            << " zero-size chunk=" << c.zero_size_chunk
            << " all-frozen group=" << c.empty_group
            << "\n  kept gathered=" << c.kept_gathered
            << " some frozen=" << c.some_frozen
            << " several degrees=" << c.several_degrees
            << " no master=" << c.no_master
            << " accumulation=" << c.accumulation
            << " no pinning=" << c.no_pinning
            << " no optimizer=" << c.no_optimizer
            << " ranks differ=" << c.rank_differs << "\n  faults:";
  for (int f = 0; f < kNumLayoutFaults; ++f) {
    std::cout << " " << LayoutFaultName(static_cast<LayoutFault>(f)) << "="
              << c.faults[f];
  }
  std::cout << "\n";
  // Each corner in a meaningful share of a full-size run, so that the
  // generator cannot silently stop reaching one (a smaller run, as the
  // sanitized pass makes, is checked request by request only).
  if (count < kDefaultRequests) return;
  const int need = std::max(1, count / 200);
  for (int f = 0; f < kNumLayoutFaults; ++f) EXPECT_GE(c.faults[f], 1);
  EXPECT_GE(c.given, need);
  EXPECT_GE(c.searched, need);
  EXPECT_GE(c.oversize_chunk, need);
  EXPECT_GE(c.oversize_with_slack, need);
  EXPECT_GE(c.zero_size_chunk, need);
  EXPECT_GE(c.empty_group, need);
  EXPECT_GE(c.kept_gathered, need);
  EXPECT_GE(c.some_frozen, need);
  EXPECT_GE(c.several_degrees, need);
  EXPECT_GE(c.no_master, need);
  EXPECT_GE(c.accumulation, need);
  EXPECT_GE(c.no_pinning, need);
  EXPECT_GE(c.no_optimizer, need);
  EXPECT_GE(c.rank_differs, need);
}

// Issue 41: Layout with a cluster carries the verdict. Random placements
// (every policy, so that the two chunk orders' host bytes differ) and random
// layouts, each with a cluster around its own need: device memory from 0.8
// to 1.3 times the most loaded rank's device bytes plus the gathered chunk
// (read off the planner's answer without a cluster: an input, not an
// expectation), a reserve, a margin unset, 0 or up to 0.3, a host memory
// around the node's host bytes or none; one in ten with a cluster the
// checks refuse. The verdict (and everything else) equal to the oracle's.
TEST(LayoutDifferentialTest, ClustersMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  const int count = static_cast<int>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", 150));
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << " (" << count
            << " requests)\n";
  std::mt19937_64 rng(seed ^ 0x41);
  const auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  PlacementGenerator placements(seed);
  LayoutGenerator layouts(seed ^ 0x17);
  const planner::Planner planner;
  std::vector<v1::LayoutRequest> requests;
  while (static_cast<int>(requests.size()) < count) {
    v1::LayoutRequest r = requests.size() % 2 == 0 ? placements.Next().request
                                                   : layouts.Next().request;
    const absl::StatusOr<v1::LayoutResponse> plain =
        PlannerLayout(planner, r, v1::ENGINE_CPU_SWEEP);
    if (!plain.ok()) continue;  // a fault of the generator's own
    const uint64_t need = plain->most_loaded_rank().device_bytes() +
                          plain->gathered_chunk_bytes();
    const uint64_t host =
        std::max(plain->most_loaded_rank().host_bytes(),
                 plain->most_loaded_rank_least().host_bytes());
    v1::Cluster* c = r.mutable_cluster();
    c->set_reserve_bytes(uniform(0, 1) ? uniform(0, need / 8 + 1) : 0);
    const uint64_t base = need + c->reserve_bytes();
    c->set_device_memory_bytes(
        std::max<uint64_t>(1, base / 10 * uniform(8, 13) + uniform(0, 9)));
    switch (uniform(0, 3)) {
      case 0:
        break;  // unset: 5%
      case 1:
        c->set_margin(0.0);
        break;
      default:
        c->set_margin(static_cast<double>(uniform(0, 300)) / 1000);
    }
    if (uniform(0, 2) > 0) {
      c->set_gpus_per_node(static_cast<uint32_t>(uniform(1, 8)));
      if (uniform(0, 1)) {
        c->set_host_memory_bytes(host * uniform(1, 8) / 2 + uniform(0, 9));
      }
      // GeminiPlugin's mesh: a node holds min(gpus_per_node, zero x
      // extra_dp x tp) ranks, the dp degrees being the zero group's.
      if (uniform(0, 2) == 0) {
        r.mutable_gemini()->set_tp_size(static_cast<uint32_t>(uniform(0, 4)));
        r.mutable_gemini()->set_extra_dp_size(
            static_cast<uint32_t>(uniform(0, 3)));
      }
    }
    if (uniform(0, 9) == 0) {
      switch (uniform(0, 3)) {
        case 0:
          c->set_device_memory_bytes(0);
          break;
        case 1:
          c->add_world_sizes(2);
          break;
        case 2:
          c->set_margin(1.0);
          break;
        default:
          c->set_gpus_per_node(0);
          c->set_host_memory_bytes(1);
      }
    }
    requests.push_back(std::move(r));
  }
  const auto answers = CheckAgainstOracle(
      requests, absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed, " (clusters)"), "");
  int fits = 0, tight = 0, not_fit = 0, host_checked = 0, refused = 0;
  for (const auto& a : answers) {
    if (!a.ok()) {
      ++refused;
      continue;
    }
    ASSERT_TRUE(a->has_verdict());
    const v1::Verdict& v = a->verdict();
    ++(v.fits() ? fits : v.tight() ? tight : not_fit);
    host_checked += v.host_memory_bytes() != 0;
  }
  std::cout << "verdicts: fits " << fits << ", tight " << tight << ", not "
            << not_fit << " (host checked " << host_checked << "), refused "
            << refused << "\n";
  if (count < 150) return;
  EXPECT_GT(fits, 0);
  EXPECT_GT(tight, 0);
  EXPECT_GT(not_fit, 0);
  EXPECT_GT(refused, 0);
}

// What a placement run reached.
struct PlacementCoverage {
  int kinds[kNumPlacementCases] = {};
  int refused = 0, thresholds = 0;
  int order_matters = 0;  // most_loaded_rank != most_loaded_rank_least
  int counts_differ = 0;  // offloaded_chunks < offloaded_chunks_max
  int partial = 0;        // some but not every chunk offloaded
  int gathered_at_run = 0, param_offloaded = 0, zeroed = 0;
  int warm_up_moves = 0, warm_up_fits = 0;
};

void CountPlacement(const GeneratedPlacement& g,
                    const absl::StatusOr<v1::LayoutResponse>& answer,
                    PlacementCoverage* c) {
  ++c->kinds[static_cast<int>(g.kind)];
  if (!answer.ok()) {
    ++c->refused;
    return;
  }
  c->thresholds += g.threshold;
  const v1::PlacementOutcome& p = answer->placement();
  c->order_matters += !google::protobuf::util::MessageDifferencer::Equals(
      answer->most_loaded_rank(), answer->most_loaded_rank_least());
  c->counts_differ += p.offloaded_chunks() < p.offloaded_chunks_max();
  c->partial +=
      p.offloaded_chunks() > 0 && p.effective_offload_optim_frac() < 1.0;
  c->gathered_at_run += p.gathered_at_run_time() > 0;
  c->param_offloaded += p.param_offloaded_chunks() > 0;
  for (const std::string& note : p.notes()) {
    c->zeroed += absl::StrContains(note, "is ignored");
    c->warm_up_moves += absl::StrContains(note, "will be moved");
    c->warm_up_fits += absl::StrContains(note, "no chunk is moved");
  }
}

// Issue 27: every placement policy and setting on fresh random small
// models, each through the planner and the server, equal to the oracle.
TEST(LayoutDifferentialTest, PlacementsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  const int count =
      static_cast<int>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", kDefaultRequests));
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << " (" << count
            << " requests)\n";
  PlacementGenerator generator(seed);
  std::vector<GeneratedPlacement> generated;
  std::vector<v1::LayoutRequest> requests;
  for (int i = 0; i < count; ++i) {
    generated.push_back(generator.Next());
    requests.push_back(generated.back().request);
  }
  const std::string context =
      absl::StrCat("placements CHUNKPLAN_DIFF_SEED=", seed);
  const std::string replay =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("chunkplan_placement_failures_", seed, ".jsonl"))
          .string();
  const auto answers =
      CheckAgainstOracle(requests, context, replay, {v1::ENGINE_CPU_SWEEP});
  PlacementCoverage c;
  for (int i = 0; i < count; ++i) CountPlacement(generated[i], answers[i], &c);
  std::cout << "coverage: refused=" << c.refused
            << " thresholds=" << c.thresholds
            << " order matters=" << c.order_matters
            << " counts differ=" << c.counts_differ << " partial=" << c.partial
            << " gathered at run time=" << c.gathered_at_run
            << " param offloaded=" << c.param_offloaded
            << " zeroed=" << c.zeroed << " warm-up moves=" << c.warm_up_moves
            << " fits=" << c.warm_up_fits << "\n";
  if (count < kDefaultRequests) return;  // coverage: full-size runs only
  const int need = std::max(1, count / 200);
  for (int k = 0; k < kNumPlacementCases; ++k) EXPECT_GE(c.kinds[k], need);
  EXPECT_GE(c.refused, need);
  EXPECT_GE(c.thresholds, need);
  EXPECT_GE(c.order_matters, need);
  EXPECT_GE(c.counts_differ, need);
  EXPECT_GE(c.partial, need);
  EXPECT_GE(c.gathered_at_run, need);
  EXPECT_GE(c.param_offloaded, need);
  EXPECT_GE(c.zeroed, need);
  EXPECT_GE(c.warm_up_moves, need);
  EXPECT_GE(c.warm_up_fits, need);
}

// Every model workload (bench/workloads; not the stress sweep, too long for
// the Python oracle) at GeminiPlugin's defaults: searched, with a third of
// the parameters frozen, and with given configs.
// The search part of every model workload (bench/workloads), by file name;
// not the stress sweep, too long for the Python oracle.
std::vector<std::pair<std::string, v1::ChunkSearchRequest>> WorkloadSearches() {
  std::vector<std::pair<std::string, v1::ChunkSearchRequest>> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(CHUNKPLAN_WORKLOAD_DIR)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json" || name.rfind("stress", 0) == 0) {
      continue;
    }
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    v1::ChunkSearchRequest search;
    EXPECT_TRUE(common::JsonToMessage(text.str(), &search).ok()) << name;
    out.emplace_back(name, search);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

TEST(LayoutDifferentialTest, WorkloadsMatchTheOracle) {
  std::vector<v1::LayoutRequest> requests;
  for (const auto& [name, search] : WorkloadSearches()) {
    v1::LayoutRequest request;
    *request.mutable_search() = search;
    requests.push_back(request);
    for (int i = 0; i < request.search().numels_size(); ++i) {
      request.add_frozen(i % 3 == 0);
    }
    request.mutable_gemini()->set_master_weights(false);
    requests.push_back(request);
    request.clear_frozen();
    request.clear_gemini();
    // One config per degree at 64 Mi elements (a multiple of every degree
    // here), the first degree kept gathered.
    std::vector<uint32_t> degrees(request.search().dp_degrees().begin(),
                                  request.search().dp_degrees().end());
    if (degrees.empty()) degrees.assign(1, 1);
    std::vector<uint32_t> seen;
    for (uint32_t d : degrees) {
      if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
      v1::ChunkConfig* c = request.add_configs();
      c->set_dp_degree(d);
      c->set_chunk_size(uint64_t{64} << 20);
      c->set_keep_gathered(seen.empty() && degrees.size() > 1);
      seen.push_back(d);
    }
    requests.push_back(request);
  }
  ASSERT_GE(requests.size(), 24u);
  const auto answers = CheckAgainstOracle(requests, "workloads", "");
  for (const auto& answer : answers)
    EXPECT_TRUE(answer.ok()) << answer.status();
}

// The placement settings the workload tests try, by number: 0 partial
// optimizer offload (0.1), 1 full optimizer offload, 2 and 3
// shard_param_frac 0.5 and 0.9, 4 and 5 offload_param_frac 0.5 and 0.9
// (both others at 1), 6 auto with an 80 GiB device.
constexpr int kWorkloadPlacements = 7;
void SetWorkloadPlacement(int setting, v1::GeminiSettings* g) {
  switch (setting) {
    case 0:
      g->set_offload_optim_frac(0.1);
      break;
    case 1:
      g->set_offload_optim_frac(1.0);
      break;
    case 2:
    case 3:
      g->set_shard_param_frac(setting == 2 ? 0.5 : 0.9);
      break;
    case 4:
    case 5:
      g->set_offload_optim_frac(1.0);
      g->set_offload_param_frac(setting == 4 ? 0.5 : 0.9);
      break;
    default:
      g->set_placement(v1::PLACEMENT_AUTO);
      g->set_device_memory_bytes(uint64_t{80} << 30);
      break;
  }
}

// Issue 27 on the model workloads: the search's pick at GeminiPlugin's
// defaults (the planner's Search chooses the configs, an input here; the
// oracle lays them out itself) under partial optimizer offload (0.1:
// docs/placement.md's rows), full optimizer offload, shard_param_frac 0.5,
// offload_param_frac 0.5 with both others at 1, and auto with an 80 GiB
// device. The search part is sent with search_range_m 0: beside given
// configs it is only checked, and the oracle's check of a full grid costs
// seconds a request.
TEST(LayoutDifferentialTest, PlacedWorkloadsMatchTheOracle) {
  const planner::Planner planner;
  std::vector<v1::LayoutRequest> requests;
  for (const auto& [name, search] : WorkloadSearches()) {
    const absl::StatusOr<planner::SearchRequest> plain =
        service::FromProto(search);
    ASSERT_TRUE(plain.ok()) << name << ": " << plain.status();
    const absl::StatusOr<planner::SearchResult> pick = planner.Search(*plain);
    ASSERT_TRUE(pick.ok()) << name << ": " << pick.status();
    v1::LayoutRequest request;
    *request.mutable_search() = search;
    request.mutable_search()->set_search_range_m(0);
    for (const planner::ChunkConfig& c : pick->configs) {
      v1::ChunkConfig* config = request.add_configs();
      config->set_dp_degree(c.dp_degree);
      config->set_chunk_size(c.chunk_size);
      config->set_keep_gathered(c.keep_gathered);
    }
    // The 0.5 variants, auto and partial offload.
    for (const int setting : {0, 1, 2, 4, 6}) {
      v1::LayoutRequest r = request;
      SetWorkloadPlacement(setting, r.mutable_gemini());
      requests.push_back(r);
    }
  }
  ASSERT_GE(requests.size(), 45u);
  const auto answers = CheckAgainstOracle(requests, "placed workloads", "");
  int moved = 0;
  for (const auto& answer : answers) {
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (!answer.ok()) continue;
    const v1::PlacementOutcome& p = answer->placement();
    moved += p.offloaded_chunks() > 0 || p.gathered_at_run_time() > 0 ||
             p.param_offloaded_chunks() > 0;
  }
  // Every setting moves something on every workload.
  EXPECT_EQ(moved, static_cast<int>(requests.size()));
}

// Requests picked by hand for the corners, as protobuf JSON.
TEST(LayoutDifferentialTest, HandPickedEdgesMatchTheOracle) {
  const std::vector<std::string> edges = {
      // One tensor of 0 elements opens a chunk.
      R"({"search": {"numels": ["0"], "search_interval": "1",
          "min_chunk_size_m": 0}})",
      // Oversize tensors, degree 8 and 3: rounded to each group's degree.
      R"({"search": {"numels": ["100", "7", "1", "50", "2"],
          "dp_degrees": [8, 3, 8, 3, 8], "search_interval": "1"},
          "configs": [{"dp_degree": 8, "chunk_size": "16"},
                      {"dp_degree": 3, "chunk_size": "9"}]})",
      // Every parameter frozen: no chunk at all.
      R"({"search": {"numels": ["10", "20"], "search_interval": "1",
          "min_chunk_size_m": 0}, "frozen": [true, true]})",
      // Kept gathered with a size that is no multiple of the degree.
      R"({"search": {"numels": ["10", "20", "30"], "dp_degrees": [4],
                     "search_interval": "1"},
          "configs": [{"dp_degree": 4, "chunk_size": "7",
                       "keep_gathered": true}]})",
      // Near 2^64: two groups' padding of almost 2^64 each overflows.
      R"({"search": {"numels": ["1", "1"], "dp_degrees": [1, 2],
                     "search_interval": "1"},
          "configs": [{"dp_degree": 1, "chunk_size": "18446744073709551615",
                       "keep_gathered": true},
                      {"dp_degree": 2,
                       "chunk_size": "18446744073709551614"}]})",
      // Bytes beyond 2^64 while the padding fits.
      R"({"search": {"numels": ["1", "1"], "dp_degrees": [1],
                     "search_interval": "1"},
          "configs": [{"dp_degree": 1,
                       "chunk_size": "4611686018427387904"}]})",
      // The search part is checked even with given configs.
      R"({"search": {"numels": ["1"], "search_interval": "0"},
          "configs": [{"dp_degree": 1, "chunk_size": "1"}]})",
  };
  std::vector<v1::LayoutRequest> requests;
  for (const std::string& json : edges) {
    v1::LayoutRequest request;
    ASSERT_TRUE(common::JsonToMessage(json, &request).ok()) << json;
    requests.push_back(request);
  }
  const auto answers = CheckAgainstOracle(requests, "edges", "");
  ASSERT_EQ(answers.size(), edges.size());
  EXPECT_FALSE(answers[4].ok()) << "the overflow edge must be refused";
  EXPECT_FALSE(answers[5].ok()) << "the bytes edge must be refused";
  EXPECT_FALSE(answers[6].ok()) << "the search part must be checked";
}

}  // namespace
}  // namespace chunkplan::testing

namespace chunkplan::testing {
namespace {

// Small searched requests, each with every objective: the frontier and
// Layout's pick, through the planner and the server, against the oracle's
// brute force (layout_oracle.py --frontier, and its layout()).
// Checks every request's frontier against the oracle's brute force
// (layout_oracle.py --frontier), through the planner and the server.
void CheckFrontiersAgainstOracle(const std::vector<v1::LayoutRequest>& requests,
                                 const std::string& context) {
  const planner::Planner planner;
  std::vector<std::string> lines;
  for (const auto& r : requests) lines.push_back(common::MessageToJson(r));
  OracleCommand frontier_oracle = LayoutOracle();
  frontier_oracle.flag = "--frontier";
  const absl::StatusOr<std::vector<std::string>> frontiers =
      RunOracleJsonl(frontier_oracle, lines);
  if (!frontiers.ok()) {
    ADD_FAILURE() << context << ": " << frontiers.status();
    return;
  }

  LayoutServer server;
  MismatchReport report(context, LayoutOracle());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string diff;
    v1::FrontierResponse expected;
    if (!common::JsonToMessage((*frontiers)[i], &expected).ok()) {
      diff = absl::StrCat("the oracle: ", (*frontiers)[i], "\n");
    } else {
      // The planner with both CPU engines (CPU_SWEEP visits every
      // candidate, CPU_PLATEAU walks the objective's plateaus), and the
      // server with the request as it is (AUTO).
      std::vector<std::pair<std::string, absl::StatusOr<v1::FrontierResponse>>>
          answers;
      const v1::Engine engines[] = {v1::ENGINE_CPU_SWEEP,
                                    v1::ENGINE_CPU_PLATEAU};
      for (const v1::Engine engine : engines) {
        v1::LayoutRequest with_engine = requests[i];
        with_engine.mutable_search()->set_engine(engine);
        absl::StatusOr<planner::LayoutRequest> plain =
            service::FromProto(with_engine);
        absl::StatusOr<planner::FrontierResult> got =
            plain.ok()
                ? planner.Frontier(*plain)
                : absl::StatusOr<planner::FrontierResult>(plain.status());
        answers.emplace_back(absl::StrCat("planner ", v1::Engine_Name(engine)),
                             got.ok() ? absl::StatusOr<v1::FrontierResponse>(
                                            service::ToProto(*got))
                                      : got.status());
      }
      answers.emplace_back("server", server.Frontier(requests[i]));
      for (size_t e = 0; e < answers.size(); ++e) {
        auto& [who, got] = answers[e];
        if (e < std::size(engines) && RefusedOn(requests[i], engines[e])) {
          absl::StrAppend(&diff, DiffRefused(who, got.status()));
          continue;
        }
        if (got.ok()) {
          got->clear_engine();
          got->clear_search_nanos();
          SetAsideModelReport(*got);
        }
        if (got.ok() && google::protobuf::util::MessageDifferencer::Equals(
                            *got, expected)) {
          continue;
        }
        absl::StrAppend(&diff, who, " frontier:\n  expected (oracle) ",
                        Clip(common::MessageToJson(expected), 4000),
                        "\n  actual            ",
                        got.ok() ? Clip(common::MessageToJson(*got), 4000)
                                 : got.status().ToString(),
                        "\n");
      }
    }
    report.Add(i, lines[i], diff);
  }
  report.Finish("");
}

TEST(FrontierDifferentialTest, EveryObjectiveMatchesTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << "\n";
  LayoutGenerator generator(seed);
  std::vector<v1::LayoutRequest> requests;
  while (requests.size() < 5 * 72) {
    GeneratedLayout g = generator.Next();
    if (g.fault != LayoutFault::kNone) continue;
    g.request.clear_configs();
    // Brute force in Python: keep the grid x parameters small.
    const absl::StatusOr<planner::SearchRequest> search =
        service::FromProto(g.request.search());
    if (!search.ok()) continue;
    const absl::StatusOr<planner::SearchPlan> plan =
        planner::BuildSearchPlan(*search);
    if (!plan.ok() ||
        plan->sweep.grid.count * std::max<size_t>(1, search->numels.size()) >
            30000) {
      continue;
    }
    for (const v1::Objective objective :
         {v1::OBJECTIVE_SEED_WASTE, v1::OBJECTIVE_LAYOUT_PADDING,
          v1::OBJECTIVE_PEAK_RANK_BYTES}) {
      g.request.set_objective(objective);
      requests.push_back(g.request);
    }
    // Issue 27: the peak objective where every non-gathered chunk's
    // optimizer side is on the host (auto; offload_optim_frac 1), on the
    // smaller grids only: the oracle places every candidate's chunks anew.
    if (plan->sweep.grid.count * std::max<size_t>(1, search->numels.size()) >
        3000) {
      continue;
    }
    v1::LayoutRequest offloaded = g.request;
    offloaded.mutable_gemini()->set_placement(v1::PLACEMENT_AUTO);
    requests.push_back(offloaded);
    offloaded.mutable_gemini()->set_placement(v1::PLACEMENT_STATIC);
    offloaded.mutable_gemini()->set_offload_optim_frac(1.0);
    requests.push_back(offloaded);
  }
  CheckFrontiersAgainstOracle(requests,
                              absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed));
  // Layout lays out each objective's best candidate, as the oracle does,
  // with either CPU engine.
  CheckAgainstOracle(requests, "objectives", "");
}

// Issue 27: the frontier and Layout's pick under every placement, the peak
// objective's included where the chunks a placement moves depend on the
// chunk size (each candidate laid out and placed; CPU_PLATEAU refused, AUTO
// on CPU_SWEEP), on the placement generator's small models searched on
// grids of at most 300 steps (the oracle places every candidate anew):
// CHUNKPLAN_DIFF_REQUESTS of them (default 2000, issue 27's count).
TEST(FrontierDifferentialTest, PlacementsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << "\n";
  PlacementGenerator generator(seed);
  std::mt19937_64 rng(seed);
  const auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  const size_t count =
      static_cast<size_t>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", kDefaultRequests));
  std::vector<v1::LayoutRequest> requests;
  int placed_peak = 0;
  while (requests.size() < count) {
    GeneratedPlacement g = generator.Next();
    if (g.kind == PlacementCase::kDefault || g.kind == PlacementCase::kFault) {
      continue;
    }
    v1::LayoutRequest r = g.request;
    r.clear_configs();
    v1::ChunkSearchRequest* search = r.mutable_search();
    const uint64_t numels = std::max(1, search->numels_size());
    const uint64_t interval = uniform(1, 64);
    search->set_search_interval(interval);
    search->set_search_range_m(
        static_cast<double>((uniform(1, 300 / numels) - 1) * interval) /
        (1 << 20));
    // Mostly every group swept; sometimes a small one kept gathered.
    search->set_min_chunk_size_m(
        static_cast<double>(uniform(0, 3) == 0 ? uniform(1, 1500) : 0) /
        (1 << 20));
    r.set_objective(uniform(0, 3) == 0 ? v1::OBJECTIVE_LAYOUT_PADDING
                                       : v1::OBJECTIVE_PEAK_RANK_BYTES);
    placed_peak += RefusedOn(r, v1::ENGINE_CPU_PLATEAU);
    requests.push_back(r);
  }
  std::cout << "placed peak requests: " << placed_peak << " of "
            << requests.size() << "\n";
  EXPECT_GE(placed_peak, static_cast<int>(count / 4));
  const std::string context =
      absl::StrCat("frontier placements CHUNKPLAN_DIFF_SEED=", seed);
  CheckFrontiersAgainstOracle(requests, context);
  CheckAgainstOracle(requests, context, "");
}

// The frontier of every objective and Layout's pick on the LLaMA-2 70B and
// Mixtral (experts at dp 2) workloads, GeminiPlugin's defaults otherwise
// (the oracle's brute force takes seconds on each).
TEST(FrontierDifferentialTest, WorkloadsMatchTheOracle) {
  std::vector<v1::LayoutRequest> requests;
  for (const char* name :
       {"llama-2-70b.json", "mixtral-8x7b-experts-dp2.json"}) {
    std::ifstream in(std::filesystem::path(CHUNKPLAN_WORKLOAD_DIR) / name);
    std::stringstream text;
    text << in.rdbuf();
    v1::LayoutRequest request;
    ASSERT_TRUE(
        common::JsonToMessage(text.str(), request.mutable_search()).ok())
        << name;
    for (const v1::Objective objective :
         {v1::OBJECTIVE_SEED_WASTE, v1::OBJECTIVE_LAYOUT_PADDING,
          v1::OBJECTIVE_PEAK_RANK_BYTES}) {
      request.set_objective(objective);
      requests.push_back(request);
    }
  }
  CheckFrontiersAgainstOracle(requests, "workloads");
  CheckAgainstOracle(requests, "workload objectives", "");
}

}  // namespace
}  // namespace chunkplan::testing

namespace chunkplan::testing {
namespace {

// Issue 27's frontier on every model workload (bench/workloads): the peak
// and padding objectives under partial optimizer offload (0.1), full
// optimizer offload, shard_param_frac 0.5 and 0.9, offload_param_frac 0.5
// and 0.9 with both others at 1 (the inflated total makes 0.5 keep every
// chunk whole, or move no fp16 shard, on most models; 0.9 moves some), and
// auto with an 80 GiB device, through the planner (both CPU engines) and
// the server. Each on a narrow grid at the workload's interval (16
// candidates), since the oracle lays out and places every candidate anew.
TEST(FrontierDifferentialTest, PlacedWorkloadsMatchTheOracle) {
  std::vector<v1::LayoutRequest> requests;
  for (const auto& [name, search] : WorkloadSearches()) {
    v1::LayoutRequest request;
    *request.mutable_search() = search;
    request.mutable_search()->set_search_range_m(
        static_cast<double>(15 * search.search_interval()) / (1 << 20));
    for (int setting = 0; setting < kWorkloadPlacements; ++setting) {
      v1::LayoutRequest r = request;
      SetWorkloadPlacement(setting, r.mutable_gemini());
      for (const v1::Objective objective :
           {v1::OBJECTIVE_PEAK_RANK_BYTES, v1::OBJECTIVE_LAYOUT_PADDING}) {
        r.set_objective(objective);
        requests.push_back(r);
      }
    }
  }
  ASSERT_GE(requests.size(), 2u * 9 * kWorkloadPlacements);
  CheckFrontiersAgainstOracle(requests, "placed workload frontiers");
}

}  // namespace
}  // namespace chunkplan::testing
