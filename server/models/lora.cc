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

constexpr size_t kNoModule = ~size_t{0};

// The operations of `d` (over its parameters before the adapters) over
// the adapted list: each index through `new_index`; after the last
// operation that takes a parameter of an adapted module (`module_of`, by
// old index: the module's index in d.linears, or kNoModule), that module's
// lora_A, then its lora_B (`adapter_first[m]`, the index of lora_A; lora_B
// follows it), as PEFT's lora.Linear.forward runs them
// (src/peft/tuners/lora/layer.py at 5d602fd, l. 1048-1062: result =
// self.base_layer(x), then result + lora_B(lora_A(dropout(x))) * scaling).
// Modules ending at one operation follow it in registration order. No
// operations (a family without a sequence): none. INTERNAL where an
// adapted module's parameters are in no operation (a family's mistake).
// `layers` gets each operation's layer (an adapter's: its module's
// operation's, as gradient checkpointing re-runs it with the layer).
absl::StatusOr<std::vector<std::vector<uint64_t>>> AdaptedOperations(
    const ModelDescription& d, const std::vector<size_t>& module_of,
    const std::vector<uint64_t>& new_index,
    const std::vector<uint64_t>& adapter_first, std::vector<int64_t>& layers) {
  std::vector<size_t> last_op(d.linears.size(), kNoModule);
  for (size_t k = 0; k < d.operations.size(); ++k) {
    for (uint64_t p : d.operations[k]) {
      if (module_of[p] != kNoModule) last_op[module_of[p]] = k;
    }
  }
  // The adapted modules each operation ends, in registration order.
  std::vector<std::vector<size_t>> ending(d.operations.size());
  size_t adapters = 0;
  for (size_t m = 0; m < d.linears.size(); ++m) {
    if (last_op[m] == kNoModule) continue;
    ending[last_op[m]].push_back(m);
    ++adapters;
  }
  std::vector<std::vector<uint64_t>> out;
  out.reserve(d.operations.size() + 2 * adapters);
  layers.clear();
  for (size_t k = 0; k < d.operations.size(); ++k) {
    std::vector<uint64_t> op;
    op.reserve(d.operations[k].size());
    for (uint64_t p : d.operations[k]) op.push_back(new_index[p]);
    out.push_back(std::move(op));
    const int64_t layer =
        k < d.operation_layers.size() ? d.operation_layers[k] : -1;
    layers.push_back(layer);
    for (size_t m : ending[k]) {
      out.push_back({adapter_first[m]});
      out.push_back({adapter_first[m] + 1});
      layers.insert(layers.end(), 2, layer);
    }
  }
  if (d.operations.empty()) return out;
  for (size_t p = 0; p < module_of.size(); ++p) {
    if (module_of[p] != kNoModule && last_op[module_of[p]] == kNoModule) {
      return absl::InternalError(
          absl::StrCat("lora: no operation takes the parameters of ",
                       d.linears[module_of[p]].name));
    }
  }
  return out;
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
  // Each old parameter's index in the new list and adapted module (if
  // any), and each adapted module's lora_A index (for the operations).
  std::vector<uint64_t> new_index(d.numels.size());
  std::vector<size_t> module_of(d.numels.size(), kNoModule);
  std::vector<uint64_t> adapter_first(d.linears.size());
  size_t next = 0;  // the next parameter of d to copy
  for (size_t m = 0; m < d.linears.size(); ++m) {
    LinearModule& module = d.linears[m];
    for (; next < module.first_param; ++next) {
      new_index[next] = names.size();
      names.push_back(std::move(d.names[next]));
      numels.push_back(d.numels[next]);
      frozen.push_back(true);
    }
    module.first_param = names.size();
    if (!(*adapted)[m]) continue;
    for (size_t i = 0; i < module.params; ++i, ++next) {
      module_of[next] = m;
      new_index[next] = names.size();
      names.push_back(BaseLayerName(module.name, d.names[next]));
      numels.push_back(d.numels[next]);
      frozen.push_back(true);
    }
    adapter_first[m] = names.size();
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
    new_index[next] = names.size();
    names.push_back(std::move(d.names[next]));
    numels.push_back(d.numels[next]);
    frozen.push_back(true);
  }
  std::vector<int64_t> layers;
  absl::StatusOr<std::vector<std::vector<uint64_t>>> operations =
      AdaptedOperations(d, module_of, new_index, adapter_first, layers);
  if (!operations.ok()) return operations.status();
  d.operations = *std::move(operations);
  d.operation_layers = std::move(layers);
  d.names = std::move(names);
  d.numels = std::move(numels);
  d.frozen = std::move(frozen);
  d.total = total;
  d.trainable = trainable;
  d.adapters = facts;
  return absl::OkStatus();
}

}  // namespace chunkplan::models
