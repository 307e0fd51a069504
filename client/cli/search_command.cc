#include "client/cli/search_command.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "client/cli/table_format.h"
#include "common/grpc_status.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"
#include "server/planner/planner.h"
#include "server/service/proto_convert.h"

namespace chunkplan::cli {
namespace {

// The request in the file (or stdin) at `path`. Errors as RunSearch's.
absl::StatusOr<v1::ChunkSearchRequest> ReadRequest(absl::string_view path) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const std::string json, common::ReadInput(path));
  v1::ChunkSearchRequest request;
  if (absl::Status s = common::JsonToMessage(json, &request); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat(common::InputName(path), ": ", s.message()));
  }
  return request;
}

// The response a server with default planner options would send for
// `request`, computed in this process with the server's own planner and
// conversions. Errors: as chunkplan.v1.ChunkSearch/Search (INVALID_ARGUMENT,
// RESOURCE_EXHAUSTED, FAILED_PRECONDITION for an engine this binary lacks).
absl::StatusOr<v1::ChunkSearchResponse> SearchLocally(
    const v1::ChunkSearchRequest& request) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchRequest plain,
                             service::FromProto(request));
  const planner::Planner planner;
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchResult result,
                             planner.Search(plain));
  return service::ToProto(result);
}

// The server's answer to chunkplan.v1.ChunkSearch/Search for `request`.
// Errors: the call's status as the server or gRPC gives it (UNAVAILABLE when
// nothing answers at `target.address`, DEADLINE_EXCEEDED past the deadline,
// the server's INVALID_ARGUMENT etc.).
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

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name) {
  if (name == "json") return OutputFormat::kJson;
  if (name == "table") return OutputFormat::kTable;
  return absl::InvalidArgumentError(
      absl::StrCat("--format must be json or table, not '", name, "'"));
}

absl::StatusOr<v1::Engine> ParseEngine(absl::string_view name) {
  v1::Engine engine;
  if (v1::Engine_Parse(absl::StrCat("ENGINE_", absl::AsciiStrToUpper(name)),
                       &engine)) {
    return engine;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--engine must be auto, cpu_sweep, cpu_plateau or cuda, not '", name,
      "'"));
}

absl::StatusOr<std::string> RunSearch(const SearchOptions& options) {
  CHUNKPLAN_ASSIGN_OR_RETURN(v1::ChunkSearchRequest request,
                             ReadRequest(options.request_path));
  if (options.engine.has_value()) request.set_engine(*options.engine);
  CHUNKPLAN_ASSIGN_OR_RETURN(const v1::ChunkSearchResponse response,
                             options.server.has_value()
                                 ? SearchRemotely(*options.server, request)
                                 : SearchLocally(request));
  if (options.format == OutputFormat::kTable) return FormatTable(response);
  return absl::StrCat(common::MessageToJson(response), "\n");
}

}  // namespace chunkplan::cli
