#ifndef CHUNKPLAN_PLANNER_SEARCH_WORK_H_
#define CHUNKPLAN_PLANNER_SEARCH_WORK_H_

// What a Search will cost, and whether CPU_PLATEAU serves it on every
// machine, from the request's fields alone: for a caller that schedules
// searches (the service runs a cheap CPU_PLATEAU search on the callback
// thread that received it).

#include <cstdint>

#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

// An upper bound on the sweep work (candidates x swept sizes) of `request`'s
// search, from its fields alone and in constant time: (round(search_range_m
// * 2^20) / search_interval + 1) x max(1, numels.size()) (the filter and the
// kept-gathered groups only remove sizes). UINT64_MAX where search_range_m
// or search_interval would be refused, or the product overflows.
uint64_t SweepWorkBound(const SearchRequest& request);

// Whether CPU_PLATEAU serves `request` whatever the machine, `work_bound`
// being SweepWorkBound(request): it is asked by name, or AUTO is asked and
// the bound is below the work at which AUTO may pick CUDA (2^30 steps).
bool CpuPlateauServes(const SearchRequest& request, uint64_t work_bound);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_SEARCH_WORK_H_
