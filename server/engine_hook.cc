#include "server/engine_hook.h"

namespace chunkplan::server {

planner::EngineWrapper BinaryEngineWrapper() { return {}; }

}  // namespace chunkplan::server
