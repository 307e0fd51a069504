#include "client/cli/local_search.h"

#include "common/status_macros.h"
#include "server/planner/planner.h"
#include "server/service/proto_convert.h"

namespace chunkplan::cli {

absl::StatusOr<v1::ChunkSearchResponse> SearchLocally(
    const v1::ChunkSearchRequest& request) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchRequest plain,
                             service::FromProto(request));
  const planner::Planner planner;
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchResult result,
                             planner.Search(plain));
  return service::ToProto(result);
}

}  // namespace chunkplan::cli
