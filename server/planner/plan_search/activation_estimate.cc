#include "chunkplan/planner/activation_estimate.h"

#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chunkplan::planner {
namespace {

using Wide = unsigned __int128;
// An exact count, or nullopt once it has passed 2^128-1.
using Checked = std::optional<Wide>;

Checked Mul(Checked x, Wide y) {
  Wide product;
  if (!x.has_value() || __builtin_mul_overflow(*x, y, &product)) {
    return std::nullopt;
  }
  return product;
}

Checked Add(Checked x, Checked y) {
  Wide sum;
  if (!x.has_value() || !y.has_value() ||
      __builtin_add_overflow(*x, *y, &sum)) {
    return std::nullopt;
  }
  return sum;
}

// `value` as a uint64 in *out, or INVALID_ARGUMENT naming `part`.
absl::Status Narrow(Checked value, absl::string_view part, uint64_t* out) {
  if (!value.has_value() || *value > UINT64_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("activations.", part, " exceeds 2^64-1 bytes"));
  }
  *out = static_cast<uint64_t>(*value);
  return absl::OkStatus();
}

// INVALID_ARGUMENT naming the first field that is 0.
absl::Status CheckPositive(const TransformerShape& shape,
                           const ActivationWorkload& workload) {
  for (const auto& [value, field] :
       {std::tuple{uint64_t{workload.micro_batch}, "workload.micro_batch"},
        std::tuple{uint64_t{workload.sequence_length},
                   "workload.sequence_length"},
        std::tuple{shape.num_layers, "shape.num_layers"},
        std::tuple{shape.hidden_size, "shape.hidden_size"},
        std::tuple{shape.num_attention_heads, "shape.num_attention_heads"},
        std::tuple{shape.vocab_size, "shape.vocab_size"}}) {
    if (value == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " must be at least 1"));
    }
  }
  return absl::OkStatus();
}

// One layer's stored bytes: Table 2's sbh(34 + 5as/h) written as
// 34sbh + 5as^2b, without the score terms under flash attention, and its
// 2sbh (the layer's input) under full recomputation.
Checked PerLayer(Wide s, Wide b, Wide h, Wide a,
                 const ActivationWorkload& workload) {
  const Checked sbh = Mul(Mul(s, b), h);
  if (workload.activation_checkpointing) return Mul(sbh, 2);
  if (workload.flash_attention) return Mul(sbh, 34);
  return Add(Mul(sbh, 34), Mul(Mul(Mul(Mul(a, 5), s), s), b));
}

// The adapters' stored bytes: per module 2sbr, and 3sb x in_features with
// dropout (a 1-byte mask and the 2-byte output lora_A reads); the modules
// inside the layers only without checkpointing (a recomputed layer keeps
// only its input).
Checked Adapters(Wide s, Wide b, const AdapterShape& adapters,
                 bool checkpointing) {
  Checked out = Wide{0};
  for (const auto& [modules, in_features, stored] :
       {std::tuple{adapters.layer_modules, adapters.layer_in_features,
                   !checkpointing},
        std::tuple{adapters.other_modules, adapters.other_in_features, true}}) {
    if (!stored) continue;
    out = Add(out, Mul(Mul(Mul(Mul(s, b), adapters.rank), 2), modules));
    if (adapters.dropout) {
      out = Add(out, Mul(Mul(Mul(s, b), in_features), 3));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ActivationBytes> EstimateActivationBytes(
    const TransformerShape& shape, const ActivationWorkload& workload) {
  if (absl::Status s = CheckPositive(shape, workload); !s.ok()) return s;
  const Wide s = workload.sequence_length;
  const Wide b = workload.micro_batch;
  const Wide h = shape.hidden_size;
  const Checked sbh = Mul(Mul(s, b), h);
  ActivationBytes out;
  if (absl::Status st =
          Narrow(PerLayer(s, b, h, shape.num_attention_heads, workload),
                 "per_layer_bytes", &out.per_layer_bytes);
      !st.ok()) {
    return st;
  }
  for (const auto& [value, part, field] :
       {std::tuple{Mul(out.per_layer_bytes, shape.num_layers), "layers_bytes",
                   &out.layers_bytes},
        std::tuple{sbh, "embedding_dropout_bytes",
                   &out.embedding_dropout_bytes},
        std::tuple{Mul(sbh, 2), "final_norm_bytes", &out.final_norm_bytes},
        std::tuple{Mul(sbh, 2), "output_input_bytes", &out.output_input_bytes},
        std::tuple{Mul(Mul(Mul(s, b), shape.vocab_size), 4), "logits_bytes",
                   &out.logits_bytes},
        std::tuple{
            Adapters(s, b, shape.adapters, workload.activation_checkpointing),
            "adapter_bytes", &out.adapter_bytes}}) {
    if (absl::Status st = Narrow(value, part, field); !st.ok()) return st;
  }
  const Wide total = Wide{out.layers_bytes} + out.embedding_dropout_bytes +
                     out.final_norm_bytes + out.output_input_bytes +
                     out.logits_bytes + out.adapter_bytes;
  if (absl::Status st = Narrow(total, "total_bytes", &out.total_bytes);
      !st.ok()) {
    return st;
  }
  return out;
}

}  // namespace chunkplan::planner
