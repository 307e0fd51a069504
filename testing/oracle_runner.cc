#include "testing/oracle_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/json_codec.h"
#include "google/protobuf/struct.pb.h"

#ifndef CHUNKPLAN_PYTHON
#error "CHUNKPLAN_PYTHON must name the Python with numpy (the build sets it)"
#endif
#ifndef CHUNKPLAN_ORACLE_DIR
#error "CHUNKPLAN_ORACLE_DIR must name tests/oracle (the build sets it)"
#endif

namespace chunkplan::testing {
namespace {

// `text` in single quotes for /bin/sh.
std::string ShellQuote(absl::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

// A temp file that removes itself.
class TempFile {
 public:
  TempFile() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "chunkplan_diff_XXXXXX")
            .string();
    fd_ = mkstemp(pattern.data());
    if (fd_ >= 0) path_ = pattern;
  }
  ~TempFile() {
    if (fd_ >= 0) {
      close(fd_);
      unlink(path_.c_str());
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  // Writes all of `data`; false on a write error.
  bool Write(absl::string_view data) {
    while (!data.empty()) {
      const ssize_t n = write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace

OracleCommand SearchOracle(bool strict) {
  const char* script = std::getenv("CHUNKPLAN_DIFF_ORACLE");
  return OracleCommand{CHUNKPLAN_PYTHON,
                       script != nullptr ? script
                                         : CHUNKPLAN_ORACLE_DIR
                           "/chunk_search_oracle.py",
                       strict ? "--strict" : ""};
}

OracleCommand LayoutOracle() {
  const char* script = std::getenv("CHUNKPLAN_DIFF_LAYOUT_ORACLE");
  return OracleCommand{
      CHUNKPLAN_PYTHON,
      script != nullptr ? script : CHUNKPLAN_ORACLE_DIR "/layout_oracle.py"};
}

absl::StatusOr<std::vector<std::string>> RunOracleJsonl(
    const OracleCommand& command,
    const std::vector<std::string>& request_lines) {
  TempFile input;
  if (!input.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot create a temp file: ", std::strerror(errno)));
  }
  std::string text;
  for (const std::string& line : request_lines) {
    absl::StrAppend(&text, line, "\n");
  }
  if (!input.Write(text)) {
    return absl::InternalError(absl::StrCat("cannot write ", input.path(), ": ",
                                            std::strerror(errno)));
  }

  const std::string shell =
      absl::StrCat(ShellQuote(command.python), " ", ShellQuote(command.script),
                   " --jsonl", command.flag.empty() ? "" : " ", command.flag,
                   " < ", ShellQuote(input.path()));
  FILE* pipe = popen(shell.c_str(), "r");
  if (pipe == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot run `", shell, "`: ", std::strerror(errno)));
  }
  std::string output;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, n);
  }
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("`", shell,
                                            "` failed (wait status ", status,
                                            "); its stderr is above"));
  }

  std::vector<std::string> answers =
      absl::StrSplit(output, '\n', absl::SkipEmpty());
  if (answers.size() != request_lines.size()) {
    return absl::InternalError(absl::StrCat("the oracle answered ",
                                            answers.size(), " lines for ",
                                            request_lines.size(), " requests"));
  }
  return answers;
}

absl::StatusOr<v1::ChunkSearchResponse> ParseOracleAnswer(
    absl::string_view line) {
  v1::ChunkSearchResponse response;
  const absl::Status parsed = common::JsonToMessage(
      std::string_view(line.data(), line.size()), &response);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("oracle answered ", line, " (", parsed.message(), ")"));
  }
  return response;
}

absl::StatusOr<absl::StatusOr<v1::LayoutResponse>> ParseLayoutAnswer(
    absl::string_view line) {
  const std::string_view text(line.data(), line.size());
  v1::LayoutResponse response;
  if (common::JsonToMessage(text, &response).ok()) return response;
  google::protobuf::Struct error;  // {"error": "..."}
  if (common::JsonToMessage(text, &error).ok() &&
      error.fields().contains("error")) {
    return absl::StatusOr<v1::LayoutResponse>(
        absl::InvalidArgumentError(error.fields().at("error").string_value()));
  }
  return absl::InternalError(absl::StrCat(
      "the layout oracle answered neither a LayoutResponse nor an error: ",
      line));
}

absl::StatusOr<std::vector<absl::StatusOr<v1::ChunkSearchResponse>>> AskOracle(
    const std::vector<v1::ChunkSearchRequest>& requests) {
  std::vector<std::string> lines;
  lines.reserve(requests.size());
  for (const v1::ChunkSearchRequest& r : requests) {
    lines.push_back(common::MessageToJson(r));
  }
  absl::StatusOr<std::vector<std::string>> answers =
      RunOracleJsonl(SearchOracle(), lines);
  if (!answers.ok()) return answers.status();
  std::vector<absl::StatusOr<v1::ChunkSearchResponse>> responses;
  responses.reserve(answers->size());
  for (const std::string& line : *answers) {
    responses.push_back(ParseOracleAnswer(line));
  }
  return responses;
}

}  // namespace chunkplan::testing
