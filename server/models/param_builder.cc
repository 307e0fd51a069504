#include "server/models/param_builder.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/models/tp_shard.h"

namespace chunkplan::models {
namespace {

// Whether the parameter `name` is `entry` itself or a parameter of the
// module `entry` ("a.b" holds "a.b.weight", not "a.b.c.weight").
bool Names(absl::string_view name, absl::string_view entry) {
  if (name == entry) return true;
  return absl::StartsWith(name, entry) && name.size() > entry.size() &&
         name[entry.size()] == '.' &&
         name.substr(entry.size() + 1).find('.') == absl::string_view::npos;
}

}  // namespace

ParamBuilder::ParamBuilder(uint64_t max_params, bool store)
    : max_params_(max_params), store_(store) {}

void ParamBuilder::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

void ParamBuilder::Add(absl::string_view name,
                       std::initializer_list<uint64_t> dims) {
  if (!status_.ok()) return;
  if (count_ >= max_params_) {
    Fail(absl::ResourceExhaustedError(absl::StrCat(
        "config: the model has more than ", max_params_,
        " parameters (tensors), the most a request may have (--max_params)")));
    return;
  }
  std::vector<uint64_t> local;  // tp rank 0's dims, where sharding
  if (tp_policy_ != nullptr) {
    const std::string full = absl::StrCat(prefix_, name);
    const size_t dot = full.rfind('.');
    const absl::string_view path(full);
    absl::StatusOr<std::vector<uint64_t>> shard = TpLocalDims(
        *tp_policy_, tp_, dot == std::string::npos ? "" : path.substr(0, dot),
        path.substr(dot + 1), std::vector<uint64_t>(dims));
    if (!shard.ok()) {
      Fail(shard.status());
      return;
    }
    local = *std::move(shard);
  }
  uint64_t numel = 1;
  bool overflow = false;
  const auto multiply = [&](uint64_t dim) {
    overflow = overflow || __builtin_mul_overflow(numel, dim, &numel);
  };
  if (tp_policy_ != nullptr) {
    for (uint64_t dim : local) multiply(dim);
  } else {
    for (uint64_t dim : dims) multiply(dim);
  }
  if (overflow) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "config: parameter ", prefix_, name, " of shape [",
        absl::StrJoin(dims, ", "), "] has more than 2^64 - 1 ", "elements")));
    return;
  }
  if (__builtin_add_overflow(total_, numel, &total_)) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "config: the model's total passes 2^64 - 1 elements at parameter ",
        prefix_, name)));
    return;
  }
  ++count_;
  if (store_) {
    names_.push_back(absl::StrCat(prefix_, name));
    numels_.push_back(numel);
  }
}

void ParamBuilder::ShardFor(const TpPolicy& policy, uint32_t tp) {
  tp_policy_ = &policy;
  tp_ = tp;
}

void ParamBuilder::Repeat(absl::string_view part, uint64_t n,
                          absl::FunctionRef<void(uint64_t)> body) {
  if (!status_.ok()) return;
  if (n > max_params_ - count_) {
    Fail(absl::ResourceExhaustedError(absl::StrCat(
        "config: the model has more than ", max_params_,
        " parameters (tensors), the most a request may have (--max_params): ",
        n, " ", prefix_, part, " of at least one parameter each")));
    return;
  }
  const bool outermost = repeat_depth_++ == 0;
  for (uint64_t i = 0; i < n && status_.ok(); ++i) {
    if (outermost) layer_ = static_cast<int64_t>(i);
    In(absl::StrCat(part, ".", i), [&] { body(i); });
  }
  if (outermost) layer_ = -1;
  --repeat_depth_;
}

void ParamBuilder::Linear(absl::string_view name, uint64_t in, uint64_t out,
                          absl::FunctionRef<void()> add_params) {
  const size_t first = names_.size();
  In(name, add_params);
  if (!store_ || !status_.ok()) return;
  linears_.push_back({absl::StrCat(prefix_, name), in, out, first,
                      names_.size() - first, repeat_depth_ > 0});
}

void ParamBuilder::In(absl::string_view part, absl::FunctionRef<void()> body) {
  const size_t size = prefix_.size();
  const size_t begin = scope_begin_;
  if (!part.empty()) {
    absl::StrAppend(&prefix_, part, ".");
    scope_begin_ = names_.size();
  }
  body();
  prefix_.resize(size);
  scope_begin_ = begin;
}

void ParamBuilder::Op(std::initializer_list<absl::string_view> entries) {
  if (!status_.ok() || !store_) return;
  std::vector<uint64_t> params;
  for (absl::string_view entry : entries) {
    const std::string path = absl::StrCat(prefix_, entry);
    // A module's own parameters are registered one after another: the run
    // nearest the end of the scope.
    size_t end = names_.size();
    while (end > scope_begin_ && !Names(names_[end - 1], path)) --end;
    size_t begin = end;
    while (begin > scope_begin_ && Names(names_[begin - 1], path)) --begin;
    if (begin == end) {
      Fail(absl::InternalError(
          absl::StrCat("the operation sequence names ", path,
                       ", no parameter or module with parameters in scope")));
      return;
    }
    for (size_t i = begin; i < end; ++i) params.push_back(i);
  }
  operations_.push_back(std::move(params));
  operation_layers_.push_back(layer_);
}

}  // namespace chunkplan::models
