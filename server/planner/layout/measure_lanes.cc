#include "server/planner/layout/measure_lanes.h"

namespace chunkplan::planner {
namespace {

#if defined(__GNUC__)
// kMeasureLanes candidates in one GCC vector (LaneWalk's V).
typedef uint64_t Lanes __attribute__((vector_size(kMeasureLanes * 8)));
#endif

}  // namespace

// GCC only: clang-14 takes the attribute on this definition (declared
// without it in the header) as the first clone's target alone and emits
// AVX-512 code with no resolver, which dies of SIGILL on a CPU without it
// (the sanitized tree, scripts/configure-sanitized.sh, is clang's).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__ELF__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void MeasureLanes(const LayoutArrays& a, const uint64_t* rounded,
                  LayoutValues* out) {
#if defined(__GNUC__)
  MeasureLayout<Lanes>(a, rounded, out);
#else
  for (int l = 0; l < kMeasureLanes; ++l) {
    MeasureLayout<uint64_t>(a, rounded + l, out + l);
  }
#endif
}

}  // namespace chunkplan::planner
