#include "server/models/lora.h"

#include <cmath>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace chunkplan::models {
namespace {

// PEFT's check_target_module_exists for a list: the full name, or a suffix
// after a dot.
bool Targets(const std::string& module, const std::string& target) {
  return module == target || absl::EndsWith(module, absl::StrCat(".", target));
}

absl::Status CheckSpec(const LoraSpec& spec) {
  if (spec.rank == 0) {
    return absl::InvalidArgumentError(
        "lora.rank: 0 with targets; the rank r is at least 1");
  }
  if (spec.targets.empty()) {
    return absl::InvalidArgumentError(
        "lora.targets: empty; name the modules to adapt, e.g. q_proj, v_proj");
  }
  if (!(spec.dropout >= 0 && spec.dropout < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lora.dropout: ", spec.dropout, "; lora_dropout is in [0, 1)"));
  }
  return absl::OkStatus();
}

// Which modules of `d` take an adapter; INVALID_ARGUMENT naming a target
// that matches none.
absl::StatusOr<std::vector<bool>> AdaptedModules(const LoraSpec& spec,
                                                 const ModelDescription& d) {
  std::vector<bool> adapted(d.linears.size(), false);
  for (size_t t = 0; t < spec.targets.size(); ++t) {
    const std::string& target = spec.targets[t];
    bool found = false;
    for (size_t m = 0; m < d.linears.size() && !target.empty(); ++m) {
      if (Targets(d.linears[m].name, target)) adapted[m] = found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "lora.targets[", t, "]: \"", absl::CHexEscape(target.substr(0, 100)),
          "\" matches no linear module of ", d.architecture,
          " (a module matches when its name equals the target or ends in "
          "\".\" + target, e.g. q_proj matches "
          "model.layers.0.self_attn.q_proj)"));
    }
  }
  return adapted;
}

// r * n, or INVALID_ARGUMENT naming the adapter.
absl::StatusOr<uint64_t> AdapterNumel(uint64_t r, uint64_t n,
                                      const std::string& name) {
  uint64_t numel;
  if (__builtin_mul_overflow(r, n, &numel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("lora: ", name, " has more than 2^64 - 1 elements"));
  }
  return numel;
}

// `name` with ".base_layer" before its last part.
std::string BaseLayerName(const std::string& module, const std::string& name) {
  return absl::StrCat(module, ".base_layer", name.substr(module.size()));
}

}  // namespace

absl::Status AddLoraAdapters(const LoraSpec& spec, uint64_t max_params,
                             ModelDescription& d) {
  if (spec.rank == 0 && spec.targets.empty()) return absl::OkStatus();
  if (absl::Status s = CheckSpec(spec); !s.ok()) return s;
  absl::StatusOr<std::vector<bool>> adapted = AdaptedModules(spec, d);
  if (!adapted.ok()) return adapted.status();
  uint64_t count = 0;
  for (bool a : *adapted) count += a ? 1 : 0;
  if (count > (max_params - d.numels.size()) / 2) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "lora: ", count, " adapters take the model past ", max_params,
        " parameters (tensors), the most a request may have (--max_params)"));
  }
  std::vector<std::string> names;
  std::vector<uint64_t> numels;
  std::vector<bool> frozen;
  names.reserve(d.numels.size() + 2 * count);
  numels.reserve(names.capacity());
  frozen.reserve(names.capacity());
  AdapterFacts facts{.rank = spec.rank, .dropout = spec.dropout > 0};
  uint64_t total = d.total, trainable = 0;
  size_t next = 0;  // the next parameter of d to copy
  for (size_t m = 0; m < d.linears.size(); ++m) {
    LinearModule& module = d.linears[m];
    for (; next < module.first_param; ++next) {
      names.push_back(std::move(d.names[next]));
      numels.push_back(d.numels[next]);
      frozen.push_back(true);
    }
    module.first_param = names.size();
    if (!(*adapted)[m]) continue;
    for (size_t i = 0; i < module.params; ++i, ++next) {
      names.push_back(BaseLayerName(module.name, d.names[next]));
      numels.push_back(d.numels[next]);
      frozen.push_back(true);
    }
    for (const auto& [part, n] :
         {std::pair{"lora_A", module.in}, std::pair{"lora_B", module.out}}) {
      names.push_back(absl::StrCat(module.name, ".", part, ".default.weight"));
      absl::StatusOr<uint64_t> numel = AdapterNumel(spec.rank, n, names.back());
      if (!numel.ok()) return numel.status();
      if (__builtin_add_overflow(total, *numel, &total)) {
        return absl::InvalidArgumentError(
            absl::StrCat("lora: the model's total passes 2^64 - 1 elements at ",
                         names.back()));
      }
      trainable += *numel;  // within total
      numels.push_back(*numel);
      frozen.push_back(false);
    }
    uint64_t& modules =
        module.in_layer ? facts.layer_modules : facts.other_modules;
    uint64_t& in =
        module.in_layer ? facts.layer_in_features : facts.other_in_features;
    ++modules;
    if (__builtin_add_overflow(in, module.in, &in)) {
      return absl::InvalidArgumentError(
          "lora: the adapted modules' in_features pass 2^64 - 1");
    }
  }
  for (; next < d.names.size(); ++next) {
    names.push_back(std::move(d.names[next]));
    numels.push_back(d.numels[next]);
    frozen.push_back(true);
  }
  d.names = std::move(names);
  d.numels = std::move(numels);
  d.frozen = std::move(frozen);
  // The operations name the parameters before the adapters were inserted,
  // and the adapters' own operations are not listed: none, so the gathered
  // chunks fall back to one (docs/plan.md, "Gathered chunks").
  d.operations.clear();
  d.operation_layers.clear();
  d.total = total;
  d.trainable = trainable;
  d.adapters = facts;
  return absl::OkStatus();
}

}  // namespace chunkplan::models
