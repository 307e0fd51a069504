#include "server/service/chunk_search_service.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/service/plan_convert.h"
#include "server/service/proto_convert.h"
#include "server/service/request_intake.h"
#include "server/service/wire_counts.h"

namespace chunkplan::service {
namespace {

// `response` serialized into `bytes`; INTERNAL if that fails.
template <typename Message>
absl::Status SerializeResponse(const Message& response,
                               grpc::ByteBuffer* bytes) {
  bool own_buffer = false;
  const grpc::Status serialized = grpc::SerializationTraits<Message>::Serialize(
      response, bytes, &own_buffer);
  if (serialized.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cannot serialize the response: ",
                                          serialized.error_message()));
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

ChunkSearchService::ChunkSearchService(ServiceOptions options,
                                       CallObserver observer)
    : ChunkSearchService(options, std::move(observer),
                         planner::EngineWrapper{}) {}

ChunkSearchService::ChunkSearchService(ServiceOptions options,
                                       CallObserver observer,
                                       const planner::EngineWrapper& wrap)
    : options_(options),
      planner_(PlannerOptionsFor(options), wrap),
      admission_(options),
      finisher_(options.max_search_time, std::move(observer)),
      scheduler_(options, admission_, finisher_) {}

ChunkSearchService::~ChunkSearchService() = default;

// Why the raw callback methods (ChunkSearch::WithRawCallbackMethod_Search
// and the others) and not ChunkSearch::CallbackService: the typed callback
// handler of gRPC 1.51 answers a request body it cannot parse with
// UNIMPLEMENTED and an empty message, without calling the service. Parsing
// the bytes here lets such a request get INVALID_ARGUMENT with a message
// that says what is wrong. The wire contract is the same; clients use the
// generated stubs.
grpc::ServerUnaryReactor* ChunkSearchService::Search(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const Clock::time_point started = Clock::now();
  CallRecord record;
  record.method = "Search";
  absl::StatusOr<planner::SearchRequest> search =
      ParseAndCheck(*request, options_, &record);
  const absl::Status prepared = search.status();
  const bool run_inline = prepared.ok() && RunsInline(*search, options_);
  const auto run = [this](const planner::SearchRequest& request,
                          const planner::StopCheck& stop, CallRecord& record,
                          grpc::ByteBuffer* bytes) -> absl::Status {
    absl::StatusOr<planner::SearchResult> result =
        planner_.Search(request, stop);
    if (!result.ok()) return result.status();
    record.candidates = result->candidates;
    record.engine = result->engine;
    record.fallback_reason = std::move(result->fallback_reason);
    v1::ChunkSearchResponse response = ToProto(*result);
    SetModelReport(record.model, request.numels,
                   response.mutable_model_report());
    return SerializeResponse(response, bytes);
  };
  return scheduler_.Serve(
      context, prepared,
      [&](const planner::StopCheck& stop, CallRecord& record,
          grpc::ByteBuffer* bytes) {
        return run(*search, stop, record, bytes);
      },
      [&]() -> Work {
        return [run, search = std::move(search)](const planner::StopCheck& stop,
                                                 CallRecord& record,
                                                 grpc::ByteBuffer* bytes) {
          return run(*search, stop, record, bytes);
        };
      },
      response, std::move(record), started, run_inline);
}

template <typename Parsed>
grpc::ServerUnaryReactor* ChunkSearchService::ServeHeavy(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response, const char* method, HeavyIntake<Parsed> intake,
    HeavyWork<Parsed> run) {
  const Clock::time_point started = Clock::now();
  CallRecord record;
  record.method = method;
  absl::StatusOr<Parsed> parsed = intake(*request, options_, &record);
  const absl::Status prepared = parsed.status();
  Work work = [parsed = std::move(parsed), run = std::move(run)](
                  const planner::StopCheck& stop, CallRecord& record,
                  grpc::ByteBuffer* bytes) {
    return run(*parsed, stop, record, bytes);
  };
  return scheduler_.Serve(
      context, prepared, work, [&work]() -> Work { return std::move(work); },
      response, std::move(record), started, /*run_inline=*/false);
}

absl::Status ChunkSearchService::Reweigh(CallRecord& record, uint64_t weight) {
  absl::Status status = admission_.Reweigh(record.held_params, weight);
  if (status.ok()) record.held_params = weight;
  return status;
}

ChunkSearchService::HeavyWork<LayoutIntake> ChunkSearchService::OnLayout(
    HeavyWork<planner::LayoutRequest> run) {
  return [this, run = std::move(run)](
             const LayoutIntake& intake, const planner::StopCheck& stop,
             CallRecord& record, grpc::ByteBuffer* bytes) -> absl::Status {
    if (const auto* converted = std::get_if<planner::LayoutRequest>(&intake)) {
      return run(*converted, stop, record, bytes);
    }
    absl::StatusOr<planner::LayoutRequest> layout =
        ConvertLayout(std::get<v1::LayoutRequest>(intake), options_, &record);
    if (!layout.ok()) return layout.status();
    if (absl::Status s = Reweigh(record, record.params); !s.ok()) return s;
    return run(*layout, stop, record, bytes);
  };
}

grpc::ServerUnaryReactor* ChunkSearchService::Frontier(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return ServeHeavy<LayoutIntake>(
      context, request, response, "Frontier", ParseAndCheckLayout,
      OnLayout([this](const planner::LayoutRequest& layout,
                      const planner::StopCheck& stop, CallRecord& record,
                      grpc::ByteBuffer* bytes) -> absl::Status {
        absl::StatusOr<planner::FrontierResult> result =
            planner_.Frontier(layout, stop);
        if (!result.ok()) return result.status();
        record.candidates = result->candidates;
        record.engine = result->engine;
        v1::FrontierResponse response = ToProto(*result);
        SetModelReport(record.model, layout.search.numels,
                       response.mutable_model_report());
        return SerializeResponse(response, bytes);
      }));
}

grpc::ServerUnaryReactor* ChunkSearchService::Layout(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return ServeHeavy<LayoutIntake>(
      context, request, response, "Layout", ParseAndCheckLayout,
      OnLayout([this](const planner::LayoutRequest& layout,
                      const planner::StopCheck& stop, CallRecord& record,
                      grpc::ByteBuffer* bytes) -> absl::Status {
        absl::StatusOr<planner::LayoutResult> result =
            planner_.Layout(layout, stop);
        if (!result.ok()) return result.status();
        if (result->search.has_value()) {
          record.candidates = result->search->candidates;
          record.engine = result->search->engine;
          record.fallback_reason = std::move(result->search->fallback_reason);
        }
        v1::LayoutResponse response = ToProto(*result);
        SetModelReport(record.model, layout.search.numels,
                       response.mutable_model_report());
        return SerializeResponse(response, bytes);
      }));
}

grpc::ServerUnaryReactor* ChunkSearchService::Describe(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const Clock::time_point started = Clock::now();
  CallRecord record;
  record.method = "Describe";
  absl::StatusOr<v1::ModelConfig> config = ParseModelConfig(*request, options_);
  const absl::Status prepared = config.status();
  const auto run = [this](const v1::ModelConfig& config, CallRecord& record,
                          grpc::ByteBuffer* bytes) -> absl::Status {
    absl::StatusOr<models::ModelDescription> description =
        DescribeChecked(config, options_);
    if (!description.ok()) return description.status();
    record.params = description->numels.size();
    return SerializeResponse(ToProto(*description), bytes);
  };
  // Light: it runs inline, and on the pool only if the slice had passed
  // before it started (it asks no StopCheck while it runs).
  return scheduler_.Serve(
      context, prepared,
      [&](const planner::StopCheck&, CallRecord& record,
          grpc::ByteBuffer* bytes) { return run(*config, record, bytes); },
      [&]() -> Work {
        return [run, config = std::move(config)](const planner::StopCheck&,
                                                 CallRecord& record,
                                                 grpc::ByteBuffer* bytes) {
          return run(*config, record, bytes);
        };
      },
      response, std::move(record), started, /*run_inline=*/true);
}

grpc::ServerUnaryReactor* ChunkSearchService::Plan(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return ServeHeavy<v1::PlanRequest>(
      context, request, response, "Plan", ParseAndCheckPlan,
      [this](const v1::PlanRequest& plan, const planner::StopCheck& stop,
             CallRecord& record, grpc::ByteBuffer* bytes) {
        return RunPlan(plan, stop, record, bytes);
      });
}

absl::Status ChunkSearchService::RunPlan(const v1::PlanRequest& request,
                                         const planner::StopCheck& stop,
                                         CallRecord& record,
                                         grpc::ByteBuffer* bytes) {
  absl::StatusOr<planner::PlanRequest> plan =
      ConvertPlan(request, options_, &record.model);
  if (!plan.ok()) return plan.status();
  if (request.search().has_model()) {
    record.params = plan->search.numels.size();
    if (absl::Status s = Reweigh(
            record,
            PlanWeight(record.params,
                       PlanWorldSizeCount(request.cluster()) *
                           std::max<size_t>(1, plan->tp_shards.size()) *
                           std::max<size_t>(1, plan->extra_dp_sizes.size())));
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<planner::PlanResult> result = planner_.Plan(*plan, stop);
  if (!result.ok()) return result.status();
  v1::PlanResponse response = ToProto(*result, request.gemini().precision());
  SetModelReport(record.model, plan->search.numels,
                 response.mutable_model_report());
  return SerializeResponse(response, bytes);
}

void ApplyServerOptions(const ServiceOptions& options,
                        grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<uint64_t>(
      static_cast<uint64_t>(options.max_receive_message_bytes),
      SaturatingAdd(LargestRequestBytes(options.max_params),
                    options.max_config_bytes))));
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
}

}  // namespace chunkplan::service
