#include "client/cli/version.h"

#include "absl/strings/str_cat.h"
#include "server/planner/planner.h"

#ifndef CHUNKPLAN_VERSION
#error "CHUNKPLAN_VERSION must be defined by the build (PROJECT_VERSION)"
#endif

namespace chunkplan::cli {

std::string VersionText() {
  std::string text =
      absl::StrCat("chunkplan ", CHUNKPLAN_VERSION, "\nengines:");
  for (const planner::Engine engine : planner::Planner().AvailableEngines()) {
    absl::StrAppend(&text, " ", planner::EngineName(engine));
  }
  return absl::StrCat(text, "\n");
}

}  // namespace chunkplan::cli
