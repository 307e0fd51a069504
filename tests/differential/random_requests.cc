#include "tests/differential/random_requests.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace chunkplan::testing {
namespace {

// Degrees of the ordinary shapes.
const std::vector<uint32_t> kDegreePool = {1, 2, 3, 4, 5, 6, 7, 8, 16, 32};
// Matrix sides of model-like sizes.
constexpr std::array<uint64_t, 11> kDims = {64,   128,  256,  384,  512, 768,
                                            1024, 1536, 2048, 3072, 4096};
// Hidden sizes, the interval the seed's docstring recommends.
constexpr std::array<uint64_t, 6> kHidden = {16, 64, 128, 768, 1024, 4096};

// The draw weights of the shapes, in enum order (per mille).
constexpr std::array<double, kNumShapes> kShapeWeights = {
    208,  // kMixed
    90,   // kZeros
    80,   // kEqual
    90,   // kOutliers
    110,  // kCoprimeDegrees
    100,  // kGathered
    200,  // kLimit
    80,   // kEmptiedGroup
    35,   // kOver8192
    7,    // kHundredThousand
};

}  // namespace

absl::string_view ShapeName(Shape shape) {
  switch (shape) {
    case Shape::kMixed:
      return "mixed";
    case Shape::kZeros:
      return "zeros";
    case Shape::kEqual:
      return "equal";
    case Shape::kOutliers:
      return "outliers";
    case Shape::kCoprimeDegrees:
      return "coprime_degrees";
    case Shape::kGathered:
      return "gathered";
    case Shape::kLimit:
      return "limit";
    case Shape::kEmptiedGroup:
      return "emptied_group";
    case Shape::kOver8192:
      return "over_8192";
    case Shape::kHundredThousand:
      return "hundred_thousand";
  }
  return "unknown";
}

uint64_t RequestGenerator::Uniform(uint64_t lo, uint64_t hi) {
  return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
}

bool RequestGenerator::Chance(double p) {
  return std::bernoulli_distribution(p)(rng_);
}

uint64_t RequestGenerator::ModelSize() {
  const uint64_t p = Uniform(0, 99);
  if (p < 5) return 0;
  if (p < 30) return Uniform(1, 1024);
  if (p < 60) return Uniform(1025, uint64_t{1} << 20);
  if (p < 85) {
    return kDims[Uniform(0, kDims.size() - 1)] *
           kDims[Uniform(0, kDims.size() - 1)] * Uniform(1, 4);
  }
  return Uniform(uint64_t{1} << 20, uint64_t{1} << 26);
}

double RequestGenerator::MebiValue(uint64_t elements) {
  const uint64_t p = Uniform(0, 99);
  if (p < 55) return std::ldexp(static_cast<double>(elements), -20);
  if (p < 80) {
    // Exactly half-way: Python's round goes to the even neighbour.
    return std::ldexp(static_cast<double>(2 * elements + 1), -21);
  }
  // Not a dyadic fraction of an element; rounds to `elements` (a tiny
  // negative value rounds to -0).
  const double jitter =
      std::uniform_real_distribution<double>(-0.45, 0.45)(rng_);
  return std::ldexp(static_cast<double>(elements) + jitter, -20);
}

uint64_t RequestGenerator::CandidatesFor(size_t swept_sizes) {
  // The Python oracle takes about 30 ns per size and candidate.
  const uint64_t steps = Uniform(2000, 200000);
  const uint64_t n = std::max<uint64_t>(swept_sizes, 1);
  return std::clamp<uint64_t>(steps / n, 1, 4096);
}

void RequestGenerator::SetGrid(uint64_t max_candidates,
                               v1::ChunkSearchRequest* r) {
  const uint64_t mode = Uniform(0, 99);
  uint64_t interval = 1;
  uint64_t range = 0;
  if (mode < 25) {  // interval 1
    range = Uniform(1, max_candidates) - 1;
  } else if (mode < 45) {  // interval larger than the range
    interval = Uniform(2, uint64_t{1} << Uniform(1, 30));
    range = Uniform(0, interval - 1);
  } else if (mode < 55) {  // range 0
    interval = Uniform(1, uint64_t{1} << Uniform(0, 30));
  } else {
    interval = Chance(0.5) ? kHidden[Uniform(0, kHidden.size() - 1)]
                           : Uniform(2, 50000);
    range =
        (Uniform(1, max_candidates) - 1) * interval + Uniform(0, interval - 1);
  }
  r->set_search_interval(interval);
  r->set_search_range_m(MebiValue(range));
}

void RequestGenerator::SetMinimum(uint64_t largest_size,
                                  v1::ChunkSearchRequest* r) {
  const uint64_t p = Uniform(0, 99);
  if (p < 35) {
    r->set_min_chunk_size_m(0);
  } else if (p < 50) {
    r->clear_min_chunk_size_m();  // the default, 32
  } else if (p < 75) {
    r->set_min_chunk_size_m(MebiValue(Uniform(0, 2 * largest_size + 1)));
  } else if (p < 90) {
    r->set_min_chunk_size_m(
        std::ldexp(static_cast<double>(2 * Uniform(0, 1 << 20) + 1), -21));
  } else {
    r->set_min_chunk_size_m(MebiValue(Uniform(0, largest_size)));
  }
}

void RequestGenerator::SetFilter(bool keep_on, v1::ChunkSearchRequest* r) {
  const uint64_t p = Uniform(0, 99);
  if (keep_on) {
    if (p < 75) {
      r->set_filter_exlarge_params(true);
    } else {
      r->clear_filter_exlarge_params();
    }
    return;
  }
  if (p < 55) {
    r->set_filter_exlarge_params(true);
  } else if (p < 75) {
    r->clear_filter_exlarge_params();
  } else {
    r->set_filter_exlarge_params(false);
  }
}

void RequestGenerator::SetDegrees(const std::vector<uint32_t>& pool, size_t n,
                                  v1::ChunkSearchRequest* r) {
  r->clear_dp_degrees();
  const uint64_t p = Uniform(0, 99);
  if (p < 35) return;  // all 1
  if (p < 50) {
    r->add_dp_degrees(pool[Uniform(0, pool.size() - 1)]);
    return;
  }
  std::vector<uint32_t> chosen = pool;
  std::shuffle(chosen.begin(), chosen.end(), rng_);
  chosen.resize(Uniform(1, std::min<size_t>(5, pool.size())));
  for (size_t i = 0; i < n; ++i) {
    r->add_dp_degrees(chosen[Uniform(0, chosen.size() - 1)]);
  }
}

void RequestGenerator::Mixed(GeneratedRequest* g) {
  v1::ChunkSearchRequest* r = &g->request;
  const size_t n = Uniform(1, 300);
  uint64_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    r->add_numels(ModelSize());
    largest = std::max(largest, r->numels(i));
  }
  SetDegrees(kDegreePool, n, r);
  SetGrid(CandidatesFor(n), r);
  SetMinimum(largest, r);
  SetFilter(false, r);
}

void RequestGenerator::Zeros(GeneratedRequest* g) {
  v1::ChunkSearchRequest* r = &g->request;
  const size_t n = Uniform(1, 200);
  const bool all_zero = Chance(0.15);
  const double zero_share =
      std::uniform_real_distribution<double>(0.3, 0.9)(rng_);
  uint64_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t size = all_zero || Chance(zero_share) ? 0 : ModelSize();
    r->add_numels(size);
    largest = std::max(largest, size);
  }
  SetDegrees(kDegreePool, n, r);
  SetGrid(CandidatesFor(n), r);
  SetMinimum(largest, r);
  SetFilter(false, r);
}

void RequestGenerator::Equal(GeneratedRequest* g) {
  v1::ChunkSearchRequest* r = &g->request;
  const size_t n = Uniform(1, 400);
  const uint64_t size = Chance(0.05) ? 0 : ModelSize();
  for (size_t i = 0; i < n; ++i) r->add_numels(size);
  SetDegrees(kDegreePool, n, r);
  SetGrid(CandidatesFor(n), r);
  SetMinimum(size, r);
  SetFilter(true, r);
}

void RequestGenerator::Outliers(GeneratedRequest* g) {
  v1::ChunkSearchRequest* r = &g->request;
  std::vector<uint64_t> sizes(Uniform(20, 300));
  for (uint64_t& s : sizes) s = Uniform(1, 1 << 16);
  const size_t outliers = Uniform(1, 3);
  for (size_t i = 0; i < outliers; ++i) {
    const size_t at = Uniform(0, sizes.size());
    sizes.insert(sizes.begin() + static_cast<ptrdiff_t>(at),
                 Uniform(uint64_t{1} << 30, uint64_t{1} << 40));
  }
  for (uint64_t s : sizes) r->add_numels(s);
  SetDegrees(kDegreePool, sizes.size(), r);
  SetGrid(CandidatesFor(sizes.size()), r);
  SetMinimum(1 << 16, r);
  SetFilter(true, r);
}

void RequestGenerator::CoprimeDegrees(GeneratedRequest* g) {
  v1::ChunkSearchRequest* r = &g->request;
  const std::vector<uint32_t> pool =
      Chance(0.5) ? std::vector<uint32_t>{2, 3, 5, 7}
                  : std::vector<uint32_t>{1, 2, 3, 5, 7, 11, 13};
  const size_t n = Uniform(pool.size(), 200);
  std::vector<uint32_t> degrees(pool);  // every degree at least once
  while (degrees.size() < n)
    degrees.push_back(pool[Uniform(0, pool.size() - 1)]);
  std::shuffle(degrees.begin(), degrees.end(), rng_);
  uint64_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    r->add_numels(ModelSize());
    r->add_dp_degrees(degrees[i]);
    largest = std::max(largest, r->numels(i));
  }
  SetGrid(CandidatesFor(n), r);
  SetMinimum(largest, r);
  SetFilter(false, r);
}

void RequestGenerator::Gathered(GeneratedRequest* g) {
  v1::ChunkSearchRequest* r = &g->request;
  std::vector<uint32_t> degrees = kDegreePool;
  std::shuffle(degrees.begin(), degrees.end(), rng_);
  degrees.resize(Uniform(2, 5));
  std::vector<std::pair<uint32_t, uint64_t>> params;
  std::vector<uint64_t> totals;
  for (uint32_t degree : degrees) {
    const uint64_t scale = uint64_t{1} << Uniform(2, 22);
    uint64_t total = 0;
    for (uint64_t i = Uniform(1, 60); i > 0; --i) {
      const uint64_t size = Uniform(0, scale);
      params.emplace_back(degree, size);
      total += size;
    }
    totals.push_back(total);
  }
  std::shuffle(params.begin(), params.end(), rng_);
  for (const auto& [degree, size] : params) {
    r->add_numels(size);
    r->add_dp_degrees(degree);
  }
  const uint64_t smallest = *std::min_element(totals.begin(), totals.end());
  const uint64_t largest = *std::max_element(totals.begin(), totals.end());
  if (smallest < largest && Chance(0.7)) {
    // Some groups below the minimum, the largest at or above it.
    r->set_min_chunk_size_m(
        std::ldexp(static_cast<double>(Uniform(smallest + 1, largest)), -20));
  } else if (largest < (uint64_t{32} << 20) && Chance(0.5)) {
    r->clear_min_chunk_size_m();  // 32 Mi: every group gathered
  } else {
    r->set_min_chunk_size_m(MebiValue(largest + Uniform(1, 1000)));
  }
  SetGrid(CandidatesFor(params.size()), r);
  SetFilter(false, r);
}

void RequestGenerator::Limit(GeneratedRequest* g, uint64_t k, bool reveal) {
  // 9k sizes a and k sizes a + d: mean a + d/10, std 0.3 d, so mean + 3 std
  // is a + d exactly in real arithmetic and numpy's rounding decides. One of
  // the top sizes may be one above (a + d + 1 above a limit that moves by
  // about 10/n) or one below (a + d - 1 pulls the limit below a + d).
  // d of a's magnitude or more makes the rounding matter (with d << a the
  // limit lands on a + d); beyond one numpy buffer, sizes of 2^38 and more
  // make the float sums inexact, so the order numpy adds in matters too.
  v1::ChunkSearchRequest* r = &g->request;
  const bool large = 10 * k > 8192;
  const int amag = static_cast<int>(large ? Uniform(38, 44) : Uniform(0, 46));
  const int dmag = static_cast<int>(Uniform(amag, large ? 45 : 46));
  const uint64_t a = Uniform(0, uint64_t{1} << amag);
  const uint64_t d = Uniform(1, uint64_t{1} << dmag);
  int offset = 0;
  const uint64_t p = Uniform(0, 99);
  if (p >= 50) offset = (p < 75 || k < 2) ? 1 : -1;
  std::vector<uint64_t> sizes(9 * k, a);
  sizes.insert(sizes.end(), k - 1, a + d);
  sizes.push_back(offset < 0 ? a + d - 1 : a + d + offset);
  std::shuffle(sizes.begin(), sizes.end(), rng_);
  for (uint64_t s : sizes) r->add_numels(s);
  g->probe = a + d + (offset > 0 ? 1 : 0);
  g->probe_offset = offset;
  g->reveals_probe = reveal;
  if (reveal) {
    // One degree, interval 1, one candidate, minimum 0: the chunk size is
    // the largest size kept.
    r->set_search_interval(1);
    r->set_search_range_m(MebiValue(0));
    r->set_min_chunk_size_m(MebiValue(0));
    SetFilter(true, r);
    return;
  }
  SetDegrees(kDegreePool, sizes.size(), r);
  SetGrid(CandidatesFor(sizes.size()), r);
  SetMinimum(a + d, r);
  SetFilter(true, r);
}

void RequestGenerator::EmptiedGroup(GeneratedRequest* g) {
  // Degree B holds only one or two sizes above 2^30 (within 10% of each
  // other) among at least 40 sizes of at most 1000: both lie more than 3.7
  // std above the mean, so the filter empties B.
  v1::ChunkSearchRequest* r = &g->request;
  std::vector<uint32_t> degrees = kDegreePool;
  std::shuffle(degrees.begin(), degrees.end(), rng_);
  std::vector<std::pair<uint32_t, uint64_t>> params;
  for (uint64_t i = Uniform(40, 200); i > 0; --i) {
    params.emplace_back(degrees[0], Uniform(1, 1000));
  }
  if (Chance(0.5)) {
    for (uint64_t i = Uniform(1, 100); i > 0; --i) {
      params.emplace_back(degrees[2], Uniform(1, 1000));
    }
  }
  const uint64_t big = Uniform(uint64_t{1} << 30, uint64_t{1} << 38);
  params.emplace_back(degrees[1], big);
  if (Chance(0.5))
    params.emplace_back(degrees[1], Uniform(big, big + big / 10));
  std::shuffle(params.begin(), params.end(), rng_);
  for (const auto& [degree, size] : params) {
    r->add_numels(size);
    r->add_dp_degrees(degree);
  }
  // At most 30: the 40+ small sizes of degrees[0] stay in the sweep.
  r->set_min_chunk_size_m(Chance(0.5) ? 0.0 : MebiValue(Uniform(0, 29)));
  SetGrid(CandidatesFor(params.size()), r);
  SetFilter(true, r);
  g->empties_a_group = true;
}

void RequestGenerator::Large(GeneratedRequest* g, size_t n) {
  if (n % 10 == 0 && Chance(0.7)) {
    Limit(g, n / 10, /*reveal=*/true);
    return;
  }
  v1::ChunkSearchRequest* r = &g->request;
  uint64_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    r->add_numels(ModelSize());
    largest = std::max(largest, r->numels(i));
  }
  SetDegrees(kDegreePool, n, r);
  SetGrid(2, r);  // a 100,000-size sweep costs the oracle ~3 ms a candidate
  SetMinimum(largest, r);
  SetFilter(true, r);
}

GeneratedRequest RequestGenerator::Next(Shape shape) {
  GeneratedRequest g;
  g.shape = shape;
  switch (shape) {
    case Shape::kMixed:
      Mixed(&g);
      break;
    case Shape::kZeros:
      Zeros(&g);
      break;
    case Shape::kEqual:
      Equal(&g);
      break;
    case Shape::kOutliers:
      Outliers(&g);
      break;
    case Shape::kCoprimeDegrees:
      CoprimeDegrees(&g);
      break;
    case Shape::kGathered:
      Gathered(&g);
      break;
    case Shape::kLimit:
      Limit(&g, Uniform(1, 60), /*reveal=*/Chance(0.7));
      break;
    case Shape::kEmptiedGroup:
      EmptiedGroup(&g);
      break;
    case Shape::kOver8192:
      Large(&g, 10 * Uniform(820, 4000));
      break;
    case Shape::kHundredThousand:
      Large(&g, 100000);
      break;
  }
  return g;
}

GeneratedRequest RequestGenerator::Next() {
  std::discrete_distribution<int> pick(kShapeWeights.begin(),
                                       kShapeWeights.end());
  return Next(static_cast<Shape>(pick(rng_)));
}

}  // namespace chunkplan::testing
