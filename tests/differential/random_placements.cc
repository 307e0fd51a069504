#include "tests/differential/random_placements.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "server/planner/layout/chunk_placement.h"
#include "server/service/proto_convert.h"

namespace chunkplan::testing {
namespace {

// The chunks' fp16 bytes (non-gathered) and the inflated total (each chunk
// once per parameter), from the request's layout: inputs for thresholds.
struct ChunkBytes {
  std::vector<uint64_t> weights;
  double total = 0;
};

ChunkBytes BytesOf(const v1::LayoutRequest& request) {
  ChunkBytes out;
  const auto plain = service::FromProto(request);
  if (!plain.ok()) return out;
  const auto groups =
      planner::PlaceChunks(plain->search, plain->configs, plain->frozen);
  if (!groups.ok()) return out;
  for (const planner::GroupLayout& g : *groups) {
    for (const planner::ChunkLayout& c : g.chunks) {
      out.total += 2.0 * c.size * c.num_params;
      if (!g.config.keep_gathered) out.weights.push_back(2 * c.size);
    }
  }
  return out;
}

}  // namespace

uint64_t PlacementGenerator::Uniform(uint64_t lo, uint64_t hi) {
  return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
}

bool PlacementGenerator::Chance(double p) {
  return std::bernoulli_distribution(p)(rng_);
}

void PlacementGenerator::SetModel(v1::LayoutRequest* r) {
  v1::ChunkSearchRequest* s = r->mutable_search();
  s->set_search_interval(1);
  const int n = static_cast<int>(Uniform(1, 9));
  const bool uniform = Chance(0.35);
  const uint64_t each = Uniform(1, 500);
  std::vector<uint32_t> degrees;
  const uint64_t shape = Uniform(0, 2);
  for (int i = 0; i < n; ++i) {
    s->add_numels(
        uniform ? each : (Chance(0.15) ? Uniform(600, 3000) : Uniform(0, 500)));
    if (shape == 2) s->add_dp_degrees(Chance(0.5) ? 1 : 2);
  }
  if (shape == 1) s->add_dp_degrees(static_cast<uint32_t>(1) << Uniform(1, 3));
  // One config per degree present, first-seen order.
  for (int i = 0; i < n; ++i) {
    const uint32_t d = s->dp_degrees_size() == 0   ? 1
                       : s->dp_degrees_size() == 1 ? s->dp_degrees(0)
                                                   : s->dp_degrees(i);
    if (std::find(degrees.begin(), degrees.end(), d) != degrees.end()) continue;
    degrees.push_back(d);
    v1::ChunkConfig* c = r->add_configs();
    c->set_dp_degree(d);
    c->set_keep_gathered(Chance(0.15));
    uint64_t size = uniform ? each * Uniform(1, 3) : Uniform(200, 1200);
    size = std::max<uint64_t>(size, 1);
    if (!c->keep_gathered()) size += (d - size % d) % d;
    c->set_chunk_size(size);
  }
  if (Chance(0.25)) {
    for (int i = 0; i < n; ++i) r->add_frozen(Chance(0.3));
  }
  v1::GeminiSettings* g = r->mutable_gemini();
  if (Chance(0.4)) g->set_master_weights(Chance(0.5));
  g->set_gradient_accumulation(Chance(0.25));
  if (Chance(0.5)) g->set_pin_memory(Chance(0.5));
  if (Chance(0.2)) g->set_optimizer(v1::OPTIMIZER_NONE);
}

double PlacementGenerator::Fraction(const std::vector<uint64_t>& weights,
                                    double total, bool complement,
                                    bool* threshold) {
  const uint64_t p = Uniform(0, 99);
  if (p < 15) return 0.0;
  if (p < 30) return 1.0;
  if (p < 55 || weights.empty() || total <= 0) {
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
  // A sum of some chunks' bytes as the budget (or what is kept).
  std::vector<uint64_t> order = weights;
  std::shuffle(order.begin(), order.end(), rng_);
  double sum = 0;
  const uint64_t k = Uniform(1, order.size());
  for (uint64_t i = 0; i < k; ++i) sum += order[i];
  double f = complement ? 1.0 - sum / total : sum / total;
  const uint64_t nudge = Uniform(0, 2);
  if (nudge == 1) f = std::nextafter(f, 2.0);
  if (nudge == 2) f = std::nextafter(f, -1.0);
  *threshold = true;
  return std::clamp(f, 0.0, 1.0);
}

GeneratedPlacement PlacementGenerator::Next() {
  GeneratedPlacement out;
  v1::LayoutRequest& r = out.request;
  SetModel(&r);
  const ChunkBytes bytes = BytesOf(r);
  v1::GeminiSettings* g = r.mutable_gemini();
  out.kind = static_cast<PlacementCase>(Uniform(0, kNumPlacementCases - 1));
  bool* t = &out.threshold;
  switch (out.kind) {
    case PlacementCase::kDefault:
      break;
    case PlacementCase::kOptim:
      g->set_offload_optim_frac(Fraction(bytes.weights, bytes.total, false, t));
      break;
    case PlacementCase::kShard:
      g->set_shard_param_frac(Fraction(bytes.weights, bytes.total, true, t));
      if (Chance(0.4)) {
        g->set_offload_optim_frac(
            Fraction(bytes.weights, bytes.total, false, t));
      }
      break;
    case PlacementCase::kParam:
      g->set_offload_param_frac(Fraction(bytes.weights, bytes.total, true, t));
      g->set_offload_optim_frac(Chance(0.7) ? 1.0 : 0.5);
      if (Chance(0.2)) g->set_shard_param_frac(Chance(0.5) ? 1.0 : 0.5);
      break;
    case PlacementCase::kAuto:
      g->set_placement(v1::PLACEMENT_AUTO);
      if (Chance(0.6)) g->set_device_memory_bytes(Uniform(0, 200000));
      break;
    case PlacementCase::kFault: {
      const double bad[] = {-0.25, 1.5,
                            std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity()};
      const double v = bad[Uniform(0, 3)];
      switch (Uniform(0, 4)) {
        case 0:
          g->set_offload_optim_frac(v);
          break;
        case 1:
          g->set_shard_param_frac(v);
          break;
        case 2:
          g->set_offload_param_frac(v);
          break;
        case 3:
          g->set_placement(v1::PLACEMENT_AUTO);
          if (Chance(0.5)) {
            g->set_offload_optim_frac(0.5);
          } else {
            g->set_shard_param_frac(1.0);
          }
          break;
        default:
          g->set_device_memory_bytes(Uniform(1, 1000));
          break;
      }
      break;
    }
  }
  return out;
}

}  // namespace chunkplan::testing
