#include "client/cli/search_command.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/cli/local_search.h"
#include "client/cli/remote_search.h"
#include "client/cli/table_format.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"

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
