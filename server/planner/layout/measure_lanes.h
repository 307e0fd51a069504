#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_MEASURE_LANES_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_MEASURE_LANES_H_

// The CPU's pass over several candidates at once: MeasureLayout
// (candidate/layout_measures.h) with kMeasureLanes lanes, compiled for the
// widest vector instructions the CPU has.

#include <cstdint>

#include "server/planner/candidate/layout_measures.h"

namespace chunkplan::planner {

// Candidates measured per pass: one AVX-512 register of 64-bit lanes.
inline constexpr int kMeasureLanes = 8;

// MeasureLayout<kMeasureLanes>(a, rounded, out): the same values. On x86-64
// with GCC or Clang the body is compiled for AVX-512, AVX2 and the baseline,
// and the loader picks the best the CPU runs; elsewhere it is compiled once.
void MeasureLanes(const LayoutArrays& a, const uint64_t* rounded,
                  LayoutValues* out);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_MEASURE_LANES_H_
