#ifndef CHUNKPLAN_CLIENT_CLI_LOCAL_SEARCH_H_
#define CHUNKPLAN_CLIENT_CLI_LOCAL_SEARCH_H_

// The search run in this process, with the server's own planner and
// conversions: the same answer the service gives, without a server.

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// The response a server with default planner options would send for
// `request`. Errors: as chunkplan.v1.ChunkSearch/Search (INVALID_ARGUMENT,
// RESOURCE_EXHAUSTED, FAILED_PRECONDITION for an engine this binary lacks).
absl::StatusOr<v1::ChunkSearchResponse> SearchLocally(
    const v1::ChunkSearchRequest& request);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_LOCAL_SEARCH_H_
