#include "server/service/chunk_search_service.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/service/call_stop.h"
#include "server/service/plan_convert.h"
#include "server/service/proto_convert.h"
#include "server/service/request_intake.h"
#include "server/service/wire_counts.h"
#include "spdlog/spdlog.h"

namespace chunkplan::service {
namespace {

using Clock = ChunkSearchService::Clock;

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

uint64_t MicrosSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                            start)
          .count());
}

}  // namespace

// Why a reactor of our own: a call's slot is freed once its answer is
// ready, but gRPC holds the answer until the client has read it, which a
// client need never do. The answer's bytes are counted from then until
// OnDone, when gRPC is done with the call (sent, cancelled or its
// connection closed), so that max_unsent_answer_bytes bounds them.
class ChunkSearchService::AnswerReactor final
    : public grpc::ServerUnaryReactor {
 public:
  explicit AnswerReactor(std::atomic<uint64_t>& unsent) : unsent_(unsent) {}

  // Counts `bytes`, already added to unsent_, as this call's until OnDone.
  void Hold(uint64_t bytes) { held_ = bytes; }

  void OnDone() override {
    if (held_ != 0) unsent_.fetch_sub(held_, std::memory_order_acq_rel);
    delete this;
  }

 private:
  std::atomic<uint64_t>& unsent_;
  uint64_t held_ = 0;
};

ChunkSearchService::ChunkSearchService(ServiceOptions options,
                                       CallObserver observer)
    : ChunkSearchService(options, std::move(observer),
                         planner::EngineWrapper{}) {}

ChunkSearchService::ChunkSearchService(ServiceOptions options,
                                       CallObserver observer,
                                       const planner::EngineWrapper& wrap)
    : options_(options),
      planner_(PlannerOptionsFor(options), wrap),
      observer_(std::move(observer)),
      pool_(common::ThreadsOrCores(options.search_threads)) {}

ChunkSearchService::~ChunkSearchService() = default;

absl::Status ChunkSearchService::Admit(bool light, uint64_t params) {
  std::atomic<int>& in_flight = light ? light_in_flight_ : heavy_in_flight_;
  const unsigned flag = light ? options_.max_concurrent_light_searches
                              : options_.max_concurrent_searches;
  const int limit = static_cast<int>(std::max(1u, std::min(flag, 1u << 30)));
  int current = in_flight.load(std::memory_order_relaxed);
  do {
    if (current >= limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this server already runs its limit of ", flag,
          light ? " concurrent light searches (--max_concurrent_light_searches)"
                : " concurrent searches (--max_concurrent_searches)",
          "; retry later"));
    }
  } while (!in_flight.compare_exchange_weak(current, current + 1,
                                            std::memory_order_acq_rel));
  if (light) return absl::OkStatus();
  absl::Status held = HoldParams(0, params);
  if (!held.ok()) in_flight.fetch_sub(1, std::memory_order_acq_rel);
  return held;
}

absl::Status ChunkSearchService::HoldParams(uint64_t own, uint64_t want) {
  const uint64_t limit = options_.max_params_in_flight;
  uint64_t held = heavy_params_in_flight_.load(std::memory_order_relaxed);
  do {
    const uint64_t others = held - own;
    if (others != 0 && want > limit - std::min(others, limit)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the searches this server runs already hold ", others, " of its ",
          limit,
          " parameters in flight (--max_params_in_flight), and this one has ",
          want, "; retry later"));
    }
  } while (!heavy_params_in_flight_.compare_exchange_weak(
      held, held - own + want, std::memory_order_acq_rel));
  return absl::OkStatus();
}

absl::Status ChunkSearchService::Reweigh(CallRecord& record, uint64_t weight) {
  absl::Status status = HoldParams(record.held_params, weight);
  if (status.ok()) record.held_params = weight;
  return status;
}

void ChunkSearchService::Release(bool light, uint64_t params) {
  if (light) {
    light_in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  heavy_params_in_flight_.fetch_sub(params, std::memory_order_acq_rel);
  heavy_in_flight_.fetch_sub(1, std::memory_order_acq_rel);
}

// Why a worker pool, and when not: the callback API runs handlers on a few
// gRPC-owned threads, which also dispatch every other call (health checks
// included). A CPU_SWEEP can run for seconds; run there it would stall
// them. The handler therefore checks and converts the request (microseconds
// to a few milliseconds for a million parameters), admits it against
// max_concurrent_searches with an atomic counter, and queues it on a fixed
// pool of search_threads workers; the queue never holds more than the two
// limits together, and a search beyond its limit is answered
// RESOURCE_EXHAUSTED at once. A cheap plateau-engine Search (RunsInline:
// every model at GeminiPlugin's defaults) is the exception: the hop to a
// worker (a wake-up and two context switches) costs more than the search,
// so it runs on the callback thread, for at most inline_slice before it
// moves to the pool after all. It is admitted by its estimated work, against
// a limit of its own (max_concurrent_light_searches), so that heavy callers
// holding every heavy slot cannot starve it.
//
// Why the raw callback method (ChunkSearch::WithRawCallbackMethod_Search)
// and not ChunkSearch::CallbackService: the typed callback handler of gRPC
// 1.51 answers a request body it cannot parse with UNIMPLEMENTED and an
// empty message, without calling the service. Parsing the bytes here lets
// such a request get INVALID_ARGUMENT with a message that says what is
// wrong. The wire contract is the same; clients use the generated stubs.
grpc::ServerUnaryReactor* ChunkSearchService::Serve(
    grpc::CallbackServerContext* context, const absl::Status& prepared,
    WorkHere here, WorkToPool to_pool, grpc::ByteBuffer* response,
    CallRecord record, Clock::time_point started, bool run_inline) {
  // A call answered before admission has no answer to hold.
  grpc::ServerUnaryReactor* refused = context->DefaultReactor();
  if (!prepared.ok()) {
    Finish(context, refused, std::move(record), prepared, started);
    return refused;
  }
  if (absl::Status admitted = Admit(run_inline, record.held_params);
      !admitted.ok()) {
    Finish(context, refused, std::move(record), std::move(admitted), started);
    return refused;
  }
  auto* reactor = new AnswerReactor(unsent_answer_bytes_);
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} admitted peer={} params={}",
                  absl::AsciiStrToLower(record.method), context->peer(),
                  record.params);
  }
  if (run_inline) {
    RunInline(context, reactor, here, to_pool, response, std::move(record),
              started);
  } else {
    Submit(context, reactor, to_pool(), response, std::move(record), started);
  }
  return reactor;
}

void ChunkSearchService::Submit(grpc::CallbackServerContext* context,
                                AnswerReactor* reactor, Work work,
                                grpc::ByteBuffer* response, CallRecord record,
                                Clock::time_point started) {
  pool_.Submit([this, context, reactor, response, started,
                record = std::move(record), work = std::move(work)]() mutable {
    RunWork(context, reactor, work, response, std::move(record), started);
  });
}

void ChunkSearchService::RunInline(grpc::CallbackServerContext* context,
                                   AnswerReactor* reactor, WorkHere here,
                                   WorkToPool to_pool,
                                   grpc::ByteBuffer* response,
                                   CallRecord record,
                                   Clock::time_point started) {
  const CallStop call(context, started, options_.max_search_time);
  const InlineStop check(call, started, options_.inline_slice);
  const planner::StopCheck stop = StopCheckOf(check);
  absl::Status status = check();
  if (status.ok()) status = here(stop, record, response);
  if (IsMovedToPool(status)) {
    record.moved_to_pool = true;
    Submit(context, reactor, to_pool(), response, std::move(record), started);
    return;
  }
  record.ran_inline = true;
  Release(/*light=*/true, record.held_params);
  status = HoldAnswer(reactor, std::move(status), response);
  Finish(context, reactor, std::move(record), std::move(status), started);
}

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
  return Serve(
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
  return Serve(
      context, prepared, work, [&work]() -> Work { return std::move(work); },
      response, std::move(record), started, /*run_inline=*/false);
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
  return Serve(
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
            PlanWeight(record.params, plan->cluster.world_sizes.size()));
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

void ChunkSearchService::RunWork(grpc::CallbackServerContext* context,
                                 AnswerReactor* reactor, const Work& work,
                                 grpc::ByteBuffer* response, CallRecord record,
                                 Clock::time_point started) {
  const CallStop check(context, started, options_.max_search_time);
  const planner::StopCheck stop = StopCheckOf(check);
  // A call that waited for a worker past its deadline does not start.
  absl::Status status = check();
  if (status.ok()) status = work(stop, record, response);
  // Free the slot before answering, so that a client that calls again as
  // soon as it has its answer finds the slot free.
  Release(/*light=*/record.moved_to_pool, record.held_params);
  status = HoldAnswer(reactor, std::move(status), response);
  Finish(context, reactor, std::move(record), std::move(status), started);
}

absl::Status ChunkSearchService::HoldAnswer(AnswerReactor* reactor,
                                            absl::Status status,
                                            grpc::ByteBuffer* response) {
  if (!status.ok()) return status;
  const uint64_t bytes = response->Length();
  const uint64_t limit = options_.max_unsent_answer_bytes;
  uint64_t held = unsent_answer_bytes_.load(std::memory_order_relaxed);
  do {
    if (held > limit || bytes > limit - held) {
      response->Clear();
      return absl::ResourceExhaustedError(
          absl::StrCat("this server already holds ", held,
                       " bytes of answers not yet sent, and this answer of ",
                       bytes, " bytes would pass its limit of ", limit,
                       " (--max_unsent_answer_bytes); retry later"));
    }
  } while (!unsent_answer_bytes_.compare_exchange_weak(
      held, held + bytes, std::memory_order_acq_rel));
  reactor->Hold(bytes);
  return absl::OkStatus();
}

void ChunkSearchService::Finish(grpc::CallbackServerContext* context,
                                grpc::ServerUnaryReactor* reactor,
                                CallRecord record, absl::Status status,
                                Clock::time_point started) {
  // A call its client ended (a reset stream, a deadline passed on the
  // client's side) is counted and logged as such, whatever the handler
  // found first (a reset request reads as an empty one).
  if (!status.ok() && context->IsCancelled()) {
    status = CallStop(context, started, options_.max_search_time)();
  }
  record.status = std::move(status);
  record.micros = MicrosSince(started);
  if (CallIsLogged(record)) {
    record.peer = context->peer();
    LogCall(record);
  }
  if (observer_) observer_(record);
  reactor->Finish(common::ToGrpcStatus(record.status));
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
