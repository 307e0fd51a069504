// server/service/proto_convert: chunkplan.v1 messages <-> the planner's
// values. Expected values come from the wire contract
// (proto/chunkplan/v1/chunk_search.proto: field meanings, the documented
// defaults, the enum names), not from the converter's output.
#include "server/service/proto_convert.h"

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every field of a ChunkSearchRequest set to a value no default has.
v1::ChunkSearchRequest FullSearchRequest() {
  v1::ChunkSearchRequest r;
  for (uint64_t n : {uint64_t{7}, uint64_t{0}, UINT64_MAX}) r.add_numels(n);
  for (uint32_t d : {2u, 4u, 8u}) r.add_dp_degrees(d);
  r.set_search_range_m(1.5);
  r.set_search_interval(129);
  r.set_min_chunk_size_m(0.25);
  r.set_filter_exlarge_params(false);
  r.set_engine(v1::ENGINE_CPU_SWEEP);
  return r;
}

TEST(ProtoConvert, SearchRequestCarriesEveryField) {
  const absl::StatusOr<planner::SearchRequest> got =
      FromProto(FullSearchRequest());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->numels, ElementsAre(7u, 0u, UINT64_MAX));  // unchecked
  EXPECT_THAT(got->dp_degrees, ElementsAre(2u, 4u, 8u));
  EXPECT_EQ(got->search_range_m, 1.5);
  EXPECT_EQ(got->search_interval, 129u);
  EXPECT_EQ(got->min_chunk_size_m, 0.25);
  EXPECT_FALSE(got->filter_exlarge_params);
  EXPECT_EQ(got->engine, planner::Engine::kCpuSweep);
}

// "min_chunk_size_m ... Default 32", "filter_exlarge_params ... Default
// true", engine 0 is ENGINE_AUTO; everything else is empty or zero.
TEST(ProtoConvert, UnsetSearchFieldsTakeTheContractsDefaults) {
  const absl::StatusOr<planner::SearchRequest> got =
      FromProto(v1::ChunkSearchRequest());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->numels.empty());
  EXPECT_TRUE(got->dp_degrees.empty());
  EXPECT_EQ(got->search_range_m, 0.0);
  EXPECT_EQ(got->search_interval, 0u);
  EXPECT_EQ(got->min_chunk_size_m, 32.0);
  EXPECT_TRUE(got->filter_exlarge_params);
  EXPECT_EQ(got->engine, planner::Engine::kAuto);
}

// An optional field set to its zero value is set, not the default.
TEST(ProtoConvert, ExplicitZeroMinimumAndFilterOffAreKept) {
  v1::ChunkSearchRequest r;
  r.set_min_chunk_size_m(0);
  r.set_filter_exlarge_params(false);
  const absl::StatusOr<planner::SearchRequest> got = FromProto(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->min_chunk_size_m, 0.0);
  EXPECT_FALSE(got->filter_exlarge_params);
}

TEST(ProtoConvert, EveryEngineByName) {
  const std::pair<v1::Engine, planner::Engine> pairs[] = {
      {v1::ENGINE_AUTO, planner::Engine::kAuto},
      {v1::ENGINE_CPU_SWEEP, planner::Engine::kCpuSweep},
      {v1::ENGINE_CPU_PLATEAU, planner::Engine::kCpuPlateau},
      {v1::ENGINE_CUDA, planner::Engine::kCuda}};
  for (const auto& [wire, engine] : pairs) {
    v1::ChunkSearchRequest r;
    r.set_engine(wire);
    const absl::StatusOr<planner::SearchRequest> got = FromProto(r);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->engine, engine) << v1::Engine_Name(wire);

    planner::SearchResult result;
    result.engine = engine;
    EXPECT_EQ(ToProto(result).engine(), wire) << v1::Engine_Name(wire);
  }
}

// proto3 keeps an enum value it does not know; FromProto refuses it.
TEST(ProtoConvert, UnknownEngineIsInvalidArgument) {
  for (const int value : {4, -1, 1000}) {
    v1::ChunkSearchRequest r;
    r.set_engine(static_cast<v1::Engine>(value));
    const absl::StatusOr<planner::SearchRequest> got = FromProto(r);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("engine is"));
  }
}

TEST(ProtoConvert, SearchResultCarriesEveryField) {
  planner::SearchResult result;
  result.configs = {{1, 100, true}, {8, 527872, false}};
  result.total_param_size = 11;
  result.min_chunk_waste = 12;
  result.engine = planner::Engine::kCpuPlateau;
  result.candidates = 13;
  result.search_nanos = 14;
  result.fallback_reason = "not on the wire";
  const v1::ChunkSearchResponse got = ToProto(result);
  ASSERT_EQ(got.configs_size(), 2);
  EXPECT_EQ(got.configs(0).dp_degree(), 1u);
  EXPECT_EQ(got.configs(0).chunk_size(), 100u);
  EXPECT_TRUE(got.configs(0).keep_gathered());
  EXPECT_EQ(got.configs(1).dp_degree(), 8u);
  EXPECT_EQ(got.configs(1).chunk_size(), 527872u);
  EXPECT_FALSE(got.configs(1).keep_gathered());
  EXPECT_EQ(got.total_param_size(), 11u);
  EXPECT_EQ(got.min_chunk_waste(), 12u);
  EXPECT_EQ(got.engine(), v1::ENGINE_CPU_PLATEAU);
  EXPECT_EQ(got.candidates(), 13u);
  EXPECT_EQ(got.search_nanos(), 14u);
}

// GeminiSettings: "unset fields take GeminiPlugin's defaults": master
// weights on, gradient accumulation off, pinned memory on; enum zeros are
// PRECISION_FP16, OPTIMIZER_ADAM and OBJECTIVE_SEED_WASTE.
TEST(ProtoConvert, UnsetLayoutFieldsTakeGeminiPluginsDefaults) {
  const absl::StatusOr<planner::LayoutRequest> got =
      FromProto(v1::LayoutRequest());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->configs.empty());
  EXPECT_TRUE(got->frozen.empty());
  EXPECT_TRUE(got->gemini.master_weights);
  EXPECT_FALSE(got->gemini.gradient_accumulation);
  EXPECT_TRUE(got->gemini.pin_memory);
  EXPECT_EQ(got->gemini.optimizer, planner::Optimizer::kAdam);
  EXPECT_EQ(got->gemini.placement, planner::Placement::kStatic);
  EXPECT_FALSE(got->gemini.shard_param_frac.has_value());
  EXPECT_EQ(got->gemini.offload_optim_frac, 0.0);
  EXPECT_EQ(got->gemini.offload_param_frac, 0.0);
  EXPECT_FALSE(got->gemini.device_memory_bytes.has_value());
  EXPECT_EQ(got->objective, planner::Objective::kSeedWaste);
  EXPECT_EQ(got->search.min_chunk_size_m, 32.0);  // the search's defaults
  EXPECT_TRUE(got->search.filter_exlarge_params);
}

TEST(ProtoConvert, LayoutRequestCarriesEveryField) {
  v1::LayoutRequest r;
  *r.mutable_search() = FullSearchRequest();
  for (const auto& [degree, size, gathered] :
       {std::tuple{8u, uint64_t{4096}, false}, {2u, uint64_t{64}, true}}) {
    v1::ChunkConfig* c = r.add_configs();
    c->set_dp_degree(degree);
    c->set_chunk_size(size);
    c->set_keep_gathered(gathered);
  }
  for (bool f : {true, false, true}) r.add_frozen(f);
  v1::GeminiSettings* gemini = r.mutable_gemini();
  gemini->set_precision(v1::PRECISION_BF16);
  gemini->set_master_weights(false);
  gemini->set_gradient_accumulation(true);
  gemini->set_pin_memory(false);
  gemini->set_optimizer(v1::OPTIMIZER_NONE);
  gemini->set_placement(v1::PLACEMENT_AUTO);
  gemini->set_shard_param_frac(0.25);
  gemini->set_offload_optim_frac(0.5);
  gemini->set_offload_param_frac(0.75);
  gemini->set_device_memory_bytes(81);
  r.set_objective(v1::OBJECTIVE_PEAK_RANK_BYTES);

  const absl::StatusOr<planner::LayoutRequest> got = FromProto(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->search.numels, ElementsAre(7u, 0u, UINT64_MAX));
  EXPECT_EQ(got->search.engine, planner::Engine::kCpuSweep);
  EXPECT_THAT(got->configs, ElementsAre(planner::ChunkConfig{8, 4096, false},
                                        planner::ChunkConfig{2, 64, true}));
  EXPECT_THAT(got->frozen, ElementsAre(true, false, true));
  EXPECT_FALSE(got->gemini.master_weights);
  EXPECT_TRUE(got->gemini.gradient_accumulation);
  EXPECT_FALSE(got->gemini.pin_memory);
  EXPECT_EQ(got->gemini.optimizer, planner::Optimizer::kNone);
  EXPECT_EQ(got->gemini.placement, planner::Placement::kAuto);
  EXPECT_EQ(got->gemini.shard_param_frac, 0.25);
  EXPECT_EQ(got->gemini.offload_optim_frac, 0.5);
  EXPECT_EQ(got->gemini.offload_param_frac, 0.75);
  EXPECT_EQ(got->gemini.device_memory_bytes, 81u);
  EXPECT_EQ(got->objective, planner::Objective::kPeakRankBytes);

  r.set_objective(v1::OBJECTIVE_LAYOUT_PADDING);
  const absl::StatusOr<planner::LayoutRequest> padding = FromProto(r);
  ASSERT_TRUE(padding.ok()) << padding.status();
  EXPECT_EQ(padding->objective, planner::Objective::kLayoutPadding);
}

// Each enum outside chunkplan.v1 is INVALID_ARGUMENT naming its field.
TEST(ProtoConvert, LayoutEnumsOutsideTheContractNameTheirField) {
  struct Case {
    void (*spoil)(v1::LayoutRequest&);
    const char* field;
  };
  const Case cases[] = {
      {[](v1::LayoutRequest& r) {
         r.mutable_gemini()->set_precision(static_cast<v1::Precision>(2));
       },
       "gemini.precision is 2"},
      {[](v1::LayoutRequest& r) {
         r.mutable_gemini()->set_optimizer(static_cast<v1::Optimizer>(-3));
       },
       "gemini.optimizer is -3"},
      {[](v1::LayoutRequest& r) {
         r.mutable_gemini()->set_placement(static_cast<v1::Placement>(2));
       },
       "gemini.placement is 2"},
      {[](v1::LayoutRequest& r) {
         r.set_objective(static_cast<v1::Objective>(3));
       },
       "objective is 3"},
      {[](v1::LayoutRequest& r) {
         r.mutable_search()->set_engine(static_cast<v1::Engine>(9));
       },
       "search.engine is 9"},
  };
  for (const Case& c : cases) {
    v1::LayoutRequest r;
    c.spoil(r);
    const absl::StatusOr<planner::LayoutRequest> got = FromProto(r);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument)
        << c.field;
    EXPECT_THAT(got.status().message(), HasSubstr(c.field));
  }
}

// Distinct values in every field, so a field written to its neighbour's
// place fails.
planner::RankMemory Rank(uint64_t base) {
  return {base + 1, base + 2, base + 3, base + 4, base + 5,
          base + 6, base + 7, base + 8, base + 9};
}

void ExpectRank(const v1::RankMemory& got, uint64_t base) {
  EXPECT_EQ(got.param_bytes(), base + 1);
  EXPECT_EQ(got.master_bytes(), base + 2);
  EXPECT_EQ(got.grad_bytes(), base + 3);
  EXPECT_EQ(got.optimizer_bytes(), base + 4);
  EXPECT_EQ(got.frozen_bytes(), base + 5);
  EXPECT_EQ(got.device_bytes(), base + 6);
  EXPECT_EQ(got.pinned_host_bytes(), base + 7);
  EXPECT_EQ(got.offloaded_host_bytes(), base + 8);
  EXPECT_EQ(got.host_bytes(), base + 9);
}

TEST(ProtoConvert, LayoutResultCarriesEveryField) {
  planner::LayoutResult result;
  result.search = planner::SearchResult{};
  result.search->configs = {{8, 4096, false}};
  result.search->engine = planner::Engine::kCpuSweep;
  result.groups.push_back(
      {{8, 4096, false}, {{4096, 4000, 0, 3}, {4096, 96, 3, 1}}, 4096});
  result.layout_padding = 21;
  result.most_loaded_rank = Rank(100);
  result.least_loaded_rank = Rank(200);
  result.most_loaded_rank_least = Rank(300);
  result.gathered_chunk_bytes = 22;
  result.placement = {.offloaded_chunks = 23,
                      .offloaded_chunks_max = 24,
                      .effective_offload_optim_frac = 0.25,
                      .gathered_at_run_time = 25,
                      .param_offloaded_chunks = 26,
                      .notes = {"a", "b"}};
  const v1::LayoutResponse got = ToProto(result);
  ASSERT_TRUE(got.has_search());
  EXPECT_EQ(got.search().engine(), v1::ENGINE_CPU_SWEEP);
  ASSERT_EQ(got.search().configs_size(), 1);
  EXPECT_EQ(got.search().configs(0).chunk_size(), 4096u);
  ASSERT_EQ(got.groups_size(), 1);
  const v1::GroupLayout& g = got.groups(0);
  EXPECT_EQ(g.dp_degree(), 8u);
  EXPECT_EQ(g.chunk_size(), 4096u);
  EXPECT_FALSE(g.keep_gathered());
  EXPECT_EQ(g.padding(), 4096u);
  ASSERT_EQ(g.chunks_size(), 2);
  EXPECT_EQ(g.chunks(1).size(), 4096u);
  EXPECT_EQ(g.chunks(1).used(), 96u);
  EXPECT_EQ(g.chunks(1).first_param(), 3u);
  EXPECT_EQ(g.chunks(1).num_params(), 1u);
  EXPECT_EQ(got.layout_padding(), 21u);
  ExpectRank(got.most_loaded_rank(), 100);
  ExpectRank(got.least_loaded_rank(), 200);
  EXPECT_EQ(got.gathered_chunk_bytes(), 22u);
  ExpectRank(got.most_loaded_rank_least(), 300);
  EXPECT_EQ(got.placement().offloaded_chunks(), 23u);
  EXPECT_EQ(got.placement().offloaded_chunks_max(), 24u);
  EXPECT_EQ(got.placement().effective_offload_optim_frac(), 0.25);
  EXPECT_EQ(got.placement().gathered_at_run_time(), 25u);
  EXPECT_EQ(got.placement().param_offloaded_chunks(), 26u);
  EXPECT_THAT(got.placement().notes(), ElementsAre("a", "b"));

  result.search.reset();  // configs given: no search ran
  EXPECT_FALSE(ToProto(result).has_search());
}

TEST(ProtoConvert, FrontierResultCarriesEveryField) {
  planner::FrontierResult result;
  result.points = {{1, 2, 3, 4, 5, 6}, {11, 12, 13, 14, 15, 16}};
  result.engine = planner::Engine::kCuda;
  result.candidates = 31;
  result.search_nanos = 32;
  const v1::FrontierResponse got = ToProto(result);
  ASSERT_EQ(got.points_size(), 2);
  const v1::FrontierPoint& p = got.points(1);
  EXPECT_EQ(p.candidate(), 11u);
  EXPECT_EQ(p.chunk_size(), 12u);
  EXPECT_EQ(p.value(), 13u);
  EXPECT_EQ(p.seed_waste(), 14u);
  EXPECT_EQ(p.layout_padding(), 15u);
  EXPECT_EQ(p.peak_rank_bytes(), 16u);
  EXPECT_EQ(got.points(0).candidate(), 1u);
  EXPECT_EQ(got.engine(), v1::ENGINE_CUDA);
  EXPECT_EQ(got.candidates(), 31u);
  EXPECT_EQ(got.search_nanos(), 32u);
}

// The wire round trip a client sees: an optional field set to zero stays
// set through serialization (proto3 `optional` keeps presence), so the
// explicit 0 and false reach the planner, not the defaults 32 and true.
TEST(ProtoConvert, ExplicitZerosSurviveTheWire) {
  v1::ChunkSearchRequest sent;
  sent.set_min_chunk_size_m(0);
  sent.set_filter_exlarge_params(false);
  v1::ChunkSearchRequest received;
  ASSERT_TRUE(received.ParseFromString(sent.SerializeAsString()));
  const absl::StatusOr<planner::SearchRequest> got = FromProto(received);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->min_chunk_size_m, 0.0);
  EXPECT_FALSE(got->filter_exlarge_params);
}

}  // namespace
}  // namespace chunkplan::service
