#include "server/models/param_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace chunkplan::models {

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
  uint64_t numel = 1;
  for (uint64_t dim : dims) {
    if (__builtin_mul_overflow(numel, dim, &numel)) {
      Fail(absl::InvalidArgumentError(absl::StrCat(
          "config: parameter ", prefix_, name, " of shape [",
          absl::StrJoin(dims, ", "), "] has more than 2^64 - 1 ", "elements")));
      return;
    }
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
  ++repeat_depth_;
  for (uint64_t i = 0; i < n && status_.ok(); ++i) {
    In(absl::StrCat(part, ".", i), [&] { body(i); });
  }
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
  if (!part.empty()) absl::StrAppend(&prefix_, part, ".");
  body();
  prefix_.resize(size);
}

}  // namespace chunkplan::models
