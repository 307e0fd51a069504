#include "server/planner/layout/offload_order.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace chunkplan::planner {
namespace {

// The chunks of one size, in the order the extreme takes them: each
// prefix of k is the best k of the size.
struct SizeClass {
  WideBytes weight = 0;
  std::vector<OffloadItem> items;
  std::vector<WideBytes> saving_prefix;  // of the first k, k = 0..n
  std::vector<WideBytes> host_prefix;
  uint64_t free_savings = 0;  // items whose saving is 0 (kMostDevice)
  uint64_t paying = 0;        // items whose saving is > 0 (kLeastDevice)
};

std::vector<SizeClass> ClassesOf(const std::vector<OffloadItem>& items,
                                 OffloadExtreme extreme) {
  std::vector<OffloadItem> sorted = items;
  const bool most = extreme == OffloadExtreme::kMostDevice;
  std::sort(sorted.begin(), sorted.end(),
            [most](const OffloadItem& a, const OffloadItem& b) {
              if (a.weight != b.weight) return a.weight < b.weight;
              if (a.saving != b.saving) {
                return most ? a.saving < b.saving : a.saving > b.saving;
              }
              if (a.host != b.host)
                return most ? a.host > b.host : a.host < b.host;
              return a.index < b.index;
            });
  std::vector<SizeClass> classes;
  for (const OffloadItem& item : sorted) {
    if (classes.empty() || classes.back().weight != item.weight) {
      SizeClass fresh;
      fresh.weight = item.weight;
      fresh.saving_prefix = {0};
      fresh.host_prefix = {0};
      classes.push_back(std::move(fresh));
    }
    SizeClass& c = classes.back();
    c.items.push_back(item);
    c.saving_prefix.push_back(c.saving_prefix.back() + item.saving);
    c.host_prefix.push_back(c.host_prefix.back() + item.host);
    (item.saving == 0 ? c.free_savings : c.paying) += 1;
  }
  return classes;
}

// Whether (saving, host) is better than the best so far for `extreme`.
bool Better(WideBytes saving, WideBytes host, WideBytes best_saving,
            WideBytes best_host, OffloadExtreme extreme) {
  if (extreme == OffloadExtreme::kMostDevice) {
    return saving < best_saving || (saving == best_saving && host > best_host);
  }
  return saving > best_saving || (saving == best_saving && host < best_host);
}

// The search over how many chunks of each size are offloaded, the largest
// chunk offloaded being of class `top`: every class but `free` is counted
// out; `free`'s count follows from the budget (docs/placement.md).
class CountSearch {
 public:
  CountSearch(const std::vector<SizeClass>& classes, WideBytes budget,
              OffloadExtreme extreme)
      : classes_(classes),
        budget_(budget),
        extreme_(extreme),
        counts_(classes.size(), 0),
        best_(classes.size(), 0) {}

  absl::Status Run() {
    for (size_t top = 0; top < classes_.size(); ++top) {
      top_ = top;
      free_ = 0;
      for (size_t i = 1; i <= top; ++i) {
        if (classes_[i].items.size() > classes_[free_].items.size()) free_ = i;
      }
      std::fill(counts_.begin(), counts_.end(), 0);
      if (absl::Status s = Visit(0, 0); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  bool found() const { return found_; }
  const std::vector<uint64_t>& best() const { return best_; }

 private:
  uint64_t Low(size_t i) const { return i == top_ ? 1 : 0; }

  absl::Status Visit(size_t i, WideBytes sum) {
    const WideBytes top_weight = classes_[top_].weight;
    // sum(S) - max(S) < budget: adding chunks only raises the sum.
    if (sum >= budget_ + top_weight) return absl::OkStatus();
    if (i > top_) return Settle(sum);
    if (i == free_) return Visit(i + 1, sum);
    const SizeClass& c = classes_[i];
    for (uint64_t k = Low(i); k <= c.items.size(); ++k) {
      const WideBytes with = sum + c.weight * k;
      if (with >= budget_ + top_weight) break;
      counts_[i] = k;
      if (absl::Status s = Visit(i + 1, with); !s.ok()) return s;
    }
    counts_[i] = 0;
    return absl::OkStatus();
  }

  // The free class's best count given the others' sum.
  absl::Status Settle(WideBytes sum) {
    if (++visits_ > kMaxOffloadCombinations) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "gemini.offload_optim_frac: the extremes over every chunk order "
          "need more than ",
          kMaxOffloadCombinations, " combinations of ", classes_.size(),
          " chunk sizes"));
    }
    const SizeClass& f = classes_[free_];
    const WideBytes w = f.weight;
    const WideBytes ceiling = budget_ + classes_[top_].weight - 1 - sum;
    WideBytes lo = Low(free_);
    if (budget_ > sum) lo = std::max(lo, (budget_ - sum + w - 1) / w);
    WideBytes hi = std::min<WideBytes>(f.items.size(), ceiling / w);
    if (lo > hi && AllTaken(sum)) lo = hi = f.items.size();
    if (lo > hi) return absl::OkStatus();
    const WideBytes pivot =
        extreme_ == OffloadExtreme::kMostDevice ? f.free_savings : f.paying;
    counts_[free_] = static_cast<uint64_t>(std::clamp(pivot, lo, hi));
    WideBytes saving = 0, host = 0;
    for (size_t i = 0; i <= top_; ++i) {
      saving += classes_[i].saving_prefix[counts_[i]];
      host += classes_[i].host_prefix[counts_[i]];
    }
    if (!found_ || Better(saving, host, best_saving_, best_host_, extreme_)) {
      found_ = true;
      best_saving_ = saving;
      best_host_ = host;
      best_ = counts_;
    }
    counts_[free_] = 0;
    return absl::OkStatus();
  }

  // Every chunk offloaded (the free class full, the others full, `top` the
  // largest class) with sum(S) - max(S) < budget.
  bool AllTaken(WideBytes sum) const {
    if (top_ + 1 != classes_.size()) return false;
    for (size_t i = 0; i <= top_; ++i) {
      if (i != free_ && counts_[i] != classes_[i].items.size()) return false;
    }
    const SizeClass& f = classes_[free_];
    const WideBytes all = sum + f.weight * f.items.size();
    return all < budget_ + classes_[top_].weight;
  }

  const std::vector<SizeClass>& classes_;
  const WideBytes budget_;
  const OffloadExtreme extreme_;
  size_t top_ = 0;
  size_t free_ = 0;
  std::vector<uint64_t> counts_;
  std::vector<uint64_t> best_;
  WideBytes best_saving_ = 0;
  WideBytes best_host_ = 0;
  bool found_ = false;
  uint64_t visits_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ExtremeOffloadSet(
    const std::vector<OffloadItem>& items, WideBytes budget,
    OffloadExtreme extreme) {
  std::vector<uint64_t> chosen;
  if (budget == 0 || items.empty()) return chosen;
  const std::vector<SizeClass> classes = ClassesOf(items, extreme);
  CountSearch search(classes, budget, extreme);
  if (absl::Status s = search.Run(); !s.ok()) return s;
  for (size_t i = 0; i < classes.size() && search.found(); ++i) {
    for (uint64_t k = 0; k < search.best()[i]; ++k) {
      chosen.push_back(classes[i].items[k].index);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

OffloadCounts CountOffloaded(std::vector<WideBytes> weights, WideBytes budget) {
  OffloadCounts counts;
  if (budget == 0) return counts;
  // Largest first offloads the fewest; smallest first the most.
  std::sort(weights.begin(), weights.end(), std::greater<>());
  for (const WideBytes w : weights) {
    if (counts.least_bytes >= budget) break;
    counts.least_bytes += w;
    ++counts.least;
  }
  WideBytes sum = 0;
  for (auto it = weights.rbegin(); it != weights.rend(); ++it) {
    if (sum >= budget) break;
    sum += *it;
    ++counts.most;
  }
  return counts;
}

}  // namespace chunkplan::planner
