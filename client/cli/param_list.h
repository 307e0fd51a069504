#ifndef CHUNKPLAN_CLIENT_CLI_PARAM_LIST_H_
#define CHUNKPLAN_CLIENT_CLI_PARAM_LIST_H_

// `--params FILE`: any model by its parameter list, as the Python package's
// write_params (or any tool) dumps it from `named_parameters()`: a JSON
// list whose entries are {"name": NAME, "numel": N} (with
// "requires_grad": false for a parameter that needs no gradient: GeminiDDP
// gives it no chunk, a frozen parameter) or [NAME, SHAPE] (SHAPE a list of
// sizes; [] is a scalar), in named_parameters() order.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chunkplan::cli {

// The parameters of a list, in its order.
struct ParamList {
  std::vector<std::string> names;
  std::vector<uint64_t> numels;
  // One per parameter where any has "requires_grad": false, else empty
  // (LayoutRequest.frozen's form).
  std::vector<bool> frozen;
};

// Parses `text` (the file's content; `source` names it in errors).
// INVALID_ARGUMENT naming the source and the entry's index for text that is
// not a JSON list, an entry of neither form, a name that is not a string,
// a numel or size that is not an integer from 0 to 2^64 - 1, a
// requires_grad that is not true or false, a shape whose
// product passes 2^64 - 1, and for an empty list.
absl::StatusOr<ParamList> ParseParamList(absl::string_view text,
                                         absl::string_view source);

// ParseParamList of the file at `path` ("-": standard input). Errors: the
// file's (NOT_FOUND etc. naming the path), then ParseParamList's.
absl::StatusOr<ParamList> ReadParamList(const std::string& path);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_PARAM_LIST_H_
