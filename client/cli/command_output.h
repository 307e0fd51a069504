#ifndef CHUNKPLAN_CLIENT_CLI_COMMAND_OUTPUT_H_
#define CHUNKPLAN_CLIENT_CLI_COMMAND_OUTPUT_H_

// CommandOutput: what a command prints, for main's Finish.

#include <optional>
#include <string>

namespace chunkplan::cli {

// What a command prints, and the verdict's say on its exit status.
struct CommandOutput {
  std::string text;  // for stdout, ending in '\n'; may be empty
  // The server's verdict says it does not fit (exit 3): why, for stderr.
  std::optional<std::string> does_not_fit;
  // The model's warnings where `text` does not hold them (JSON, an emitted
  // line), for stderr: WarningLines.
  std::string warnings;
};

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_COMMAND_OUTPUT_H_
