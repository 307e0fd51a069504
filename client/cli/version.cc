#include "client/cli/version.h"

#include "absl/strings/str_cat.h"
#include "server/planner/planner.h"

#ifndef CHUNKPLAN_VERSION
#error "CHUNKPLAN_VERSION must be defined by the build (PROJECT_VERSION)"
#endif

namespace chunkplan::cli {

std::string VersionText() {
  return absl::StrCat("chunkplan ", CHUNKPLAN_VERSION,
                      "\nengines: ", planner::Planner().DescribeEngines(),
                      "\n");
}

}  // namespace chunkplan::cli
