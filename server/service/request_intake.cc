#include "server/service/request_intake.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/search_work.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/service/plan_convert.h"
#include "server/service/proto_convert.h"
#include "server/service/wire_counts.h"
#include "server/service/workload_convert.h"

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

// The counter of `Message`'s repeated fields (wire_counts.h).
using Counter = absl::Status (*)(const grpc::ByteBuffer&, uint64_t);
template <typename Message>
constexpr Counter kCounter = nullptr;
template <>
constexpr Counter kCounter<v1::ChunkSearchRequest> = CheckSearchRequestCounts;
template <>
constexpr Counter kCounter<v1::LayoutRequest> = CheckLayoutRequestCounts;
template <>
constexpr Counter kCounter<v1::PlanRequest> = CheckPlanRequestCounts;

// The `Message` serialized in `bytes` (which is left as it was), or
// INVALID_ARGUMENT saying that the bytes are not one, and why: protobuf's
// reason where it gives one, else where the wire counter (kCounter) finds
// the bytes stop being protobuf's wire format.
template <typename Message>
absl::StatusOr<Message> ParseMessage(const grpc::ByteBuffer& bytes) {
  // Deserialize consumes its buffer; the copy shares the slices.
  grpc::ByteBuffer copy(bytes);
  Message message;
  const grpc::Status parsed =
      grpc::SerializationTraits<Message>::Deserialize(&copy, &message);
  if (parsed.ok()) return message;
  std::string reason = parsed.error_message();
  if (reason.empty() && kCounter<Message> == nullptr) {
    reason = "a field is cut short or malformed";
  } else if (reason.empty()) {
    const absl::Status wire = kCounter<Message>(bytes, UINT64_MAX);
    reason = !wire.ok() ? std::string(wire.message())
                        : "a nested message's field is cut short or malformed";
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the request body (", bytes.Length(), " bytes) is not a valid ",
      Message::descriptor()->full_name(), ": ", reason));
}

// A call whose stream ended (reset by its client) before its request
// arrived: gRPC hands the handler no body at all.
absl::Status NoRequest() {
  return absl::CancelledError(
      "the call ended (its client reset the stream) before its request "
      "arrived");
}

// What a body meets before it is decoded: CANCELLED for no body at all
// (NoRequest); RESOURCE_EXHAUSTED for a repeated field past `max_params`
// (kCounter); else OK. A body of at most `max_params` bytes is not counted:
// each entry of a repeated field takes a byte at least.
template <typename Message>
absl::Status CheckBeforeDecoding(const grpc::ByteBuffer& bytes,
                                 uint64_t max_params) {
  if (!bytes.Valid()) return NoRequest();
  if (bytes.Length() > max_params) {
    const absl::Status counted = kCounter<Message>(bytes, max_params);
    if (counted.code() == absl::StatusCode::kResourceExhausted) return counted;
  }
  return absl::OkStatus();
}

// The `Message` in `bytes`: CheckBeforeDecoding, then ParseMessage.
template <typename Message>
absl::StatusOr<Message> CountAndParse(const grpc::ByteBuffer& bytes,
                                      uint64_t max_params) {
  if (absl::Status s = CheckBeforeDecoding<Message>(bytes, max_params);
      !s.ok()) {
    return s;
  }
  return ParseMessage<Message>(bytes);
}

// The limits of a model request on a server with `options`.
ModelLimits ModelLimitsOf(const ServiceOptions& options) {
  return {options.max_params, options.max_config_bytes};
}

// CheckCounts for a Search request's repeated fields.
absl::Status CheckSearchCounts(uint64_t numels, uint64_t dp_degrees,
                               uint64_t limit) {
  return CheckCounts({{"numels", numels}, {"dp_degrees", dp_degrees}}, limit);
}

// Writes a parsed request's `params` (numels entries) and `engine` into
// `record`, if given.
void Record(uint64_t params, planner::Engine engine, CallRecord* record) {
  if (record == nullptr) return;
  record->params = params;
  record->held_params = params;
  record->engine = engine;
}

// The `Message` (a LayoutRequest or PlanRequest) in `bytes`
// (CountAndParse), its search part's numels and engine in `record` (Record).
template <typename Message>
absl::StatusOr<Message> ParseRecorded(const grpc::ByteBuffer& bytes,
                                      const ServiceOptions& options,
                                      CallRecord* record) {
  absl::StatusOr<Message> request =
      CountAndParse<Message>(bytes, options.max_params);
  if (request.ok()) {
    Record(static_cast<uint64_t>(request->search().numels_size()),
           static_cast<planner::Engine>(request->search().engine()), record);
  }
  return request;
}

// `converted`, its numels counted in `record` (if given): a request that
// names its model has as many parameters as were described.
absl::StatusOr<planner::SearchRequest> Counted(
    absl::StatusOr<planner::SearchRequest> converted, CallRecord* record) {
  if (converted.ok() && record != nullptr) {
    record->params = converted->numels.size();
    record->held_params = record->params;
  }
  return converted;
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
  return ParseMessage<v1::ChunkSearchRequest>(bytes);
}

absl::StatusOr<planner::SearchRequest> CheckAndConvert(
    const v1::ChunkSearchRequest& request, const ServiceOptions& options,
    ModelNotes* notes) {
  if (absl::Status s = CheckSearchCounts(
          request.numels_size(), request.dp_degrees_size(), options.max_params);
      !s.ok()) {
    return s;
  }
  return FromProto(request, ModelLimitsOf(options), nullptr, notes);
}

absl::StatusOr<planner::LayoutRequest> CheckAndConvert(
    const v1::LayoutRequest& request, const ServiceOptions& options,
    ModelNotes* notes) {
  if (absl::Status s = CheckCounts(
          {{"search.numels", request.search().numels_size()},
           {"search.dp_degrees", request.search().dp_degrees_size()},
           {"configs", request.configs_size()},
           {"frozen", request.frozen_size()}},
          options.max_params);
      !s.ok()) {
    return s;
  }
  return FromProto(request, ModelLimitsOf(options), notes);
}

bool RunsInline(const planner::SearchRequest& request,
                const ServiceOptions& options) {
  if (options.max_inline_work == 0) return false;
  const uint64_t bound = planner::SweepWorkBound(request);
  return bound <= options.max_inline_work &&
         planner::CpuPlateauServes(request, bound);
}

absl::StatusOr<planner::SearchRequest> ParseAndCheck(
    const grpc::ByteBuffer& bytes, const ServiceOptions& options,
    CallRecord* record) {
  if (absl::Status s = CheckBeforeDecoding<v1::ChunkSearchRequest>(
          bytes, options.max_params);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::ChunkSearchRequest> request = ParseRequest(bytes);
  if (!request.ok()) return request.status();
  Record(static_cast<uint64_t>(request->numels_size()),
         static_cast<planner::Engine>(request->engine()), record);
  return Counted(CheckAndConvert(*request, options,
                                 record != nullptr ? &record->model : nullptr),
                 record);
}

absl::StatusOr<LayoutIntake> ParseAndCheckLayout(const grpc::ByteBuffer& bytes,
                                                 const ServiceOptions& options,
                                                 CallRecord* record) {
  absl::StatusOr<v1::LayoutRequest> request =
      ParseRecorded<v1::LayoutRequest>(bytes, options, record);
  if (!request.ok()) return request.status();
  if (request->has_workload()) {
    if (absl::Status s = CheckWorkloadSizes(request->workload()); !s.ok()) {
      return s;
    }
  }
  if (request->search().has_model()) return LayoutIntake(*std::move(request));
  absl::StatusOr<planner::LayoutRequest> converted =
      CheckAndConvert(*request, options);
  if (!converted.ok()) return converted.status();
  return LayoutIntake(*std::move(converted));
}

absl::StatusOr<planner::LayoutRequest> ConvertLayout(
    const v1::LayoutRequest& request, const ServiceOptions& options,
    CallRecord* record) {
  absl::StatusOr<planner::LayoutRequest> converted = CheckAndConvert(
      request, options, record != nullptr ? &record->model : nullptr);
  if (converted.ok() && record != nullptr) {
    record->params = converted->search.numels.size();
  }
  return converted;
}

absl::StatusOr<v1::PlanRequest> ParseAndCheckPlan(const grpc::ByteBuffer& bytes,
                                                  const ServiceOptions& options,
                                                  CallRecord* record) {
  absl::StatusOr<v1::PlanRequest> request =
      ParseRecorded<v1::PlanRequest>(bytes, options, record);
  if (request.ok() && record != nullptr) {
    record->held_params =
        PlanWeight(record->params, PlanWorldSizeCount(request->cluster()));
  }
  return request;
}

absl::StatusOr<planner::PlanRequest> ConvertPlan(const v1::PlanRequest& request,
                                                 const ServiceOptions& options,
                                                 ModelNotes* notes) {
  return FromProtoInOrder(request, ModelLimitsOf(options), notes);
}

uint64_t PlanWeight(uint64_t params, uint64_t world_sizes) {
  const uint64_t searches = kPlanSearchesPerWorldSize *
                            std::min<uint64_t>(world_sizes, kPlanMaxWorldSizes);
  return params > UINT64_MAX / std::max<uint64_t>(searches, 1)
             ? UINT64_MAX
             : params * searches;
}

uint64_t PlanWorldSizeCount(const v1::Cluster& cluster) {
  return cluster.whole_nodes()
             ? cluster.max_nodes()
             : static_cast<uint64_t>(cluster.world_sizes_size());
}

absl::StatusOr<v1::ModelConfig> ParseModelConfig(
    const grpc::ByteBuffer& bytes, const ServiceOptions& options) {
  if (!bytes.Valid()) return NoRequest();
  const uint64_t largest = options.max_config_bytes + kModelConfigSlackBytes;
  if (options.max_config_bytes <= UINT64_MAX - kModelConfigSlackBytes &&
      bytes.Length() > largest) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request body is ", bytes.Length(),
                     " bytes; a ModelConfig on this server is at most ",
                     largest, " (a config of at most ",
                     options.max_config_bytes, " bytes, --max_config_bytes)"));
  }
  return ParseMessage<v1::ModelConfig>(bytes);
}

absl::StatusOr<models::ModelDescription> DescribeChecked(
    const v1::ModelConfig& config, const ServiceOptions& options) {
  return DescribeConfig(config, ModelLimitsOf(options), TpOptionsOf(config));
}

}  // namespace chunkplan::service
