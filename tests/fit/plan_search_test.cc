// PlanSearch on chunk layouts written by hand (a fake Layout callback), every
// expected figure worked in the comments from the rules of docs/plan.md and
// docs/placement.md (GeminiPlugin's defaults: fp16 chunk 2 bytes an element,
// master 4, gradients reusing the fp16 chunk, Adam 8 per real element,
// pinned copies 6 per shard element), not from running the code.
//
// The layout of most tests, at world size P = 2: two chunks of size 100, the
// first holding one parameter of 100 elements, the second one of 60. Rank 0
// holds shards of 50 with 50 real elements of each.
//   nothing moved: params 2*100, master 4*100, optimizer 8*(50+50)
//                  = 200 + 400 + 800 = 1400; pinned 6*100 = 600.
//   gathered chunk 2*100 = 200.
//   inflated total T = 2*100*1 + 2*100*1 = 400; an optimizer budget B =
//   ceil(400 f) offloads the first chunk (0 < B) and the second when B > 200;
//   each frees (4 + 0)*50 + 8*50 = 600 on rank 0 and adds 8*50 = 400 on its
//   host: one chunk 800 device, 1000 host; two 200 device, 1400 host.
//   auto and offload_optim_frac 1: as two chunks offloaded.

#include "server/planner/plan_search/plan_search.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "chunkplan/planner/plan_types.h"
#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/layout/placement.h"
#include "server/planner/plan_search/plan_fractions.h"
#include "server/planner/plan_search/plan_option.h"
#include "server/planner/plan_search/plan_order.h"

namespace chunkplan::planner {
namespace {

using ::testing::HasSubstr;

constexpr char kHybridAdam[] =
    "the optimizer must run where its states live: HybridAdam (CPUAdam on "
    "the host states); a GPU-only fused Adam fails at the first step";

// A group of degree `p` with chunk size `size` holding chunks of `used`
// elements, one parameter each.
LayoutResult Chunks(uint32_t p, uint64_t size,
                    const std::vector<uint64_t>& used) {
  LayoutResult r;
  r.search = SearchResult{};
  r.search->configs = {{p, size, false}};
  GroupLayout g{{p, size, false}, {}, 0};
  uint64_t first = 0;
  for (const uint64_t u : used) {
    g.chunks.push_back({size, u, first++, 1});
    g.padding += size - u;
  }
  r.layout_padding = g.padding;
  r.groups = {g};
  return r;
}

ChunkSizeFrom SourceOf(const LayoutRequest& l) {
  if (l.objective == Objective::kSeedWaste) {
    return ChunkSizeFrom::kColossalaiSearch;
  }
  return l.search.search_range_m == 1024 ? ChunkSizeFrom::kPeakRankBytesWide
                                         : ChunkSizeFrom::kPeakRankBytes;
}

// Answers every source at every world size with the two chunks of 100.
absl::StatusOr<LayoutResult> TwoChunks(const LayoutRequest& l) {
  return Chunks(l.search.dp_degrees.at(0), 100, {100, 60});
}

PlanRequest Request(uint64_t device, uint64_t host,
                    std::vector<uint32_t> world_sizes = {2}) {
  PlanRequest r;
  r.search.numels = {100, 60};
  r.search.search_interval = 1;
  r.cluster.device_memory_bytes = device;
  r.cluster.host_memory_bytes = host;
  r.cluster.gpus_per_node = 8;
  r.cluster.world_sizes = std::move(world_sizes);
  r.cluster.reserve_bytes = 100;
  // No margin: the hand-worked needs are held against the whole memory
  // (the margin's own tests set one).
  r.cluster.margin = 0.0;
  return r;
}

absl::StatusOr<PlanResult> PlanOf(const PlanRequest& r) {
  return PlanSearch(r, TwoChunks, {});
}

const double kJustAboveHalf = std::nextafter(0.5, 1.0);

// device 600, host unchecked. Needs (+ gathered 200 + reserve 100): nothing
// moved 1700 (fails by 1100); one chunk offloaded 1100 (fails); two 500.
// f*: two chunks need B = ceil(400 f) > 200, i.e. fl(400 f) > 200: f = 0.5
// gives exactly 200; f = 0.5 + 2^-53 gives 200 + 400 * 2^-53, 1.56 ulps of
// 200 (2^-45), rounded to 200 + 2^-44 > 200. So f* = nextafter(0.5, 1).
TEST(PlanSearchTest, PartialOffloadAtTheSmallestFraction) {
  auto got = PlanOf(Request(600, 0));
  ASSERT_TRUE(got.ok()) << got.status();
  // The three sources give the same configs: one chunk size, four options.
  EXPECT_EQ(got->options_considered, 4u);
  ASSERT_EQ(got->options.size(), 4u);
  const PlanOption& partial = got->options[0];
  EXPECT_EQ(partial.placement, PlanPlacement::kPartialOptimizer);
  EXPECT_EQ(partial.gemini.offload_optim_frac, kJustAboveHalf);
  EXPECT_TRUE(partial.verdict.fits);
  EXPECT_EQ(partial.verdict.why_not, "");
  EXPECT_EQ(partial.verdict.device_need_bytes, 500u);
  EXPECT_EQ(partial.most_loaded_rank.param_bytes, 200u);
  EXPECT_EQ(partial.most_loaded_rank.master_bytes, 0u);
  EXPECT_EQ(partial.most_loaded_rank.optimizer_bytes, 0u);
  EXPECT_EQ(partial.most_loaded_rank.device_bytes, 200u);
  EXPECT_EQ(partial.most_loaded_rank.pinned_host_bytes, 600u);
  EXPECT_EQ(partial.most_loaded_rank.offloaded_host_bytes, 800u);
  // min(8 GPUs a node, world size 2) x 1400.
  EXPECT_EQ(partial.verdict.host_bytes_per_node, 2800u);
  EXPECT_EQ(partial.gathered_chunk_bytes, 200u);
  EXPECT_EQ(partial.layout_padding, 40u);
  EXPECT_EQ(partial.chunk_size_from, ChunkSizeFrom::kColossalaiSearch);
  EXPECT_EQ(partial.objective, Objective::kSeedWaste);
  EXPECT_EQ(partial.colossalai,
            "placement_policy=\"static\", shard_param_frac=1.0, "
            "offload_optim_frac=0.5000000000000001, offload_param_frac=0.0, "
            "precision=\"fp16\", master_weights=True, "
            "enable_gradient_accumulation=False, pin_memory=True, "
            "chunk_config_dict={2: {\"chunk_size\": 100, \"keep_gathered\": "
            "False}}");
  ASSERT_FALSE(partial.notes.empty());
  EXPECT_EQ(partial.notes.back(), kHybridAdam);
  // Then full offload and auto (500 each: rank order), then nothing moved.
  EXPECT_EQ(got->options[1].placement, PlanPlacement::kFullOptimizer);
  EXPECT_EQ(got->options[1].verdict.device_need_bytes, 500u);
  EXPECT_EQ(got->options[2].placement, PlanPlacement::kAuto);
  EXPECT_EQ(got->options[2].verdict.device_need_bytes, 500u);
  EXPECT_EQ(got->options[2].gemini.device_memory_bytes, 600u);
  EXPECT_EQ(got->options[2].colossalai,
            "placement_policy=\"auto\", precision=\"fp16\", "
            "master_weights=True, enable_gradient_accumulation=False, "
            "pin_memory=True, chunk_config_dict={2: {\"chunk_size\": 100, "
            "\"keep_gathered\": False}}");
  const PlanOption& none = got->options[3];
  EXPECT_EQ(none.placement, PlanPlacement::kNothingMoved);
  EXPECT_FALSE(none.verdict.fits);
  EXPECT_EQ(none.verdict.device_need_bytes, 1700u);
  EXPECT_EQ(none.verdict.host_bytes_per_node, 1200u);  // 2 x 600
  EXPECT_EQ(none.verdict.why_not, "device: 1700 > 600 by 1100");
  EXPECT_TRUE(none.notes.empty());
}

// One ulp below f* offloads one chunk only: 800 + 200 + 100 = 1100 > 600.
TEST(PlanSearchTest, OneUlpBelowTheFractionFails) {
  const PlanRequest r = Request(600, 0);
  PlanContext context;
  context.cluster = &r.cluster;
  context.precision = &r.precision;
  PlanChunks chunks{2, ChunkSizeFrom::kColossalaiSearch, {}, {}, 0};
  chunks.groups = Chunks(2, 100, {100, 60}).groups;
  const auto need = [&](double f) {
    return DeviceNeedBytes(
        context, chunks,
        PlacementSettings(r.gemini, PlanPlacement::kPartialOptimizer, f, 0));
  };
  EXPECT_EQ(*need(kJustAboveHalf), 500u);
  EXPECT_EQ(*need(0.5), 1100u);
  EXPECT_EQ(*need(std::numeric_limits<double>::denorm_min()), 1100u);
}

// device 1100: one chunk offloaded is enough, and any f > 0 offloads one
// (0 bytes offloaded < ceil(400 f) = 1): f* is the smallest positive double.
TEST(PlanSearchTest, TheSmallestFractionMayBeTheSmallestDouble) {
  auto got = PlanOf(Request(1100, 0));
  ASSERT_TRUE(got.ok()) << got.status();
  const PlanOption& partial = got->options[0];
  ASSERT_EQ(partial.placement, PlanPlacement::kPartialOptimizer);
  EXPECT_EQ(partial.gemini.offload_optim_frac,
            std::numeric_limits<double>::denorm_min());
  EXPECT_THAT(partial.colossalai, HasSubstr("offload_optim_frac=5e-324,"));
  EXPECT_EQ(partial.verdict.device_need_bytes, 1100u);
  EXPECT_EQ(partial.verdict.host_bytes_per_node, 2000u);  // 2 x (600 + 400)
}

// device 400: even full offload needs 500. Parameter offload: keep_cuda =
// 400 (1 - g); the walk moves the first chunk's fp16 shard (100 bytes on rank
// 0) while the rest (400) exceeds floor(400 fl(1 - g)): one shard moved gives
// 100 + 200 + 100 = 400, which passes. fl(1 - g) < 1 needs g > 2^-54 (2^-54
// itself ties to 1.0), so g* = nextafter(2^-54, 1); then fl(400 (1 -
// 2^-53)) = 400 - 2^-44, floor 399: one chunk, the rest 200 <= 399.
// Host 1000: nothing moved needs 2 x 600 = 1200 (by 200), the others
// 2 x 1400 = 2800 (by 1800).
TEST(PlanSearchTest, ParameterOffloadAndBothBudgetsInWhyNot) {
  auto got = PlanOf(Request(400, 1000));
  ASSERT_TRUE(got.ok()) << got.status();
  // No f < 1 passes (two chunks: 500), so no partial option.
  EXPECT_EQ(got->options_considered, 4u);
  ASSERT_EQ(got->options.size(), 4u);
  // None fits; by device excess, then host excess: params (0, 1800), full
  // (100, 1800), auto (100, 1800: rank order), nothing moved (1300, 200).
  const PlanOption& params = got->options[0];
  EXPECT_EQ(params.placement, PlanPlacement::kOptimizerAndParams);
  EXPECT_EQ(params.gemini.offload_optim_frac, 1.0);
  EXPECT_EQ(params.gemini.offload_param_frac,
            std::nextafter(std::ldexp(1.0, -54), 1.0));
  EXPECT_EQ(params.verdict.device_need_bytes, 400u);
  EXPECT_EQ(params.verdict.why_not, "host: 2800 > 1000 by 1800");
  EXPECT_FALSE(params.verdict.tight);  // the host does not hold it
  EXPECT_EQ(got->options[1].placement, PlanPlacement::kFullOptimizer);
  EXPECT_EQ(got->options[1].verdict.why_not,
            "device: 500 > 400 by 100; host: 2800 > 1000 by 1800");
  EXPECT_EQ(got->options[2].placement, PlanPlacement::kAuto);
  EXPECT_EQ(got->options[3].placement, PlanPlacement::kNothingMoved);
  EXPECT_EQ(got->options[3].verdict.why_not,
            "device: 1700 > 400 by 1300; host: 1200 > 1000 by 200");
  for (const PlanOption& o : got->options) EXPECT_FALSE(o.verdict.fits);
}

// device 1200, margin 0.1: 120 bytes of margin, a budget of 1080. One chunk
// offloaded (1100) would fit the memory but not the margin, so f* is the
// fraction that offloads both (as in PartialOffloadAtTheSmallestFraction),
// not the smallest double (as with no margin at 1100).
TEST(PlanSearchTest, TheFractionsLeaveTheMargin) {
  PlanRequest r = Request(1200, 0);
  r.cluster.margin = 0.1;
  auto got = PlanOf(r);
  ASSERT_TRUE(got.ok()) << got.status();
  const PlanOption& partial = got->options[0];
  ASSERT_EQ(partial.placement, PlanPlacement::kPartialOptimizer);
  EXPECT_EQ(partial.gemini.offload_optim_frac, kJustAboveHalf);
  EXPECT_EQ(partial.verdict.device_need_bytes, 500u);
  EXPECT_EQ(partial.verdict.margin, 0.1);
  EXPECT_EQ(partial.verdict.margin_bytes, 120u);
  EXPECT_EQ(partial.verdict.headroom_bytes, 700u);
  EXPECT_TRUE(partial.verdict.fits);
  const PlanOption& none = got->options[3];
  EXPECT_EQ(none.placement, PlanPlacement::kNothingMoved);
  EXPECT_EQ(none.verdict.why_not,
            "device: 1700 > 1080 by 620 (device memory 1200 less margin 120)");
  // Unset, the margin is 5%: 60 bytes, a budget of 1140, where one chunk
  // offloaded (1100) fits: f* is the smallest double again.
  r.cluster.margin.reset();
  got = PlanOf(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->options[0].gemini.offload_optim_frac,
            std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(got->options[0].verdict.margin, 0.05);
  EXPECT_EQ(got->options[0].verdict.margin_bytes, 60u);
}

// device 510, margin 0.05: 26 bytes of margin (25.5 up), a budget of 484.
// Full offload and auto need 500: within the memory, not the margin: tight.
// Two chunks offloaded need 500 too, so no f < 1 passes (no partial option);
// full offload does not pass, so g* is searched: one shard moved needs 400.
// Order: params (fits), full and auto (tight, rank order), nothing moved.
TEST(PlanSearchTest, TightOptionsRankAfterThoseThatFit) {
  PlanRequest r = Request(510, 0);
  r.cluster.margin = 0.05;
  auto got = PlanOf(r);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->options.size(), 4u);
  EXPECT_EQ(got->options[0].placement, PlanPlacement::kOptimizerAndParams);
  EXPECT_TRUE(got->options[0].verdict.fits);
  EXPECT_EQ(got->options[0].verdict.headroom_bytes, 110u);
  for (int i : {1, 2}) {
    const Verdict& v = got->options[i].verdict;
    EXPECT_FALSE(v.fits);
    EXPECT_TRUE(v.tight);
    EXPECT_EQ(v.headroom_bytes, 10u);
    EXPECT_EQ(v.device_excess_bytes, 16u);
    EXPECT_EQ(v.why_not,
              "device: 500 > 484 by 16 (device memory 510 less margin 26)");
  }
  EXPECT_EQ(got->options[1].placement, PlanPlacement::kFullOptimizer);
  EXPECT_EQ(got->options[2].placement, PlanPlacement::kAuto);
  EXPECT_EQ(got->options[3].placement, PlanPlacement::kNothingMoved);
  EXPECT_FALSE(got->options[3].verdict.tight);
}

// The order of the options that do not fit: device excess before host
// excess, so an option that misses only the host (0, 5000) precedes one
// that overshoots the device (1, 0).
TEST(PlanSearchTest, DeviceExcessOrdersBeforeHostExcess) {
  std::vector<PlanOption> options(2);
  options[0].verdict.device_excess_bytes = 1;
  options[1].verdict.host_excess_bytes = 5000;
  options[1].world_size = 64;
  OrderOptions(&options);
  EXPECT_EQ(options[0].verdict.host_excess_bytes, 5000u);
  EXPECT_EQ(options[1].verdict.device_excess_bytes, 1u);
}

// The order of fitting options: world size, placement rank, device need,
// source. Sources: the search gives chunk size 100 (as above), both peak
// grids 200 (one chunk of 160: rank 0 holds 100 real of its shard of 100:
// 200 + 400 + 800 = 1400, gathered 400, need 1900; full offload
// 200 + 400 + 100 = 700), the wide one repeating the other (left out). At
// P = 1 every source gives chunk size 100: rank 0 holds both chunks whole:
// 400 + 800 + 8 * 160 = 2480, gathered 200, need 2780.
TEST(PlanSearchTest, OrderAndRepeatsLeftOut) {
  const auto layout = [](const LayoutRequest& l) {
    const uint32_t p = l.search.dp_degrees.at(0);
    if (p == 2 && SourceOf(l) != ChunkSizeFrom::kColossalaiSearch) {
      return Chunks(p, 200, {160});
    }
    return Chunks(p, 100, {100, 60});
  };
  PlanRequest r = Request(uint64_t{1} << 40, 0, {2, 1});
  r.max_options = 5;
  auto got = PlanSearch(r, layout, {});
  ASSERT_TRUE(got.ok()) << got.status();
  // Every option fits: nothing moved, full offload and auto per chunk size;
  // P = 2 has two chunk sizes, P = 1 one.
  EXPECT_EQ(got->options_considered, 9u);
  ASSERT_EQ(got->options.size(), 5u);
  const auto is = [](const PlanOption& o, uint32_t w, PlanPlacement p,
                     ChunkSizeFrom from, uint64_t need) {
    EXPECT_EQ(o.world_size, w);
    EXPECT_EQ(o.placement, p);
    EXPECT_EQ(o.chunk_size_from, from);
    EXPECT_EQ(o.verdict.device_need_bytes, need);
  };
  is(got->options[0], 1, PlanPlacement::kNothingMoved,
     ChunkSizeFrom::kColossalaiSearch, 2780);
  is(got->options[1], 1, PlanPlacement::kFullOptimizer,
     ChunkSizeFrom::kColossalaiSearch, 400 + 200 + 100);
  is(got->options[2], 1, PlanPlacement::kAuto, ChunkSizeFrom::kColossalaiSearch,
     700);
  is(got->options[3], 2, PlanPlacement::kNothingMoved,
     ChunkSizeFrom::kColossalaiSearch, 1700);
  is(got->options[4], 2, PlanPlacement::kNothingMoved,
     ChunkSizeFrom::kPeakRankBytes, 1900);
  EXPECT_EQ(got->options[4].objective, Objective::kPeakRankBytes);
}

// A non-gathered chunk size that is not a multiple of the world size is left
// out (ColossalAI asserts at launch); a kept-gathered one is accepted.
TEST(PlanSearchTest, ChunkSizesColossalaiRefusesAreLeftOut) {
  EXPECT_FALSE(ColossalaiAccepts({{3, 100, false}}, 3));
  EXPECT_TRUE(ColossalaiAccepts({{3, 102, false}}, 3));
  EXPECT_TRUE(ColossalaiAccepts({{3, 100, true}}, 3));
  const auto layout = [](const LayoutRequest& l) {
    return SourceOf(l) == ChunkSizeFrom::kColossalaiSearch
               ? Chunks(3, 100, {100})
               : Chunks(3, 102, {100});
  };
  auto got = PlanSearch(Request(uint64_t{1} << 40, 0, {3}), layout, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->options_considered, 3u);  // 102: nothing moved, full, auto
  for (const PlanOption& o : got->options) {
    EXPECT_EQ(o.chunk_size_from, ChunkSizeFrom::kPeakRankBytes);
  }
}

// Each Layout request: dp_degrees [W], the fixed choices under static
// placement with nothing moved, the wide grid's range and interval.
TEST(PlanSearchTest, TheLayoutRequests) {
  PlanRequest r = Request(1, 0);
  r.search.dp_degrees = {5, 6};
  r.search.search_interval = 1000;
  r.gemini.master_weights = false;
  r.gemini.offload_optim_frac = 0.5;  // ignored
  r.gemini.placement = Placement::kAuto;
  const LayoutRequest seed =
      ChunkSizeRequest(r, 8, ChunkSizeFrom::kColossalaiSearch);
  EXPECT_EQ(seed.search.dp_degrees, std::vector<uint32_t>{8});
  EXPECT_EQ(seed.objective, Objective::kSeedWaste);
  EXPECT_FALSE(seed.gemini.master_weights);
  EXPECT_EQ(seed.gemini.placement, Placement::kStatic);
  EXPECT_EQ(seed.gemini.offload_optim_frac, 0.0);
  const LayoutRequest wide =
      ChunkSizeRequest(r, 8, ChunkSizeFrom::kPeakRankBytesWide);
  EXPECT_EQ(wide.objective, Objective::kPeakRankBytes);
  EXPECT_EQ(wide.search.search_range_m, 1024);
  EXPECT_EQ(wide.search.search_interval, 128u);
  r.search.search_interval = 64;
  EXPECT_EQ(ChunkSizeRequest(r, 8, ChunkSizeFrom::kPeakRankBytesWide)
                .search.search_interval,
            64u);
}

PlanWorkload OneOfEach() {
  PlanWorkload w;
  w.shape = {1, 1, 1, 1};
  w.workload.micro_batch = w.workload.sequence_length = 1;
  return w;
}

// A LLaMA-style workload of L = h = a = v = s = b = 1 (intermediate 4h,
// SDPA): a layer's norms 2 x (4 + 4 + 2 + 2), SDPA 4 x 2 + 4, MLP 4 x 8 =
// 68; outside input_ids 8, cos and sin 4, the final norm 12; the loss
// 4 + 16 (the padded labels, 8(s + 1)) + 4; the 16-bit logits 2: 118
// held. Transient: the loss's 4 (nll_loss's fp32 gradient; log_softmax's
// comes once the targets and the weight, 20, are released: no more; a
// layer's 2 + 24 is below the 36 released before it). 122 on every
// option's device need, and a note.
TEST(PlanSearchTest, ActivationEstimateCounts) {
  PlanRequest r = Request(uint64_t{1} << 40, 0);
  r.workload = OneOfEach();
  auto got = PlanOf(r);
  ASSERT_TRUE(got.ok()) << got.status();
  const PlanOption& none = got->options[0];
  EXPECT_EQ(none.placement, PlanPlacement::kNothingMoved);
  EXPECT_EQ(none.activation_bytes, 118u);
  EXPECT_EQ(none.transient_bytes, 4u);
  EXPECT_EQ(none.verdict.device_need_bytes, 1700u + 122);
  ASSERT_FALSE(none.notes.empty());
  EXPECT_EQ(none.notes.back(),
            "activation_bytes and transient_bytes are estimates "
            "(docs/plan.md)");
}

// Refused with INVALID_ARGUMENT whose message begins with `field` (then ':'
// or ' ').
void ExpectRefused(const PlanRequest& r, const std::string& field) {
  auto got = PlanOf(r);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(got.status().message());
  EXPECT_EQ(message.substr(0, message.find_first_of(": ")), field) << message;
}

TEST(PlanSearchTest, EveryCheckNamesItsField) {
  PlanRequest r = Request(600, 0);
  r.cluster.device_memory_bytes = 0;
  ExpectRefused(r, "cluster.device_memory_bytes");
  r = Request(600, 0);
  r.cluster.gpus_per_node = 0;
  ExpectRefused(r, "cluster.gpus_per_node");
  ExpectRefused(Request(600, 0, {}), "cluster.world_sizes");
  std::vector<uint32_t> many;
  for (uint32_t w = 1; w <= 65; ++w) many.push_back(w);
  ExpectRefused(Request(600, 0, many), "cluster.world_sizes");
  many.pop_back();
  EXPECT_TRUE(PlanOf(Request(1, 0, many)).ok());  // 64 distinct sizes
  ExpectRefused(Request(600, 0, {8, 0}), "cluster.world_sizes[1]");
  ExpectRefused(Request(600, 0, {8, 4, 8}), "cluster.world_sizes[2]");
  r = Request(600, 0);
  r.workload = OneOfEach();
  r.workload->workload.micro_batch = 0;
  ExpectRefused(r, "workload.micro_batch");
  r.workload = OneOfEach();
  r.workload->workload.sequence_length = 0;
  ExpectRefused(r, "workload.sequence_length");
  r = Request(600, 0);
  r.cluster.reserve_bytes = UINT64_MAX - 1000;  // + 1400 + 200 wraps
  ExpectRefused(r, "device_need_bytes");
}

// Through Planner::Plan, on the planner's own Layout: the search part and
// frozen refused as Layout refuses them, and an answer whose every chunk
// size ColossalAI accepts.
TEST(PlannerPlanTest, OnTheRealLayout) {
  const Planner planner;
  PlanRequest r = Request(1 << 20, 0, {3, 2});
  r.search.search_interval = 0;
  auto refused = planner.Plan(r);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::StartsWith("search.search_interval"));
  r.search.search_interval = 16;
  r.frozen = {true};
  refused = planner.Plan(r);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::StartsWith("frozen"));
  r.frozen.clear();
  auto got = planner.Plan(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_GE(got->options_considered, 6u);  // three placements at least, twice
  for (const PlanOption& o : got->options) {
    EXPECT_TRUE(ColossalaiAccepts(o.configs, o.world_size));
  }
}

// The stop check is asked before every option; its status ends the search.
TEST(PlanSearchTest, TheStopCheckEndsIt) {
  int asked = 0;
  const auto stop = [&asked]() -> absl::Status {
    return ++asked == 3 ? absl::CancelledError("stop") : absl::OkStatus();
  };
  auto got = PlanSearch(Request(600, 0), TwoChunks, stop);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(asked, 3);
}

// The two chunks' fp16 bytes are 200 each (gcd 200), T = 400: the budget
// ceil(400 f) matters only as ceil(budget / 200), the kept bytes
// floor(400 fl(1 - g)) only as floor(kept / 200).
TEST(FractionClassesTest, ClassesOfTheTwoChunks) {
  const FractionClasses classes(Chunks(2, 100, {100, 60}).groups, {});
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(classes.OptimClass(tiny), 1u);                  // budget 1
  EXPECT_EQ(classes.OptimClass(0.5), 1u);                   // budget 200
  EXPECT_EQ(classes.OptimClass(kJustAboveHalf), 2u);        // budget 201
  EXPECT_EQ(classes.ParamClass(std::ldexp(1.0, -54)), 2u);  // keeps 400
  EXPECT_EQ(classes.ParamClass(std::nextafter(std::ldexp(1.0, -54), 1.0)),
            1u);                           // keeps 399
  EXPECT_EQ(classes.ParamClass(1.0), 0u);  // keeps 0
}

// The bisection finds the smallest passing double exactly.
TEST(PlanFractionsTest, SmallestPassingIsExact) {
  const double t = 0.3;
  const auto at_least = [t](double x) -> absl::StatusOr<bool> {
    return x >= t;
  };
  EXPECT_EQ(**SmallestOptimFraction(at_least), 0.3);
  EXPECT_EQ(**SmallestParamFraction(
                [](double x) -> absl::StatusOr<bool> { return x >= 1.0; }),
            1.0);
  EXPECT_FALSE(SmallestOptimFraction([](double x) -> absl::StatusOr<bool> {
                 return x >= 1.0;
               })->has_value());
  EXPECT_EQ(SmallestOptimFraction([](double) -> absl::StatusOr<bool> {
              return absl::InternalError("boom");
            })
                .status()
                .code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace chunkplan::planner
