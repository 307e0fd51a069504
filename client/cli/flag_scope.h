#ifndef CHUNKPLAN_CLIENT_CLI_FLAG_SCOPE_H_
#define CHUNKPLAN_CLIENT_CLI_FLAG_SCOPE_H_

// Which subcommands take which flags: one table, so that a flag given to a
// command that ignores it is a usage error naming the commands it serves.

#include <cstdint>

#include "absl/status/status.h"

namespace chunkplan::cli {

// The subcommands that take flags of their own, as bits of a set.
enum Command : uint32_t {
  kSearch = 1,
  kLayout = 2,
  kFrontier = 4,
  kPlan = 8,
  kDescribe = 16,
  kHealth = 32,
};

// OK when every command-specific flag set on the command line (its value is
// not its default) applies to `command`; else INVALID_ARGUMENT "--NAME
// applies to A and B only" with the flag's hint where it has one (e.g.
// "plan chooses the placement"). The flags that pick the target (--local,
// --server, --deadline, --tls*) and --format are checked by the commands.
absl::Status CheckFlagsApply(Command command);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_FLAG_SCOPE_H_
