#include "server/service/proto_convert.h"

#include "absl/strings/str_cat.h"

namespace chunkplan::service {
namespace {

using planner::Engine;

static_assert(static_cast<int>(Engine::kAuto) == v1::ENGINE_AUTO);
static_assert(static_cast<int>(Engine::kCpuSweep) == v1::ENGINE_CPU_SWEEP);
static_assert(static_cast<int>(Engine::kCpuPlateau) == v1::ENGINE_CPU_PLATEAU);
static_assert(static_cast<int>(Engine::kCuda) == v1::ENGINE_CUDA);

}  // namespace

absl::StatusOr<planner::SearchRequest> FromProto(
    const v1::ChunkSearchRequest& request) {
  if (!v1::Engine_IsValid(request.engine())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "engine is ", request.engine(),
        "; expected ENGINE_AUTO, ENGINE_CPU_SWEEP, ENGINE_CPU_PLATEAU or "
        "ENGINE_CUDA"));
  }
  planner::SearchRequest out;
  out.numels.assign(request.numels().begin(), request.numels().end());
  out.dp_degrees.assign(request.dp_degrees().begin(),
                        request.dp_degrees().end());
  out.search_range_m = request.search_range_m();
  out.search_interval = request.search_interval();
  if (request.has_min_chunk_size_m()) {
    out.min_chunk_size_m = request.min_chunk_size_m();
  }
  if (request.has_filter_exlarge_params()) {
    out.filter_exlarge_params = request.filter_exlarge_params();
  }
  out.engine = static_cast<Engine>(request.engine());
  return out;
}

v1::ChunkSearchResponse ToProto(const planner::SearchResult& result) {
  v1::ChunkSearchResponse out;
  for (const planner::ChunkConfig& c : result.configs) {
    v1::ChunkConfig* config = out.add_configs();
    config->set_dp_degree(c.dp_degree);
    config->set_chunk_size(c.chunk_size);
    config->set_keep_gathered(c.keep_gathered);
  }
  out.set_total_param_size(result.total_param_size);
  out.set_min_chunk_waste(result.min_chunk_waste);
  out.set_engine(static_cast<v1::Engine>(result.engine));
  out.set_candidates(result.candidates);
  out.set_search_nanos(result.search_nanos);
  return out;
}

}  // namespace chunkplan::service
