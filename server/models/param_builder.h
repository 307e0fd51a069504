#ifndef CHUNKPLAN_SERVER_MODELS_PARAM_BUILDER_H_
#define CHUNKPLAN_SERVER_MODELS_PARAM_BUILDER_H_

// The parameters of a model as its family lists them, in registration
// order, under dotted names ("model.layers.0.self_attn.q_proj.weight").
// A family's build function runs twice over one ParamBuilder type: first
// counting only (no vector grows), so that a model past max_params or past
// 64 bits is refused before anything is allocated, then storing.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/models/model_description.h"
#include "server/models/tp_policy.h"

namespace chunkplan::models {

class ParamBuilder {
 public:
  // store: keep names and numels (else only count them and sum the total).
  // The first Add past `max_params` parameters fails with
  // RESOURCE_EXHAUSTED.
  ParamBuilder(uint64_t max_params, bool store);

  // Appends the parameter `name` (under the open scopes) of prod(dims)
  // elements. Fails the builder (INVALID_ARGUMENT) where the product or the
  // total passes 64 bits. Does nothing once the builder has failed.
  void Add(absl::string_view name, std::initializer_list<uint64_t> dims);

  // From now on, Add keeps the shape tp rank 0 holds under `policy` at
  // `tp` >= 2 (tp_shard.h), failing the builder where the policy's layer
  // refuses. `policy` must outlive the builder.
  void ShardFor(const TpPolicy& policy, uint32_t tp);

  // Runs body(i) for i = 0 .. n-1, each under the scope "<part>.<i>",
  // stopping when the builder fails. Every repetition must add at least one
  // parameter: an `n` beyond what max_params leaves fails at once.
  void Repeat(absl::string_view part, uint64_t n,
              absl::FunctionRef<void(uint64_t)> body);

  // Runs body() under the scope `part` (empty: no scope).
  void In(absl::string_view part, absl::FunctionRef<void()> body);

  // Appends one operation that takes, in order, each of `entries`: a
  // parameter, or a module's own parameters ("<module>.<name>", no further
  // dot) in registration order; each named under the open scopes and added
  // within the innermost one. Records nothing unless `store`; fails the
  // builder (INTERNAL) when an entry names nothing (a family's mistake).
  void Op(std::initializer_list<absl::string_view> entries);
  // Runs add_params() under the scope `name` and, when storing, records
  // the parameters it adds as one linear module of `in` x `out` (where a
  // LoRA adapter may attach).
  void Linear(absl::string_view name, uint64_t in, uint64_t out,
              absl::FunctionRef<void()> add_params);

  const absl::Status& status() const { return status_; }
  uint64_t count() const { return count_; }
  uint64_t total() const { return total_; }
  // The stored names and numels (empty unless `store`).
  std::vector<std::string>& names() { return names_; }
  std::vector<uint64_t>& numels() { return numels_; }
  // The recorded operations (Op), in the order recorded.
  std::vector<std::vector<uint64_t>>& operations() { return operations_; }
  // One per recorded operation: the index of the outermost Repeat it was
  // recorded in (the decoder layer), -1 outside every Repeat.
  std::vector<int64_t>& operation_layers() { return operation_layers_; }
  std::vector<LinearModule>& linears() { return linears_; }

 private:
  void Fail(absl::Status status);

  uint64_t max_params_;
  bool store_;
  absl::Status status_;
  uint64_t count_ = 0;
  uint64_t total_ = 0;
  std::string prefix_;  // the open scopes, each followed by '.'
  const TpPolicy* tp_policy_ = nullptr;  // set by ShardFor
  uint32_t tp_ = 1;
  // Index of the first parameter added under the innermost open scope.
  size_t scope_begin_ = 0;
  std::vector<std::string> names_;
  std::vector<uint64_t> numels_;
  std::vector<std::vector<uint64_t>> operations_;
  std::vector<int64_t> operation_layers_;
  std::vector<LinearModule> linears_;
  int repeat_depth_ = 0;  // the Repeat scopes open
  int64_t layer_ = -1;    // the outermost Repeat's index, -1 outside one
};

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_PARAM_BUILDER_H_
