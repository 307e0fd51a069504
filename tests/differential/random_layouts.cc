#include "tests/differential/random_layouts.h"

#include <algorithm>
#include <vector>

namespace chunkplan::testing {
namespace {

// The degree of parameter `i` as the request gives it.
uint32_t DegreeOf(const v1::ChunkSearchRequest& r, int i) {
  if (r.dp_degrees_size() == 0) return 1;
  if (r.dp_degrees_size() == 1) return r.dp_degrees(0);
  return r.dp_degrees(i);
}

// The degrees present, in first-seen order, with the largest tensor of each.
struct DegreeGroup {
  uint32_t degree = 1;
  uint64_t largest = 0;
};

std::vector<DegreeGroup> Groups(const v1::ChunkSearchRequest& r) {
  std::vector<DegreeGroup> groups;
  for (int i = 0; i < r.numels_size(); ++i) {
    const uint32_t d = DegreeOf(r, i);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [d](const DegreeGroup& g) { return g.degree == d; });
    if (it == groups.end()) {
      groups.push_back({d, 0});
      it = groups.end() - 1;
    }
    it->largest = std::max(it->largest, r.numels(i));
  }
  return groups;
}

}  // namespace

absl::string_view LayoutFaultName(LayoutFault fault) {
  switch (fault) {
    case LayoutFault::kNone:
      return "none";
    case LayoutFault::kAbsentDegree:
      return "absent_degree";
    case LayoutFault::kMissingDegree:
      return "missing_degree";
    case LayoutFault::kTwoConfigs:
      return "two_configs";
    case LayoutFault::kZeroChunk:
      return "zero_chunk";
    case LayoutFault::kNotAMultiple:
      return "not_a_multiple";
    case LayoutFault::kFrozenLength:
      return "frozen_length";
  }
  return "unknown";
}

uint64_t LayoutGenerator::Uniform(uint64_t lo, uint64_t hi) {
  return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
}

bool LayoutGenerator::Chance(double p) {
  return std::bernoulli_distribution(p)(rng_);
}

uint64_t LayoutGenerator::ChunkSize(uint32_t degree, uint64_t largest,
                                    bool any_size) {
  const uint64_t p = Uniform(0, 99);
  uint64_t size = 0;
  if (p < 30) {
    size = Uniform(1, std::max<uint64_t>(largest, 1));  // oversize chunks
  } else if (p < 60) {
    size = largest + Uniform(0, largest / 4 + 16);
  } else if (p < 85) {
    size = largest * Uniform(2, 20) + Uniform(0, 1000);
  } else {
    size = Uniform(1, 4096);
  }
  size = std::max<uint64_t>(size, 1);
  if (!any_size) size += (degree - size % degree) % degree;
  return size;
}

void LayoutGenerator::SetConfigs(v1::LayoutRequest* r) {
  std::vector<DegreeGroup> groups = Groups(r->search());
  // Given configs need not follow the parameters' order.
  if (Chance(0.4)) std::shuffle(groups.begin(), groups.end(), rng_);
  for (const DegreeGroup& g : groups) {
    v1::ChunkConfig* c = r->add_configs();
    c->set_dp_degree(g.degree);
    c->set_keep_gathered(Chance(0.25));
    c->set_chunk_size(ChunkSize(g.degree, g.largest, c->keep_gathered()));
  }
}

void LayoutGenerator::SetFrozen(v1::LayoutRequest* r) {
  const int n = r->search().numels_size();
  const uint64_t p = Uniform(0, 99);
  if (p < 55) return;
  const double share =
      p < 65
          ? 1.0
          : (p < 70 ? 0.0
                    : std::uniform_real_distribution<double>(0.05, 0.9)(rng_));
  for (int i = 0; i < n; ++i) r->add_frozen(Chance(share));
}

void LayoutGenerator::SetGemini(v1::LayoutRequest* r) {
  if (Chance(0.2)) return;  // every default
  v1::GeminiSettings* g = r->mutable_gemini();
  if (Chance(0.5)) {
    g->set_precision(Chance(0.5) ? v1::PRECISION_BF16 : v1::PRECISION_FP16);
  }
  if (Chance(0.6)) g->set_master_weights(Chance(0.5));
  g->set_gradient_accumulation(Chance(0.3));
  if (Chance(0.6)) g->set_pin_memory(Chance(0.5));
  if (Chance(0.3)) g->set_optimizer(v1::OPTIMIZER_NONE);
}

void LayoutGenerator::Break(LayoutFault fault, v1::LayoutRequest* r) {
  if (fault == LayoutFault::kNone) return;
  if (fault == LayoutFault::kFrozenLength) {
    const int n = r->search().numels_size();
    r->clear_frozen();
    const int wrong = n > 1 && Chance(0.5) ? n - 1 : n + 1;
    for (int i = 0; i < wrong; ++i) r->add_frozen(Chance(0.3));
    return;
  }
  if (r->configs_size() == 0) SetConfigs(r);
  auto* configs = r->mutable_configs();
  const int k = static_cast<int>(Uniform(0, configs->size() - 1));
  switch (fault) {
    case LayoutFault::kAbsentDegree: {
      uint32_t absent = 1;
      for (const auto& c : *configs) absent = std::max(absent, c.dp_degree());
      v1::ChunkConfig extra;
      extra.set_dp_degree(absent + static_cast<uint32_t>(Uniform(1, 9)));
      extra.set_chunk_size(extra.dp_degree() * Uniform(1, 1000));
      *configs->Add() = extra;
      // Moved to a random position.
      for (int i = configs->size() - 1; i > k; --i)
        configs->SwapElements(i, i - 1);
      return;
    }
    case LayoutFault::kMissingDegree:
      configs->DeleteSubrange(k, 1);
      return;
    case LayoutFault::kTwoConfigs: {
      const v1::ChunkConfig twin = configs->Get(k);
      *configs->Add() = twin;
      return;
    }
    case LayoutFault::kZeroChunk:
      configs->Mutable(k)->set_chunk_size(0);
      return;
    case LayoutFault::kNotAMultiple: {
      // On a config of a degree above 1 (Next makes sure there is one).
      int above_one = 0;
      while (configs->Get(above_one).dp_degree() == 1) ++above_one;
      v1::ChunkConfig* c = configs->Mutable(above_one);
      c->set_keep_gathered(false);
      c->set_chunk_size(c->dp_degree() * Uniform(1, 1000) + 1);
      return;
    }
    case LayoutFault::kNone:
    case LayoutFault::kFrozenLength:
      return;
  }
}

GeneratedLayout LayoutGenerator::Next(LayoutFault fault) {
  GeneratedLayout g;
  const GeneratedRequest search = search_.Next();
  g.shape = search.shape;
  *g.request.mutable_search() = search.request;
  if (Chance(0.45)) SetConfigs(&g.request);
  SetFrozen(&g.request);
  SetGemini(&g.request);
  if (fault == LayoutFault::kNone && Chance(0.12)) {
    fault = static_cast<LayoutFault>(Uniform(1, kNumLayoutFaults - 1));
  }
  // Faults that the request's degrees cannot show become another fault.
  const std::vector<DegreeGroup> groups = Groups(g.request.search());
  if (fault == LayoutFault::kMissingDegree && groups.size() < 2) {
    fault = LayoutFault::kAbsentDegree;
  }
  if (fault == LayoutFault::kNotAMultiple &&
      std::none_of(groups.begin(), groups.end(),
                   [](const DegreeGroup& d) { return d.degree > 1; })) {
    fault = LayoutFault::kZeroChunk;
  }
  Break(fault, &g.request);
  g.fault = fault;
  return g;
}

}  // namespace chunkplan::testing
