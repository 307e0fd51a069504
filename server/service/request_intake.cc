#include "server/service/request_intake.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/plan/search_plan.h"
#include "server/service/proto_convert.h"
#include "server/service/search_request_decoder.h"

namespace chunkplan::service {
namespace {

// RESOURCE_EXHAUSTED naming the first field whose size is above `limit`,
// its size and the limit; OK when none is.
absl::Status CheckCounts(
    std::initializer_list<std::pair<absl::string_view, uint64_t>> fields,
    uint64_t limit) {
  for (const auto& [field, size] : fields) {
    if (size > limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          field, " has ", size, " entries; this server takes at most ", limit,
          " parameters per request (--max_params)"));
    }
  }
  return absl::OkStatus();
}

// The `Message` serialized in `bytes` (which is left as it was), or
// INVALID_ARGUMENT saying that the bytes are not a `type_name`.
template <typename Message>
absl::StatusOr<Message> ParseMessage(const grpc::ByteBuffer& bytes,
                                     absl::string_view type_name) {
  // Deserialize consumes its buffer; the copy shares the slices.
  grpc::ByteBuffer copy(bytes);
  Message message;
  const grpc::Status parsed =
      grpc::SerializationTraits<Message>::Deserialize(&copy, &message);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request body (", bytes.Length(), " bytes) is not a valid ",
        type_name, ": ", parsed.error_message()));
  }
  return message;
}

}  // namespace

planner::PlannerOptions PlannerOptionsFor(const ServiceOptions& options) {
  planner::PlannerOptions out;
  out.cpu_sweep.max_work = options.max_sweep_work;
  out.cpu_sweep.threads = options.sweep_threads;
  out.cuda.max_work = options.max_cuda_work;
  out.max_plateau_work = options.max_plateau_work;
  return out;
}

absl::StatusOr<v1::ChunkSearchRequest> ParseRequest(
    const grpc::ByteBuffer& bytes) {
  return ParseMessage<v1::ChunkSearchRequest>(
      bytes, "chunkplan.v1.ChunkSearchRequest");
}

absl::StatusOr<v1::LayoutRequest> ParseLayoutRequest(
    const grpc::ByteBuffer& bytes) {
  return ParseMessage<v1::LayoutRequest>(bytes, "chunkplan.v1.LayoutRequest");
}

absl::StatusOr<planner::SearchRequest> CheckAndConvert(
    const v1::ChunkSearchRequest& request, const ServiceOptions& options) {
  if (absl::Status s = CheckCounts({{"numels", request.numels_size()},
                                    {"dp_degrees", request.dp_degrees_size()}},
                                   options.max_params);
      !s.ok()) {
    return s;
  }
  return FromProto(request);
}

absl::StatusOr<planner::LayoutRequest> CheckAndConvert(
    const v1::LayoutRequest& request, const ServiceOptions& options) {
  if (absl::Status s = CheckCounts(
          {{"search.numels", request.search().numels_size()},
           {"search.dp_degrees", request.search().dp_degrees_size()},
           {"configs", request.configs_size()},
           {"frozen", request.frozen_size()}},
          options.max_params);
      !s.ok()) {
    return s;
  }
  return FromProto(request);
}

bool RunsInline(const planner::SearchRequest& request,
                const ServiceOptions& options) {
  if (options.max_inline_work == 0) return false;
  const uint64_t bound = planner::SweepWorkBound(request);
  if (bound > options.max_inline_work) return false;
  // AUTO picks CPU_PLATEAU below kCudaMinWork, whatever the device.
  return request.engine == planner::Engine::kCpuPlateau ||
         (request.engine == planner::Engine::kAuto &&
          bound < planner::kCudaMinWork);
}

absl::StatusOr<planner::SearchRequest> ParseAndCheck(
    const grpc::ByteBuffer& bytes, const ServiceOptions& options,
    CallRecord* record) {
  // The body as one contiguous run: usually the one slice it arrived in,
  // else a copy.
  grpc::Slice flat;
  if (!bytes.TrySingleSlice(&flat).ok()) (void)bytes.DumpToSingleSlice(&flat);
  if (std::optional<planner::SearchRequest> decoded =
          DecodeSearchRequest(absl::string_view(
              reinterpret_cast<const char*>(flat.begin()), flat.size()))) {
    if (record != nullptr) {
      record->params = decoded->numels.size();
      record->engine = decoded->engine;
    }
    if (absl::Status s =
            CheckCounts({{"numels", decoded->numels.size()},
                         {"dp_degrees", decoded->dp_degrees.size()}},
                        options.max_params);
        !s.ok()) {
      return s;
    }
    return std::move(*decoded);
  }
  absl::StatusOr<v1::ChunkSearchRequest> request = ParseRequest(bytes);
  if (!request.ok()) return request.status();
  if (record != nullptr) {
    record->params = static_cast<uint64_t>(request->numels_size());
    record->engine = static_cast<planner::Engine>(request->engine());
  }
  return CheckAndConvert(*request, options);
}

}  // namespace chunkplan::service
