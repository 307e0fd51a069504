// Plan against the Python plan oracle (tests/oracle/plan_oracle.py, written
// from docs/plan.md by brute force over the layout, placement and activation
// oracles, not from this code): fresh random requests every run and the
// LLaMA-2 70B and Mixtral workloads on the issue's cluster, each answered by
// the planner (through the service's conversions) and by a real server (its
// in-process channel), both required to equal the oracle's answer option for
// option
// (every field, the order, options_considered); a request the oracle refuses
// must be INVALID_ARGUMENT naming the same field.
//
// CHUNKPLAN_DIFF_SEED replays a run (a failure prints it),
// CHUNKPLAN_DIFF_REQUESTS sets the number of random requests (default 30),
// CHUNKPLAN_DIFF_PLAN_ORACLE names another oracle script (to check that a
// broken oracle fails this test).

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "common/json_codec.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/models/model_description.h"
#include "server/service/plan_convert.h"
#include "testing/oracle_runner.h"
#include "tests/differential/in_process_server.h"
#include "tests/differential/mismatch_report.h"
#include "tests/differential/random_models.h"
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

// The oracle's answer on one line, or its refusal: INVALID_ARGUMENT, or
// UNIMPLEMENTED where it says so ("code"). Errors: INTERNAL when the line is
// neither.
absl::StatusOr<absl::StatusOr<v1::PlanResponse>> ParsePlanAnswer(
    const std::string& line) {
  v1::PlanResponse response;
  if (common::JsonToMessage(line, &response).ok()) return response;
  google::protobuf::Struct error;
  if (common::JsonToMessage(line, &error).ok() &&
      error.fields().contains("error")) {
    const std::string& message = error.fields().at("error").string_value();
    if (error.fields().contains("code") &&
        error.fields().at("code").string_value() == "UNIMPLEMENTED") {
      return absl::StatusOr<v1::PlanResponse>(
          absl::UnimplementedError(message));
    }
    return absl::StatusOr<v1::PlanResponse>(
        absl::InvalidArgumentError(message));
  }
  return absl::InternalError(absl::StrCat(
      "the plan oracle answered neither a PlanResponse nor an error: ", line));
}

// The planner's answer to `request` in wire form, through the service's
// conversions and checks (as the server runs them, without gRPC).
absl::StatusOr<v1::PlanResponse> PlannerPlan(const planner::Planner& planner,
                                             const v1::PlanRequest& request) {
  absl::StatusOr<planner::PlanRequest> plain =
      service::FromProtoInOrder(request);
  if (!plain.ok()) return plain.status();
  absl::StatusOr<planner::PlanResult> result = planner.Plan(*plain);
  if (!result.ok()) return result.status();
  v1::PlanResponse out =
      service::ToProto(*result, request.gemini().precision());
  out.clear_plan_nanos();
  return out;
}

// The server's answer (plan_nanos left out, as the oracle's).
absl::StatusOr<v1::PlanResponse> ServerPlan(InProcessServer& server,
                                            const v1::PlanRequest& request) {
  absl::StatusOr<v1::PlanResponse> out =
      server.Call(request, &v1::ChunkSearch::Stub::Plan);
  if (out.ok()) out->clear_plan_nanos();
  return out;
}

// "" when `actual` is what the oracle said; else what differs.
std::string Diff(absl::string_view who,
                 const absl::StatusOr<v1::PlanResponse>& expected,
                 const absl::StatusOr<v1::PlanResponse>& actual) {
  if (!expected.ok() &&
      expected.status().code() == absl::StatusCode::kUnimplemented) {
    // A family's layer not estimated: the same code and reason.
    if (actual.status() == expected.status()) return "";
    return absl::StrCat(who, ": ", actual.status().ToString(),
                        "\n  the oracle: ", expected.status().ToString(), "\n");
  }
  if (!expected.ok()) {
    return RefusalDiff(who, expected.status().message(), actual.status());
  }
  if (!actual.ok()) {
    return absl::StrCat(who, ": ", actual.status().ToString(), "\n");
  }
  v1::PlanResponse got = *actual;
  SetAsideModelReport(got);
  std::string report;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&report);
  if (differ.Compare(*expected, got)) return "";
  return absl::StrCat(who, " differs from the oracle (expected -> actual):\n",
                      Clip(report, 6000));
}

// How much of each corner a run reached.
struct Coverage {
  int placements[5] = {};
  int sources[3] = {};
  int refused = 0, fit = 0, tight = 0, not_fit = 0, both_budgets = 0;
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
    ++(o.fits() ? c->fit : o.verdict().tight() ? c->tight : c->not_fit);
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
  InProcessServer server;
  MismatchReport report(context, PlanOracle());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string diff;
    absl::StatusOr<absl::StatusOr<v1::PlanResponse>> expected =
        ParsePlanAnswer((*oracle)[i]);
    if (!expected.ok()) {
      diff = absl::StrCat(expected.status().message(), "\n");
    } else {
      diff = absl::StrCat(
          Diff("planner", *expected, PlannerPlan(planner, requests[i])),
          Diff("server", *expected, ServerPlan(server, requests[i])));
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
            << c.sources[2] << "; fit " << c.fit << ", tight " << c.tight
            << ", not " << c.not_fit << " (both budgets " << c.both_budgets
            << ")\n";
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

// A Plan of the model `config` describes, searched at `interval` around the
// smallest chunks (search_range_m 0.001, min_chunk_size_m 0).
v1::PlanRequest ModelPlanRequest(const std::string& config, uint64_t interval) {
  v1::PlanRequest r;
  v1::ChunkSearchRequest* search = r.mutable_search();
  search->mutable_model()->set_hf_config_json(config);
  search->set_search_range_m(0.001);
  search->set_search_interval(interval);
  search->set_min_chunk_size_m(0);
  return r;
}

// Plans of random small models (tests/differential/random_models.h): the
// gathered chunks follow each family's operations under every placement,
// max_prefetch and gradient chunks of their own included, a quarter with tp
// searched (half of those with sequence parallelism); the device
// memory from 4 to 24 bytes per parameter element, so that each placement
// class is reached.
TEST(PlanDifferentialTest, ModelsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  std::mt19937_64 rng(seed);
  const auto uniform = [&](uint64_t low, uint64_t high) {
    return std::uniform_int_distribution<uint64_t>(low, high)(rng);
  };
  std::vector<v1::PlanRequest> requests;
  while (requests.size() < 40) {
    const std::string config = RandomModelConfig(rng);
    const absl::StatusOr<models::ModelDescription> d =
        models::DescribeModel(config, "", 1'000'000);
    if (!d.ok()) continue;
    v1::PlanRequest r = ModelPlanRequest(config, uniform(1, 16));
    v1::GeminiSettings* g = r.mutable_gemini();
    g->set_master_weights(uniform(0, 4) != 0);
    g->set_gradient_accumulation(uniform(0, 4) == 0);
    g->set_max_prefetch(uniform(0, 1) * uniform(1, 3));
    // tp searched, with or without sequence parallelism (the degrees and
    // meshes the family's policy cannot run skipped, as the oracle's).
    if (uniform(0, 3) == 0) {
      r.set_search_tp(true);
      g->set_enable_sequence_parallelism(uniform(0, 1) == 1);
    }
    v1::Cluster* c = r.mutable_cluster();
    c->set_device_memory_bytes(d->total * uniform(4, 24) + 64);
    c->set_gpus_per_node(8);
    for (const uint32_t w : {1, 2, 4}) {
      if (uniform(0, 1) == 1 || w == 4) c->add_world_sizes(w);
    }
    requests.push_back(std::move(r));
  }
  const auto answers =
      CheckAgainstOracle(requests, absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed));
  int several = 0;
  for (const auto& a : answers) {
    if (!a.ok()) continue;
    for (const v1::PlanOption& o : a->options()) {
      several += o.gathered_chunks() >= 2;
    }
  }
  std::cout << "seed " << seed << ": options holding two chunks or more "
            << several << "\n";
  EXPECT_GT(several, 0);
}

// Falcon and BLOOM configs with a workload: the activation estimate from
// the C++ family's traits (server/models/falcon_traits.cc, bloom.cc) equal
// to the oracle's from its own (tests/oracle/decoder_traits.py), every
// attention (BLOOM's sdpa and flash_attention_2 refused by both), the
// layouts, dropout and activations at random (some not modelled: refused
// by both with the same reason).
TEST(PlanDifferentialTest, FalconAndBloomWorkloadsMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  std::mt19937_64 rng(seed);
  const auto uniform = [&](uint64_t low, uint64_t high) {
    return std::uniform_int_distribution<uint64_t>(low, high)(rng);
  };
  const auto flag = [&] { return uniform(0, 1) == 1 ? "true" : "false"; };
  const auto probability = [&] { return uniform(0, 1) == 1 ? "0.1" : "0.0"; };
  std::vector<v1::PlanRequest> requests;
  for (int i = 0; i < 40; ++i) {
    const uint64_t heads = uniform(1, 4);
    const uint64_t hidden = heads * 2 * uniform(1, 4);
    std::string config;
    if (i % 2 == 0) {
      const bool new_arch = uniform(0, 2) == 0;
      const char* acts[] = {"gelu", "relu", "gelu_new", "tanh"};
      config = absl::StrCat(
          R"({"model_type": "falcon", "num_attention_heads": )", heads,
          R"(, "hidden_size": )", hidden, R"(, "num_hidden_layers": )",
          uniform(1, 3), R"(, "vocab_size": )", uniform(8, 300),
          R"(, "new_decoder_architecture": )", new_arch ? "true" : "false",
          R"(, "num_kv_heads": )",
          new_arch             ? heads
          : uniform(0, 3) == 0 ? 1
                               : heads,
          R"(, "multi_query": )", flag(), R"(, "parallel_attn": )",
          new_arch || uniform(0, 3) != 0 ? "true" : "false", R"(, "bias": )",
          flag(), R"(, "alibi": )", uniform(0, 5) == 0 ? "true" : "false",
          R"(, "activation": ")", acts[uniform(0, 3)],
          R"(", "hidden_dropout": )", probability(),
          R"(, "attention_dropout": )", probability(),
          R"(, "tie_word_embeddings": )", flag(), "}");
    } else {
      config = absl::StrCat(
          R"({"model_type": "bloom", "n_head": )", heads,
          R"(, "hidden_size": )", hidden, R"(, "n_layer": )", uniform(1, 3),
          R"(, "vocab_size": )", uniform(8, 300), R"(, "hidden_dropout": )",
          probability(), R"(, "attention_dropout": )", probability(),
          R"(, "tie_word_embeddings": )", flag(), "}");
    }
    const absl::StatusOr<models::ModelDescription> d =
        models::DescribeModel(config, "", 1'000'000);
    if (!d.ok()) continue;
    v1::PlanRequest r = ModelPlanRequest(config, uniform(1, 16));
    v1::Cluster* c = r.mutable_cluster();
    c->set_device_memory_bytes(d->total * 24 + (uint64_t{1} << 20));
    c->set_gpus_per_node(8);
    c->add_world_sizes(uniform(1, 4));
    v1::Workload* w = r.mutable_workload();
    w->set_micro_batch(uniform(1, 4));
    w->set_sequence_length(uniform(1, 64));
    w->set_activation_checkpointing(uniform(0, 1) == 1);
    w->set_attention(static_cast<v1::Attention>(uniform(0, 3)));
    requests.push_back(std::move(r));
  }
  const auto answers =
      CheckAgainstOracle(requests, absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed));
  int estimated = 0;
  for (const auto& a : answers) estimated += a.ok();
  std::cout << "seed " << seed << ": " << estimated << " of " << requests.size()
            << " estimated\n";
  EXPECT_GT(estimated, 0);
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

// LLaMA-2 70B by its config on 8 x 80 GiB GPUs (1 TiB hosts), tp searched
// (1, 2, 4, 8), up to 200 options.
v1::PlanRequest Llama70bTpSearched() {
  std::ifstream in(
      absl::StrCat(CHUNKPLAN_WORKLOAD_DIR,
                   "/../../tests/oracle/models/data/llama-2-70b.json"));
  std::stringstream text;
  text << in.rdbuf();
  v1::PlanRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(text.str());
  r.mutable_search()->set_search_range_m(32);
  r.set_search_tp(true);
  r.set_max_options(200);
  v1::Cluster* c = r.mutable_cluster();
  c->set_device_memory_bytes(80 * kGiB);
  c->set_host_memory_bytes(1024 * kGiB);
  c->set_gpus_per_node(8);
  c->add_world_sizes(8);
  return r;
}

// Llama70bTpSearched with extra_dp 1 and 2: every mesh's options equal the
// oracle's (its tp shards from tests/oracle/tp_oracle.py); a tp option is
// among them.
TEST(PlanDifferentialTest, TensorParallelMeshesMatchTheOracle) {
  v1::PlanRequest r = Llama70bTpSearched();
  r.add_extra_dp_sizes(1);
  r.add_extra_dp_sizes(2);
  v1::PlanRequest refused = r;  // kv heads 8 < tp 16 (LLaMA's assert)
  refused.set_search_tp(false);
  refused.add_tp_sizes(16);
  const auto answers = CheckAgainstOracle({r, refused}, "tp meshes");
  ASSERT_TRUE(answers[0].ok()) << answers[0].status();
  bool tp_option = false;
  for (const v1::PlanOption& o : answers[0]->options()) {
    tp_option = tp_option || o.gemini().tp_size() > 1;
  }
  EXPECT_TRUE(tp_option);
  EXPECT_FALSE(answers[1].ok());
}

// An untied OPT (tie_word_embeddings false, a 32-wide embedding projected
// to hidden 64): OPT's policy binds lm_head.weight to embed_tokens.weight
// at tp > 1 (ColossalAI policies/opt.py:433-444), so tp 1 lays out the
// head's own weight and tp 2, 4 and 8 do not, each degree's gathered chunks
// over its own operations, with a workload whose transient is the tied
// embedding's backward at tp > 1 (a large vocabulary, 8 tokens: the
// untied estimate's is smaller), though the shape comes from tp 1's
// description; then tp 2 and 4 named with frozen flags over their 38
// parameters. Every option equal to the oracle's (tp_oracle.py's binds,
// tp_activation_oracle.py's ties_head).
TEST(PlanDifferentialTest, TensorParallelUntiedOptMatchesTheOracle) {
  v1::PlanRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(R"({
    "architectures": ["OPTForCausalLM"], "model_type": "opt",
    "hidden_size": 64, "ffn_dim": 128, "num_hidden_layers": 2,
    "num_attention_heads": 8, "word_embed_proj_dim": 32,
    "vocab_size": 50272, "tie_word_embeddings": false})");
  r.mutable_search()->set_search_range_m(0.001);
  r.mutable_search()->set_min_chunk_size_m(0);
  r.set_search_tp(true);
  r.set_max_options(200);
  v1::Cluster* c = r.mutable_cluster();
  c->set_device_memory_bytes(kGiB);
  c->set_gpus_per_node(8);
  for (const uint32_t world : {1, 2, 4, 8}) c->add_world_sizes(world);
  v1::Workload* w = r.mutable_workload();
  w->set_micro_batch(1);
  w->set_sequence_length(8);
  v1::PlanRequest frozen = r;
  frozen.clear_workload();
  frozen.set_search_tp(false);
  frozen.add_tp_sizes(2);
  frozen.add_tp_sizes(4);
  for (int i = 0; i < 38; ++i) frozen.add_frozen(i % 3 == 1);
  const auto answers = CheckAgainstOracle({r, frozen}, "untied opt");
  std::set<uint32_t> degrees;
  for (const auto& a : answers) {
    ASSERT_TRUE(a.ok()) << a.status();
    for (const v1::PlanOption& o : a->options()) {
      degrees.insert(std::max(1u, o.gemini().tp_size()));
    }
  }
  EXPECT_EQ(degrees, (std::set<uint32_t>{1, 2, 4, 8}));
}

// The same model with a workload, tp searched: each degree's options carry
// tp rank 0's activation estimate (docs/tensor-parallelism.md,
// "Activations"), equal to the oracle's (tests/oracle/
// tp_activation_oracle.py), smaller as tp grows; with sequence parallelism
// on, every tp degree is skipped (LLaMA's attention forward asserts a
// sequence group GeminiPlugin does not make): tp 1's options only.
TEST(PlanDifferentialTest, TensorParallelWorkloadsMatchTheOracle) {
  v1::PlanRequest r = Llama70bTpSearched();
  v1::Workload* w = r.mutable_workload();
  w->set_micro_batch(1);
  w->set_sequence_length(4096);
  w->set_activation_checkpointing(true);
  v1::PlanRequest sp = r;
  sp.mutable_gemini()->set_enable_sequence_parallelism(true);
  const auto answers = CheckAgainstOracle({r, sp}, "tp workloads");
  ASSERT_TRUE(answers[0].ok()) << answers[0].status();
  ASSERT_TRUE(answers[1].ok()) << answers[1].status();
  std::map<uint32_t, uint64_t> activations;  // tp -> activation_bytes
  for (const v1::PlanOption& o : answers[0]->options()) {
    activations[std::max(1u, o.gemini().tp_size())] = o.activation_bytes();
    for (const std::string& note : o.notes()) {
      EXPECT_EQ(note.find("not split by tp"), std::string::npos) << note;
    }
  }
  ASSERT_GT(activations.size(), 1u);
  for (auto it = std::next(activations.begin()); it != activations.end();
       ++it) {
    EXPECT_LT(it->second, std::prev(it)->second) << "tp " << it->first;
  }
  ASSERT_GT(answers[1]->options_size(), 0);
  for (const v1::PlanOption& o : answers[1]->options()) {
    EXPECT_LE(o.gemini().tp_size(), 1u);
  }
}

// A Plan of `config` with sequence parallelism, tp searched over extra_dp
// 1 and 2 and worlds 1 to 8 (8 GPUs a node), a 64-token workload.
v1::PlanRequest SequenceParallelPlan(const char* config) {
  v1::PlanRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(config);
  r.mutable_search()->set_search_range_m(0.001);
  r.mutable_search()->set_min_chunk_size_m(0);
  r.set_search_tp(true);
  r.add_extra_dp_sizes(1);
  r.add_extra_dp_sizes(2);
  r.set_max_options(200);
  r.mutable_gemini()->set_enable_sequence_parallelism(true);
  v1::Workload* w = r.mutable_workload();
  w->set_micro_batch(1);
  w->set_sequence_length(64);
  v1::Cluster* c = r.mutable_cluster();
  c->set_device_memory_bytes(kGiB);
  c->set_gpus_per_node(8);
  for (const uint32_t world : {1, 2, 4, 8}) c->add_world_sizes(world);
  return r;
}

// GPT-2 with sequence parallelism (docs/tensor-parallelism.md): its forward
// gathers the sequence over the whole world, so a tp degree runs only where
// the world is the tp group; the other meshes are skipped, and where none
// is left the refusal answers. Equal to the oracle's (tp_oracle.py's
// sequence_parallel_mesh), with GPT-2's sequence-parallel estimate.
TEST(PlanDifferentialTest, SequenceParallelMeshesMatchTheOracle) {
  v1::PlanRequest r = SequenceParallelPlan(R"({
    "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
    "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 1000})");
  v1::PlanRequest named = r;  // tp 4 named, at world 8 only
  named.set_search_tp(false);
  named.add_tp_sizes(4);
  named.mutable_cluster()->clear_world_sizes();
  named.mutable_cluster()->add_world_sizes(8);
  // A sequence of 6: _split asserts it a multiple of tp, so tp 4 and 8
  // are skipped where searched.
  v1::PlanRequest six = r;
  six.mutable_workload()->set_sequence_length(6);
  const auto answers = CheckAgainstOracle({r, named, six}, "sequence parallel");
  ASSERT_TRUE(answers[0].ok()) << answers[0].status();
  bool tp_option = false;
  for (const v1::PlanOption& o : answers[0]->options()) {
    if (o.gemini().tp_size() <= 1) continue;
    tp_option = true;
    EXPECT_EQ(o.world_size(), o.gemini().tp_size());
  }
  EXPECT_TRUE(tp_option);
  ASSERT_FALSE(answers[1].ok());
  EXPECT_TRUE(absl::StartsWith(answers[1].status().message(),
                               "gemini.enable_sequence_parallelism"))
      << answers[1].status();
  ASSERT_TRUE(answers[2].ok()) << answers[2].status();
  tp_option = false;
  for (const v1::PlanOption& o : answers[2]->options()) {
    EXPECT_LE(o.gemini().tp_size(), 2u);
    tp_option = tp_option || o.gemini().tp_size() == 2;
  }
  EXPECT_TRUE(tp_option);
}

// The other policies with sequence parallelism (docs/tensor-parallelism.md,
// the table), tp searched over every mesh: Command's and Mixtral's
// attention forwards assert a group GeminiPlugin does not make (tp 1's
// options only); BLOOM's forward splits and gathers over the tp group and
// OPT's, Falcon's and GPT-J's policies turn it off, so their tp options
// run on every mesh (zero x extra_dp above 1 included). Equal to the
// oracle's (tp_oracle.py).
TEST(PlanDifferentialTest, OtherPoliciesSequenceParallelMatchTheOracle) {
  const std::vector<std::pair<const char*, bool>> families = {
      {R"({"architectures": ["CohereForCausalLM"], "model_type": "cohere",
          "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 8,
          "num_key_value_heads": 8, "vocab_size": 1000})",
       false},
      {R"({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
          "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 8,
          "num_key_value_heads": 8, "vocab_size": 1000,
          "num_local_experts": 4, "num_experts_per_tok": 2})",
       false},
      {R"({"architectures": ["BloomForCausalLM"], "model_type": "bloom",
          "hidden_size": 64, "n_layer": 2, "n_head": 8,
          "vocab_size": 1000})",
       true},
      {R"({"architectures": ["OPTForCausalLM"], "model_type": "opt",
          "hidden_size": 64, "ffn_dim": 128, "num_hidden_layers": 2,
          "num_attention_heads": 8, "word_embed_proj_dim": 64,
          "vocab_size": 1000})",
       true},
      {R"({"architectures": ["FalconForCausalLM"], "model_type": "falcon",
          "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 8, "num_kv_heads": 8,
          "new_decoder_architecture": true, "vocab_size": 1000})",
       true},
      {R"({"architectures": ["GPTJForCausalLM"], "model_type": "gptj",
          "n_embd": 64, "n_layer": 2, "n_head": 8, "rotary_dim": 4,
          "vocab_size": 1000})",
       true}};
  std::vector<v1::PlanRequest> requests;
  for (const auto& family : families) {
    requests.push_back(SequenceParallelPlan(family.first));
  }
  const auto answers = CheckAgainstOracle(requests, "other policies' sp");
  for (size_t i = 0; i < families.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status();
    bool wide_tp = false;  // a tp option with zero x extra_dp above 1
    for (const v1::PlanOption& o : answers[i]->options()) {
      const uint32_t tp = std::max(1u, o.gemini().tp_size());
      if (!families[i].second) EXPECT_EQ(tp, 1u) << families[i].first;
      wide_tp = wide_tp || (tp > 1 && o.world_size() > tp);
    }
    EXPECT_EQ(wide_tp, families[i].second) << families[i].first;
  }
}

}  // namespace
}  // namespace chunkplan::testing
