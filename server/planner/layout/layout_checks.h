#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_LAYOUT_CHECKS_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_LAYOUT_CHECKS_H_

// Field checks of a LayoutRequest beyond its search part (whose checks are
// request/request_checks.h's). Each error is INVALID_ARGUMENT with a message
// that starts with the field (and index) at fault.

#include "absl/status/status.h"
#include "chunkplan/planner/layout_types.h"

namespace chunkplan::planner {

// Layout's frozen flags: none, or one per numel.
absl::Status CheckFrozen(const LayoutRequest& request);

// Layout's given configs (request.configs non-empty), as GeminiDDP's
// chunk_config_dict must be: each for a degree that some parameter has, no
// degree twice, every degree present covered, no chunk size of 0, and a
// non-gathered chunk size a multiple of its degree (ColossalAI asserts it:
// the chunk is split into dp_degree shards). Requires CheckShape to have
// passed on request.search.
absl::Status CheckGivenConfigs(const LayoutRequest& request);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_LAYOUT_CHECKS_H_
