#include "client/cli/remote_search.h"

#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace chunkplan::cli {

absl::StatusOr<v1::ChunkSearchResponse> SearchRemotely(
    const RemoteTarget& target, const v1::ChunkSearchRequest& request) {
  const auto stub = v1::ChunkSearch::NewStub(OpenChannel(target));
  grpc::ClientContext context;
  ApplyDeadline(target, &context);
  v1::ChunkSearchResponse response;
  CHUNKPLAN_RETURN_IF_ERROR(
      common::ToAbslStatus(stub->Search(&context, request, &response)));
  return response;
}

}  // namespace chunkplan::cli
