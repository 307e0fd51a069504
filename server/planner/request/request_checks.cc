#include "server/planner/request/request_checks.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/planner/request/python_math.h"

namespace chunkplan::planner {

absl::Status CheckShape(const SearchRequest& request) {
  const size_t n = request.numels.size();
  if (n == 0) {
    return absl::InvalidArgumentError(
        "numels is empty; a search needs at least one parameter");
  }
  for (size_t i = 0; i < n; ++i) {
    if (request.numels[i] > kMaxElements) {
      return absl::InvalidArgumentError(
          absl::StrCat("numels[", i, "] is ", request.numels[i],
                       "; sizes must be <= 2^63-1"));
    }
  }
  const size_t d = request.dp_degrees.size();
  if (d != 0 && d != 1 && d != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dp_degrees has ", d, " entries; expected 0 (all 1), 1 (shared) or ", n,
        " (one per numel)"));
  }
  for (size_t i = 0; i < d; ++i) {
    if (request.dp_degrees[i] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dp_degrees[", i, "] is 0; data-parallel degrees must be >= 1"));
    }
  }
  if (request.search_interval == 0) {
    return absl::InvalidArgumentError("search_interval is 0; it must be >= 1");
  }
  return absl::OkStatus();
}

uint32_t DegreeOf(const SearchRequest& request, size_t i) {
  switch (request.dp_degrees.size()) {
    case 0:
      return 1;
    case 1:
      return request.dp_degrees[0];
    default:
      return request.dp_degrees[i];
  }
}

absl::StatusOr<uint64_t> RoundedMebiElements(double value,
                                             absl::string_view field) {
  if (!std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", value, "; it must be a finite number"));
  }
  const double rounded = PythonRoundMebi(value);
  if (rounded < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", value, ", which rounds to ", rounded,
                     " elements; it must not round below 0"));
  }
  // 2**63 is exact as a double; anything below it converts exactly.
  if (!(rounded < 9223372036854775808.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", value, ", which rounds to ", rounded,
                     " elements; it must round to at most 2^63-1"));
  }
  return static_cast<uint64_t>(rounded);
}

}  // namespace chunkplan::planner
