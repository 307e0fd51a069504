#ifndef CHUNKPLAN_CLIENT_CLI_VERSION_H_
#define CHUNKPLAN_CLIENT_CLI_VERSION_H_

// `chunkplan version` / `chunkplan --version`.

#include <string>

namespace chunkplan::cli {

// Two lines: "chunkplan <version>" (the CMake project version) and the
// engines this binary can run here, e.g. "engines: CPU_SWEEP CPU_PLATEAU".
std::string VersionText();

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_VERSION_H_
