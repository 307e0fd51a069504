#ifndef CHUNKPLAN_TESTS_SERVICE_ORACLE_H_
#define CHUNKPLAN_TESTS_SERVICE_ORACLE_H_

// The independent oracle (tests/oracle/chunk_search_oracle.py, Python and
// numpy) asked from C++: expected answers for the service tests.

#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::testing {

// The oracle's answer to each request, in order: configs, total_param_size
// and min_chunk_waste set (the other response fields are the service's own).
// An answer the oracle rejects is an INVALID_ARGUMENT status in its place.
// Errors: INTERNAL when the oracle cannot be run or answers unreadably.
absl::StatusOr<std::vector<absl::StatusOr<v1::ChunkSearchResponse>>> AskOracle(
    const std::vector<v1::ChunkSearchRequest>& requests);

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_SERVICE_ORACLE_H_
