#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

absl::string_view EngineName(Engine engine) {
  switch (engine) {
    case Engine::kAuto:
      return "AUTO";
    case Engine::kCpuSweep:
      return "CPU_SWEEP";
    case Engine::kCpuPlateau:
      return "CPU_PLATEAU";
    case Engine::kCuda:
      return "CUDA";
  }
  return "UNKNOWN";
}

}  // namespace chunkplan::planner
