#include "bench/workload_loader.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"
#include "server/planner/request/search_plan.h"
#include "server/service/proto_convert.h"

namespace chunkplan::bench {
namespace {

// `status` with its message prefixed by `path`.
absl::Status InFile(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<Workload> LoadOne(const std::filesystem::path& file) {
  const std::string path = file.string();
  CHUNKPLAN_ASSIGN_OR_RETURN(std::string text, common::ReadInput(path));
  v1::ChunkSearchRequest proto;
  if (absl::Status s = common::JsonToMessage(text, &proto); !s.ok()) {
    return InFile(path, s);
  }
  absl::StatusOr<planner::SearchRequest> request = service::FromProto(proto);
  if (!request.ok()) return InFile(path, request.status());
  absl::StatusOr<planner::SearchPlan> plan = planner::BuildSearchPlan(*request);
  if (!plan.ok()) return InFile(path, plan.status());

  Workload w;
  w.name = file.stem().string();
  w.params = request->numels.size();
  w.candidates = plan->sweep.grid.count;
  w.swept_params = plan->sweep.sizes.size();
  w.sweep_work = plan->sweep.SweepWork();
  w.request = *std::move(request);
  w.wire = proto.SerializeAsString();
  return w;
}

}  // namespace

absl::StatusOr<std::vector<Workload>> LoadWorkloads(absl::string_view dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(std::string(dir)), error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  if (error) {
    return absl::NotFoundError(
        absl::StrCat("cannot list ", dir, ": ", error.message()));
  }
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat("no .json workload in ", dir));
  }
  std::sort(files.begin(), files.end());
  std::vector<Workload> workloads;
  for (const auto& file : files) {
    CHUNKPLAN_ASSIGN_OR_RETURN(Workload w, LoadOne(file));
    workloads.push_back(std::move(w));
  }
  return workloads;
}

}  // namespace chunkplan::bench
