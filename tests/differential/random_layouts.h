#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_LAYOUTS_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_LAYOUTS_H_

// Fresh random LayoutRequests for the layout differential test: the search
// part from RequestGenerator (every shape), then given configs or none,
// frozen flags or none, every GeminiSettings combination, and chunk sizes
// chosen so that tensors larger than the chunk (oversize chunks), zero-size
// tensors, groups whose parameters are all frozen and kept-gathered groups
// of any size all occur. A share of requests carries one fault that
// ColossalAI refuses (LayoutFault), to check that both sides refuse it and
// name the same field.

#include <cstdint>
#include <random>

#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "tests/differential/random_requests.h"

namespace chunkplan::testing {

// The one fault a generated request carries, if any.
enum class LayoutFault {
  kNone,
  kAbsentDegree,   // a config for a degree no parameter has
  kMissingDegree,  // a degree present without a config
  kTwoConfigs,     // two configs for one degree
  kZeroChunk,      // a chunk size of 0
  kNotAMultiple,   // a non-gathered chunk size not a multiple of the degree
  kFrozenLength,   // frozen neither empty nor one per numel
};
inline constexpr int kNumLayoutFaults = 7;

// "none", "absent_degree", ... for reports.
absl::string_view LayoutFaultName(LayoutFault fault);

struct GeneratedLayout {
  v1::LayoutRequest request;
  Shape shape = Shape::kMixed;  // of the search part
  LayoutFault fault = LayoutFault::kNone;
};

// Deterministic for a seed.
class LayoutGenerator {
 public:
  explicit LayoutGenerator(uint64_t seed) : rng_(seed), search_(seed ^ 0x5a) {}

  // The next request; with a fault of the given kind when `fault` is not
  // kNone (kNone: a valid request, or with probability 0.12 one with a
  // random fault).
  GeneratedLayout Next(LayoutFault fault = LayoutFault::kNone);

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi);  // inclusive
  bool Chance(double p);
  // A chunk size for a group of `degree` whose largest tensor has `largest`
  // elements: below it (oversize chunks), near it or well above it; a
  // multiple of `degree` unless `any_size`.
  uint64_t ChunkSize(uint32_t degree, uint64_t largest, bool any_size);
  void SetConfigs(v1::LayoutRequest* r);
  void SetFrozen(v1::LayoutRequest* r);
  void SetGemini(v1::LayoutRequest* r);
  void Break(LayoutFault fault, v1::LayoutRequest* r);

  std::mt19937_64 rng_;
  RequestGenerator search_;
};

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_LAYOUTS_H_
