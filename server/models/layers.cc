#include "server/models/layers.h"

namespace chunkplan::models {

void Linear(ParamBuilder& b, absl::string_view name, uint64_t in, uint64_t out,
            bool bias) {
  b.Linear(name, in, out, [&] {
    b.Add("weight", {out, in});
    if (bias) b.Add("bias", {out});
  });
}

void Conv1D(ParamBuilder& b, absl::string_view name, uint64_t in,
            uint64_t out) {
  b.Linear(name, in, out, [&] {
    b.Add("weight", {in, out});
    b.Add("bias", {out});
  });
}

void Embedding(ParamBuilder& b, absl::string_view name, uint64_t rows,
               uint64_t dim) {
  b.In(name, [&] { b.Add("weight", {rows, dim}); });
}

void LayerNorm(ParamBuilder& b, absl::string_view name, uint64_t dim,
               bool affine, bool bias) {
  if (!affine) return;
  b.In(name, [&] {
    b.Add("weight", {dim});
    if (bias) b.Add("bias", {dim});
  });
}

void RmsNorm(ParamBuilder& b, absl::string_view name, uint64_t dim) {
  b.In(name, [&] { b.Add("weight", {dim}); });
}

}  // namespace chunkplan::models
