#ifndef CHUNKPLAN_SERVER_ENGINE_HOOK_H_
#define CHUNKPLAN_SERVER_ENGINE_HOOK_H_

// The one point where a build of the server binary may put something
// around its planner's engines, chosen at link time: chunkplan-server links
// engine_hook.cc (nothing around them); the end-to-end tests' own build,
// chunkplan-held-server, links tests/e2e/held_server_hook.cc (engines that
// hold the searches a test marks). main.cc is compiled once for both.

#include "chunkplan/planner/planner.h"

namespace chunkplan::server {

// What main.cc passes to its ChunkSearchService: empty in chunkplan-server.
planner::EngineWrapper BinaryEngineWrapper();

}  // namespace chunkplan::server

#endif  // CHUNKPLAN_SERVER_ENGINE_HOOK_H_
