#ifndef CHUNKPLAN_CLIENT_CLI_REMOTE_SEARCH_H_
#define CHUNKPLAN_CLIENT_CLI_REMOTE_SEARCH_H_

// The search asked of a chunkplan server over gRPC.

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "client/cli/remote_call.h"

namespace chunkplan::cli {

// The server's answer to chunkplan.v1.ChunkSearch/Search for `request`.
// Errors: the call's status as the server or gRPC gives it (UNAVAILABLE when
// nothing answers at `target.address`, DEADLINE_EXCEEDED past the deadline,
// the server's INVALID_ARGUMENT etc.).
absl::StatusOr<v1::ChunkSearchResponse> SearchRemotely(
    const RemoteTarget& target, const v1::ChunkSearchRequest& request);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_REMOTE_SEARCH_H_
