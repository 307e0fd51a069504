#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_PLACEMENTS_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_PLACEMENTS_H_

// Fresh random LayoutRequests for the placement differential test: small
// models with given configs (a few chunks per group, so that the oracle can
// try every order), uniform and mixed chunk sizes, kept-gathered groups and
// frozen parameters, under every placement: static with each fraction at 0,
// 1, a random value or an exact threshold (where one more chunk is
// offloaded, released or moved: the fraction that makes the budget a sum of
// chunk bytes, and its neighbouring doubles), offload_param_frac honoured
// and zeroed, and auto with and without device memory. A share carries one
// fault (a fraction outside [0, 1] or NaN, a field of the other policy).

#include <cstdint>
#include <random>

#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::testing {

// The policy and setting a generated request exercises.
enum class PlacementCase {
  kDefault,  // nothing set
  kOptim,    // static, offload_optim_frac
  kShard,    // static, shard_param_frac (and perhaps optim)
  kParam,    // static, offload_param_frac honoured or zeroed
  kAuto,     // auto
  kFault,    // a field the service must refuse
};
inline constexpr int kNumPlacementCases = 6;

struct GeneratedPlacement {
  v1::LayoutRequest request;
  PlacementCase kind = PlacementCase::kDefault;
  bool threshold = false;  // a fraction set at an exact threshold
};

// Deterministic for a seed.
class PlacementGenerator {
 public:
  explicit PlacementGenerator(uint64_t seed) : rng_(seed) {}

  GeneratedPlacement Next();

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi);  // inclusive
  bool Chance(double p);
  void SetModel(v1::LayoutRequest* r);
  // A fraction: 0, 1, random, or (with `weights` the chunks' bytes and
  // `total` the inflated total) one at a threshold; `threshold` set then.
  double Fraction(const std::vector<uint64_t>& weights, double total,
                  bool complement, bool* threshold);

  std::mt19937_64 rng_;
};

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_PLACEMENTS_H_
