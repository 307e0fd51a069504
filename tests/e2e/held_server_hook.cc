// chunkplan-held-server's engine hook (server/engine_hook.h): chunkplan-server
// with engines that hold every search marked with testing::kHeldNumel until
// its call is stopped (its deadline, its cancellation, --max_search_time,
// the drain's cancel) or, with --held_release_file, until that file exists;
// then the real engine runs it. For the end-to-end tests that need a call
// still running however fast the machine (tests/e2e/server_test.py,
// HELD_NUMEL). Never installed, never in the image.

#include <sys/stat.h>

#include <string>

#include "absl/flags/flag.h"
#include "server/engine_hook.h"
#include "testing/held_engine.h"

ABSL_FLAG(std::string, held_release_file, "",
          "chunkplan-held-server only: a marked search runs once this file "
          "exists (empty: it is held until its call is stopped).");

namespace chunkplan::server {

planner::EngineWrapper BinaryEngineWrapper() {
  const std::string file = absl::GetFlag(FLAGS_held_release_file);
  if (file.empty()) return testing::HoldMarkedSearches();
  return testing::HoldMarkedSearches([file] {
    struct stat info;
    return stat(file.c_str(), &info) == 0;
  });
}

}  // namespace chunkplan::server
