#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_REQUESTS_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_REQUESTS_H_

// Fresh random chunk search requests for the differential test: valid
// requests (the oracle and the planner both answer them) shaped to reach the
// seed's corners -- zeros, equal sizes, outliers, coprime degrees, gathered
// groups, sizes at the filter's limit, groups the filter empties, sweeps over
// more than one numpy buffer -- with the sweep kept small enough for the
// Python oracle.

#include <cstdint>
#include <random>

#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::testing {

// What a generated request is built to exercise.
enum class Shape {
  kMixed,            // model-like sizes, random degrees and settings
  kZeros,            // many (sometimes all) sizes 0
  kEqual,            // every size equal: std 0
  kOutliers,         // a few sizes far above the rest: the filter drops them
  kCoprimeDegrees,   // degrees from {2, 3, 5, 7, ...}: lcm rounding
  kGathered,         // minimum between group totals, or above all of them
  kLimit,            // 9k sizes a, k sizes a+d (one maybe +-1): the limit
  kEmptiedGroup,     // a degree whose only sizes are outliers (the extension)
  kOver8192,         // more than one numpy buffer of sizes
  kHundredThousand,  // 100,000 sizes
};
inline constexpr int kNumShapes = 10;

// "mixed", "zeros", ... for reports.
absl::string_view ShapeName(Shape shape);

struct GeneratedRequest {
  v1::ChunkSearchRequest request;
  Shape shape = Shape::kMixed;
  // True when the answer's chunk size is the largest size the filter kept
  // (one degree, interval 1, range 0, minimum 0), and `probe` is the largest
  // size present: the answer shows whether the filter kept it.
  bool reveals_probe = false;
  uint64_t probe = 0;
  // Where `probe` sits in real arithmetic: 0 exactly at mean + 3 std, +1 one
  // above the values at the limit, -1 at a limit that one size one below
  // pulled down.
  int probe_offset = 0;
  // kEmptiedGroup: the seed itself (the oracle with --strict) must crash.
  bool empties_a_group = false;
};

// Deterministic for a seed.
class RequestGenerator {
 public:
  explicit RequestGenerator(uint64_t seed) : rng_(seed) {}

  // The next request, of the given shape.
  GeneratedRequest Next(Shape shape);

  // The next request, of a shape drawn with fixed weights.
  GeneratedRequest Next();

 private:
  using Rng = std::mt19937_64;

  uint64_t Uniform(uint64_t lo, uint64_t hi);  // inclusive
  bool Chance(double p);
  uint64_t ModelSize();
  // Interval and range with at most about `max_candidates` grid points.
  void SetGrid(uint64_t max_candidates, v1::ChunkSearchRequest* r);
  // An _m value that rounds to `elements` (or, half-way, to a neighbour).
  double MebiValue(uint64_t elements);
  void SetMinimum(uint64_t largest_size, v1::ChunkSearchRequest* r);
  void SetFilter(bool keep_on, v1::ChunkSearchRequest* r);
  void SetDegrees(const std::vector<uint32_t>& pool, size_t n,
                  v1::ChunkSearchRequest* r);
  uint64_t CandidatesFor(size_t swept_sizes);

  void Mixed(GeneratedRequest* g);
  void Zeros(GeneratedRequest* g);
  void Equal(GeneratedRequest* g);
  void Outliers(GeneratedRequest* g);
  void CoprimeDegrees(GeneratedRequest* g);
  void Gathered(GeneratedRequest* g);
  void Limit(GeneratedRequest* g, uint64_t k, bool reveal);
  void EmptiedGroup(GeneratedRequest* g);
  void Large(GeneratedRequest* g, size_t n);

  Rng rng_;
};

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_REQUESTS_H_
