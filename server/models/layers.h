#ifndef CHUNKPLAN_SERVER_MODELS_LAYERS_H_
#define CHUNKPLAN_SERVER_MODELS_LAYERS_H_

// The torch.nn layers Hugging Face models are built of, each adding its
// parameters under the scope `name` in the order the layer registers them
// (weight, then bias), with torch's shapes.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "server/models/param_builder.h"

namespace chunkplan::models {

// nn.Linear(in, out, bias): weight [out, in], bias [out].
void Linear(ParamBuilder& b, absl::string_view name, uint64_t in, uint64_t out,
            bool bias);

// transformers' Conv1D(nf = out, nx = in), GPT-2's linear layer with the
// weight transposed: weight [in, out], bias [out].
void Conv1D(ParamBuilder& b, absl::string_view name, uint64_t in, uint64_t out);

// nn.Embedding(rows, dim): weight [rows, dim].
void Embedding(ParamBuilder& b, absl::string_view name, uint64_t rows,
               uint64_t dim);

// nn.LayerNorm(dim, elementwise_affine, bias): weight [dim], bias [dim]
// where `bias`; nothing without the affine part.
void LayerNorm(ParamBuilder& b, absl::string_view name, uint64_t dim,
               bool affine = true, bool bias = true);

// The RMS norms (LlamaRMSNorm and its copies, GemmaRMSNorm): weight [dim].
void RmsNorm(ParamBuilder& b, absl::string_view name, uint64_t dim);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_LAYERS_H_
