#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_ARITH_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_ARITH_H_

// The activation estimate's checked arithmetic and sizes, shared by its
// terms (activation_estimate.cc) and one tp rank's split
// (activation_tp.cc). Internal to the planner.

#include <algorithm>
#include <initializer_list>
#include <optional>

namespace chunkplan::planner::activation {

using Wide = unsigned __int128;
// An exact count, or nullopt once it has passed 2^128-1.
using Checked = std::optional<Wide>;

inline Checked Mul(std::initializer_list<Checked> factors) {
  Checked out = Wide{1};
  for (const Checked& f : factors) {
    Wide product;
    if (!out.has_value() || !f.has_value() ||
        __builtin_mul_overflow(*out, *f, &product)) {
      return std::nullopt;
    }
    out = product;
  }
  return out;
}

inline Checked Sum(std::initializer_list<Checked> terms) {
  Checked out = Wide{0};
  for (const Checked& t : terms) {
    Wide sum;
    if (!out.has_value() || !t.has_value() ||
        __builtin_add_overflow(*out, *t, &sum)) {
      return std::nullopt;
    }
    out = sum;
  }
  return out;
}

inline Checked Max(Checked x, Checked y) {
  if (!x.has_value() || !y.has_value()) return std::nullopt;
  return std::max(*x, *y);
}

// x - y, 0 where y is larger.
inline Checked Less(Checked x, Checked y) {
  if (!x.has_value() || !y.has_value()) return std::nullopt;
  return *x > *y ? *x - *y : 0;
}

// The sizes the terms read: tokens, widths, heads (one tp rank's heads and
// MLP width under tensor parallelism).
struct Dims {
  Wide b, s, bs, h, a, kv, d, inter, v;
  Wide rotary;  // RoPE's width
  Wide e;       // the embedding's and lm_head's width
};

}  // namespace chunkplan::planner::activation

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_ARITH_H_
