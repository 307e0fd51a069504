#include "server/service/chunk_search_service.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/service/call_stop.h"
#include "server/service/proto_convert.h"
#include "server/service/status_convert.h"
#include "spdlog/spdlog.h"

namespace chunkplan::service {
namespace {

using Clock = ChunkSearchService::Clock;

planner::PlannerOptions PlannerOptionsFor(const ServiceOptions& options) {
  planner::PlannerOptions out;
  out.cpu_sweep.max_work = options.max_sweep_work;
  out.cpu_sweep.threads = options.sweep_threads;
  out.cuda.max_work = options.max_cuda_work;
  return out;
}

unsigned SearchThreads(const ServiceOptions& options) {
  if (options.search_threads != 0) return options.search_threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

// RESOURCE_EXHAUSTED naming `field`, its size and the limit, when the size
// is above the limit.
absl::Status CheckCount(absl::string_view field, int size, uint64_t limit) {
  if (static_cast<uint64_t>(size) <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(field, " has ", size, " entries; this server takes at most ",
                   limit, " parameters per request (--max_params)"));
}

// The request in `bytes`, or INVALID_ARGUMENT saying that it is not one.
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

// `response` serialized into `bytes`; INTERNAL if that fails.
absl::Status SerializeResponse(const v1::ChunkSearchResponse& response,
                               grpc::ByteBuffer* bytes) {
  bool own_buffer = false;
  const grpc::Status serialized =
      grpc::SerializationTraits<v1::ChunkSearchResponse>::Serialize(
          response, bytes, &own_buffer);
  if (serialized.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cannot serialize the response: ",
                                          serialized.error_message()));
}

uint64_t MicrosSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                            start)
          .count());
}

}  // namespace

ChunkSearchService::ChunkSearchService(ServiceOptions options,
                                       CallObserver observer)
    : options_(options),
      planner_(PlannerOptionsFor(options)),
      observer_(std::move(observer)),
      pool_(SearchThreads(options)) {}

ChunkSearchService::~ChunkSearchService() = default;

absl::Status ChunkSearchService::CheckLimits(
    const v1::ChunkSearchRequest& request) const {
  if (absl::Status s =
          CheckCount("numels", request.numels_size(), options_.max_params);
      !s.ok()) {
    return s;
  }
  return CheckCount("dp_degrees", request.dp_degrees_size(),
                    options_.max_params);
}

bool ChunkSearchService::Admit() {
  const int limit = static_cast<int>(
      std::max(1u, std::min(options_.max_concurrent_searches, 1u << 30)));
  int current = in_flight_.load(std::memory_order_relaxed);
  do {
    if (current >= limit) return false;
  } while (!in_flight_.compare_exchange_weak(current, current + 1,
                                             std::memory_order_acq_rel));
  return true;
}

absl::StatusOr<planner::SearchRequest> ChunkSearchService::Prepare(
    const grpc::ByteBuffer& bytes, CallRecord& record) const {
  absl::StatusOr<v1::ChunkSearchRequest> request = ParseRequest(bytes);
  if (!request.ok()) return request.status();
  record.params = static_cast<uint64_t>(request->numels_size());
  record.engine = static_cast<planner::Engine>(request->engine());
  if (absl::Status limits = CheckLimits(*request); !limits.ok()) {
    return limits;
  }
  return FromProto(*request);
}

grpc::ServerUnaryReactor* ChunkSearchService::Search(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const Clock::time_point started = Clock::now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  CallRecord record;
  record.peer = context->peer();
  absl::StatusOr<planner::SearchRequest> search = Prepare(*request, record);
  if (!search.ok()) {
    Finish(reactor, std::move(record), search.status(), started);
    return reactor;
  }
  if (!Admit()) {
    Finish(reactor, std::move(record),
           absl::ResourceExhaustedError(absl::StrCat(
               "this server already runs its limit of ",
               options_.max_concurrent_searches,
               " concurrent searches (--max_concurrent_searches); retry "
               "later")),
           started);
    return reactor;
  }
  spdlog::debug("search admitted peer={} params={}", record.peer,
                record.params);
  pool_.Submit([this, context, reactor, response, started,
                record = std::move(record),
                search = *std::move(search)]() mutable {
    RunSearch(context, reactor, search, response, std::move(record), started);
  });
  return reactor;
}

void ChunkSearchService::RunSearch(grpc::CallbackServerContext* context,
                                   grpc::ServerUnaryReactor* reactor,
                                   const planner::SearchRequest& request,
                                   grpc::ByteBuffer* response,
                                   CallRecord record,
                                   Clock::time_point started) {
  const planner::StopCheck stop = CallStopCheck(context);
  // A search that waited for a worker past its deadline does not start.
  absl::Status status = stop();
  if (status.ok()) {
    absl::StatusOr<planner::SearchResult> result =
        planner_.Search(request, stop);
    status = result.status();
    if (result.ok()) {
      record.candidates = result->candidates;
      record.engine = result->engine;
      record.fallback_reason = std::move(result->fallback_reason);
      status = SerializeResponse(ToProto(*result), response);
    }
  }
  // Free the slot before answering, so that a client that calls again as
  // soon as it has its answer finds the slot free.
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  Finish(reactor, std::move(record), std::move(status), started);
}

void ChunkSearchService::Finish(grpc::ServerUnaryReactor* reactor,
                                CallRecord record, absl::Status status,
                                Clock::time_point started) {
  record.status = std::move(status);
  record.micros = MicrosSince(started);
  LogCall(record);
  if (observer_) observer_(record);
  reactor->Finish(ToGrpcStatus(record.status));
}

void ApplyServerOptions(const ServiceOptions& options,
                        grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
}

}  // namespace chunkplan::service
