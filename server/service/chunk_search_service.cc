#include "server/service/chunk_search_service.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/service/call_stop.h"
#include "server/service/proto_convert.h"
#include "server/service/request_intake.h"
#include "spdlog/spdlog.h"

namespace chunkplan::service {
namespace {

using Clock = ChunkSearchService::Clock;

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
      pool_(common::ThreadsOrCores(options.search_threads)) {}

ChunkSearchService::~ChunkSearchService() = default;

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
  return CheckAndConvert(*request, options_);
}

// Why a worker pool and not the reactor thread: the callback API runs
// handlers on a few gRPC-owned threads, which also dispatch every other call
// (health checks included). A CPU_SWEEP can run for seconds; run there it
// would stall them. The handler therefore only checks and converts the
// request (microseconds to a few milliseconds for a million parameters),
// admits it against max_concurrent_searches with an atomic counter, and
// queues it on a fixed pool of search_threads workers; the queue never holds
// more than max_concurrent_searches searches, and a search beyond that is
// answered RESOURCE_EXHAUSTED at once.
//
// Why the raw callback method (ChunkSearch::WithRawCallbackMethod_Search)
// and not ChunkSearch::CallbackService: the typed callback handler of gRPC
// 1.51 answers a request body it cannot parse with UNIMPLEMENTED and an
// empty message, without calling the service. Parsing the bytes here lets
// such a request get INVALID_ARGUMENT with a message that says what is
// wrong. The wire contract is the same; clients use the generated stubs.
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
  const planner::StopCheck stop =
      CallStopCheck(context, started, options_.max_search_time);
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
  reactor->Finish(common::ToGrpcStatus(record.status));
}

void ApplyServerOptions(const ServiceOptions& options,
                        grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
}

}  // namespace chunkplan::service
