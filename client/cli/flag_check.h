#ifndef CHUNKPLAN_CLIENT_CLI_FLAG_CHECK_H_
#define CHUNKPLAN_CLIENT_CLI_FLAG_CHECK_H_

// absl::ParseCommandLine ends the process with exit code 1 and its own
// message on an unknown flag or a bad value, and warns on stderr about
// "--request -". The CLI checks the command line first, so that such usage
// errors, like its others, exit 2 with "INVALID_ARGUMENT: ...", and hands
// absl::ParseCommandLine every value joined to its flag by '='.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace chunkplan::cli {

// argv[0..argc) with every flag written "--name=value" (or "--name" /
// "--noname" for a bool flag without a value), when absl::ParseCommandLine
// would accept them: every "--name[=value]" / "-name[=value]" names a
// registered flag, a bool flag as "--noname", or one of abseil's usage flags
// (--help, --version, ...); non-bool flags have a value (after '=' or as the
// next argument), and every value parses. Positional arguments, "-", and
// everything from "--" on are kept as they are.
// A name may be written with dashes for underscores ("--hf-config" is
// "--hf_config"); the result names every flag with underscores.
// Errors: INVALID_ARGUMENT naming the flag.
//
// Values are parsed into the flags as a check; absl::ParseCommandLine parses
// the same values again.
absl::StatusOr<std::vector<std::string>> NormalizeFlags(int argc, char* argv[]);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_FLAG_CHECK_H_
