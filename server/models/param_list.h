#ifndef CHUNKPLAN_SERVER_MODELS_PARAM_LIST_H_
#define CHUNKPLAN_SERVER_MODELS_PARAM_LIST_H_

// Any model by its parameter list (chunkplan.v1.ModelConfig.param_list_json,
// what `--params FILE` sends), as the Python package's write_params (or any
// tool) dumps it from `named_parameters()`: a JSON list whose entries are
// {"name": NAME, "numel": N} (with "requires_grad": false for a parameter
// that needs no gradient: GeminiDDP gives it no chunk) or [NAME, SHAPE]
// (SHAPE a list of sizes; [] is a scalar), in named_parameters() order.
// Plain C++ (abseil and nlohmann-json), as the families.

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/models/model_description.h"

namespace chunkplan::models {

// The description of the list in `text`: its names and numels in its order,
// their total, and, where any entry has "requires_grad": false, frozen (one
// per parameter) and trainable; param_list true, no family (model_type,
// architecture and the shape facts empty, no operations, no linear
// modules), every parameter trainable by default otherwise. Errors:
// INVALID_ARGUMENT, "param_list_json: " then the entry's index where one is
// at fault, for text that is not a JSON list or is empty, an entry of
// neither form, a name that is not a string, a numel or size that is not an
// integer from 0 to 2^64 - 1, a shape whose product or a total that passes
// 2^64 - 1, a requires_grad that is not true or false; RESOURCE_EXHAUSTED
// for a list of more than `max_params` entries (checked before any is
// stored).
absl::StatusOr<ModelDescription> DescribeParamList(std::string_view text,
                                                   uint64_t max_params);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_PARAM_LIST_H_
