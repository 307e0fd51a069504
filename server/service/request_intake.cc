#include "server/service/request_intake.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/service/proto_convert.h"

namespace chunkplan::service {
namespace {

// RESOURCE_EXHAUSTED naming `field`, its size and the limit, when the size
// is above the limit.
absl::Status CheckCount(absl::string_view field, int size, uint64_t limit) {
  if (static_cast<uint64_t>(size) <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(field, " has ", size, " entries; this server takes at most ",
                   limit, " parameters per request (--max_params)"));
}

}  // namespace

planner::PlannerOptions PlannerOptionsFor(const ServiceOptions& options) {
  planner::PlannerOptions out;
  out.cpu_sweep.max_work = options.max_sweep_work;
  out.cpu_sweep.threads = options.sweep_threads;
  out.cuda.max_work = options.max_cuda_work;
  return out;
}

absl::StatusOr<v1::ChunkSearchRequest> ParseRequest(
    const grpc::ByteBuffer& bytes) {
  // Deserialize consumes its buffer; the copy shares the slices.
  grpc::ByteBuffer copy(bytes);
  v1::ChunkSearchRequest request;
  const grpc::Status parsed =
      grpc::SerializationTraits<v1::ChunkSearchRequest>::Deserialize(&copy,
                                                                     &request);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request body (", bytes.Length(),
                     " bytes) is not a valid chunkplan.v1.ChunkSearchRequest: ",
                     parsed.error_message()));
  }
  return request;
}

absl::StatusOr<planner::SearchRequest> CheckAndConvert(
    const v1::ChunkSearchRequest& request, const ServiceOptions& options) {
  if (absl::Status s =
          CheckCount("numels", request.numels_size(), options.max_params);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckCount("dp_degrees", request.dp_degrees_size(),
                                  options.max_params);
      !s.ok()) {
    return s;
  }
  return FromProto(request);
}

absl::StatusOr<planner::SearchRequest> ParseAndCheck(
    const grpc::ByteBuffer& bytes, const ServiceOptions& options) {
  absl::StatusOr<v1::ChunkSearchRequest> request = ParseRequest(bytes);
  if (!request.ok()) return request.status();
  return CheckAndConvert(*request, options);
}

}  // namespace chunkplan::service
