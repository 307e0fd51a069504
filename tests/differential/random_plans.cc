#include "tests/differential/random_plans.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace chunkplan::testing {

uint64_t PlanGenerator::Uniform(uint64_t lo, uint64_t hi) {
  return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
}

bool PlanGenerator::Chance(double p) {
  return std::bernoulli_distribution(p)(rng_);
}

uint64_t PlanGenerator::LogUniform(uint64_t lo, uint64_t hi) {
  const double a = std::log(static_cast<double>(std::max<uint64_t>(lo, 1)));
  const double b = std::log(static_cast<double>(std::max<uint64_t>(hi, 1)));
  const double x = std::uniform_real_distribution<double>(a, b)(rng_);
  return std::clamp(static_cast<uint64_t>(std::exp(x)), lo, hi);
}

void PlanGenerator::SetSearch(v1::ChunkSearchRequest* s) {
  const uint64_t n = Uniform(1, 14);
  const uint64_t scale = LogUniform(16, uint64_t{1} << 20);
  const uint64_t equal = Uniform(1, scale);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t size = Uniform(0, scale);
    if (Chance(0.25)) size = equal;
    if (Chance(0.05)) size = 0;
    s->add_numels(size);
  }
  const uint64_t interval = LogUniform(1, 4096);
  s->set_search_interval(interval);
  // At most about 2000 candidates on the request's grid.
  const uint64_t steps = Uniform(0, 2000);
  s->set_search_range_m(static_cast<double>(steps * interval) / (1 << 20));
  const uint64_t total = scale * n;
  s->set_min_chunk_size_m(Chance(0.15) ? static_cast<double>(total * 2) /
                                             (1 << 20)  // kept gathered
                                       : (Chance(0.5) ? 0 : 0.0001));
  s->set_filter_exlarge_params(Chance(0.7));
}

void PlanGenerator::SetGemini(v1::GeminiSettings* g) {
  g->set_precision(Chance(0.5) ? v1::PRECISION_FP16 : v1::PRECISION_BF16);
  if (Chance(0.6)) g->set_master_weights(Chance(0.8));
  g->set_gradient_accumulation(Chance(0.3));
  if (Chance(0.6)) g->set_pin_memory(Chance(0.7));
  g->set_optimizer(Chance(0.85) ? v1::OPTIMIZER_ADAM : v1::OPTIMIZER_NONE);
  if (Chance(0.2)) {  // placement fields: ignored
    g->set_placement(Chance(0.5) ? v1::PLACEMENT_AUTO : v1::PLACEMENT_STATIC);
    g->set_offload_optim_frac(0.5);
    g->set_shard_param_frac(0.25);
  }
}

// Budgets around the request's bytes: a rank's 2 to 16 bytes per element of
// `total` elements over the world size reach from full offload to nothing
// moved.
void PlanGenerator::SetCluster(uint64_t total, v1::Cluster* c) {
  std::vector<uint32_t> pool = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::shuffle(pool.begin(), pool.end(), rng_);
  const size_t count = Uniform(1, 4);
  for (size_t i = 0; i < count; ++i) c->add_world_sizes(pool[i]);
  if (Chance(0.5)) c->add_world_sizes(Chance(0.5) ? 6 : 12);
  std::vector<uint32_t> sizes(c->world_sizes().begin(), c->world_sizes().end());
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  c->clear_world_sizes();
  std::shuffle(sizes.begin(), sizes.end(), rng_);
  for (const uint32_t w : sizes) c->add_world_sizes(w);
  const uint64_t t = std::max<uint64_t>(total, 1);
  c->set_device_memory_bytes(LogUniform(t / 2, 24 * t));
  c->set_reserve_bytes(Chance(0.5) ? 0 : Uniform(0, t));
  c->set_host_memory_bytes(Chance(0.3) ? 0 : LogUniform(4 * t, 200 * t));
  c->set_gpus_per_node(static_cast<uint32_t>(Uniform(1, 8)));
  if (Chance(0.2)) {  // whole nodes in place of the list
    c->clear_world_sizes();
    c->set_whole_nodes(true);
    c->set_max_nodes(static_cast<uint32_t>(Uniform(1, 3)));
  }
  // The margin: unset (5%), none, or up to a third of the device, so that
  // options fall on both sides of it and between it and the memory (tight).
  const uint64_t margin = Uniform(0, 3);
  if (margin == 1) c->set_margin(0.0);
  if (margin >= 2) c->set_margin(static_cast<double>(Uniform(0, 1000)) / 3000);
}

void PlanGenerator::Break(PlanFault fault, v1::PlanRequest* r) {
  v1::Cluster* c = r->mutable_cluster();
  switch (fault) {
    case PlanFault::kNone:
      break;
    case PlanFault::kDeviceMemory:
      c->set_device_memory_bytes(0);
      break;
    case PlanFault::kGpusPerNode:
      c->set_gpus_per_node(0);
      break;
    case PlanFault::kNoWorldSizes:
      c->clear_world_sizes();
      break;
    case PlanFault::kZeroWorldSize:
      c->add_world_sizes(0);
      break;
    case PlanFault::kRepeatedSize:
      if (c->world_sizes().empty()) c->add_world_sizes(8);  // whole nodes
      c->add_world_sizes(c->world_sizes(0));
      break;
    case PlanFault::kFrozenLength:
      r->clear_frozen();
      for (int i = 0; i <= r->search().numels_size(); ++i) {
        r->add_frozen(false);
      }
      break;
    case PlanFault::kSearchInterval:
      r->mutable_search()->set_search_interval(0);
      break;
    case PlanFault::kMargin:
      c->set_margin(Chance(0.5) ? 1.0 : -0.25);
      break;
    case PlanFault::kMaxNodes:
      if (c->whole_nodes()) {
        c->set_max_nodes(Chance(0.5) ? 0 : 65);
      } else {
        c->set_max_nodes(2);
      }
      break;
  }
}

v1::PlanRequest PlanGenerator::Next(double fault_chance, PlanFault* fault) {
  v1::PlanRequest r;
  SetSearch(r.mutable_search());
  uint64_t total = 0;
  for (const uint64_t n : r.search().numels()) total += n;
  if (Chance(0.3)) {
    for (int i = 0; i < r.search().numels_size(); ++i) {
      r.add_frozen(Chance(0.3));
    }
  }
  SetGemini(r.mutable_gemini());
  SetCluster(total, r.mutable_cluster());
  // GeminiPlugin's mesh (docs/tensor-parallelism.md): the numels are then
  // each rank's shards; a mesh that does not divide a world size, or a tp
  // degree above gpus_per_node, is skipped there.
  if (Chance(0.3)) {
    r.mutable_gemini()->set_tp_size(static_cast<uint32_t>(Uniform(0, 4)));
  }
  if (Chance(0.3)) {
    r.mutable_gemini()->set_extra_dp_size(static_cast<uint32_t>(Uniform(0, 3)));
  }
  if (Chance(0.2)) {
    r.add_extra_dp_sizes(1);
    r.add_extra_dp_sizes(2);
  }
  if (Chance(0.1)) r.mutable_gemini()->set_enable_sequence_parallelism(true);
  if (Chance(0.5)) r.set_max_options(static_cast<uint32_t>(Uniform(1, 40)));
  *fault = Chance(fault_chance)
               ? static_cast<PlanFault>(Uniform(1, kNumPlanFaults - 1))
               : PlanFault::kNone;
  Break(*fault, &r);
  return r;
}

}  // namespace chunkplan::testing
