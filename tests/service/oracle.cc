#include "tests/service/oracle.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"

#ifndef CHUNKPLAN_PYTHON
#error "CHUNKPLAN_PYTHON must name the Python that runs the oracle"
#endif
#ifndef CHUNKPLAN_ORACLE
#error "CHUNKPLAN_ORACLE must name tests/oracle/chunk_search_oracle.py"
#endif

namespace chunkplan::testing {
namespace {

absl::StatusOr<std::string> ToJsonLine(const v1::ChunkSearchRequest& request) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  if (auto s =
          google::protobuf::util::MessageToJsonString(request, &json, options);
      !s.ok()) {
    return absl::InternalError(absl::StrCat("request to JSON: ", s.ToString()));
  }
  return json;
}

absl::StatusOr<v1::ChunkSearchResponse> FromAnswerLine(
    const std::string& line) {
  if (line.find("\"error\"") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("oracle: ", line));
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  v1::ChunkSearchResponse response;
  if (auto s =
          google::protobuf::util::JsonStringToMessage(line, &response, options);
      !s.ok()) {
    return absl::InternalError(
        absl::StrCat("unreadable oracle answer '", line, "': ", s.ToString()));
  }
  return response;
}

}  // namespace

absl::StatusOr<std::vector<absl::StatusOr<v1::ChunkSearchResponse>>> AskOracle(
    const std::vector<v1::ChunkSearchRequest>& requests) {
  char in_path[] = "/tmp/chunkplan_oracle_in_XXXXXX";
  const int fd = mkstemp(in_path);
  if (fd < 0) return absl::InternalError("mkstemp failed");
  close(fd);
  {
    std::ofstream in(in_path);
    for (const v1::ChunkSearchRequest& r : requests) {
      absl::StatusOr<std::string> line = ToJsonLine(r);
      if (!line.ok()) return line.status();
      in << *line << "\n";
    }
  }
  const std::string command = absl::StrCat(
      CHUNKPLAN_PYTHON, " ", CHUNKPLAN_ORACLE, " --jsonl < ", in_path);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("cannot run the oracle");
  std::string output;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  const int rc = pclose(pipe);
  std::remove(in_path);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("oracle exited with ", rc, ": ", command));
  }
  std::vector<absl::StatusOr<v1::ChunkSearchResponse>> answers;
  for (absl::string_view line :
       absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    absl::StatusOr<v1::ChunkSearchResponse> answer =
        FromAnswerLine(std::string(line));
    if (!answer.ok() && answer.status().code() == absl::StatusCode::kInternal) {
      return answer.status();
    }
    answers.push_back(std::move(answer));
  }
  if (answers.size() != requests.size()) {
    return absl::InternalError(absl::StrCat("oracle gave ", answers.size(),
                                            " answers to ", requests.size(),
                                            " requests"));
  }
  return answers;
}

}  // namespace chunkplan::testing
