#ifndef CHUNKPLAN_SERVER_SERVICE_CHUNK_SEARCH_SERVICE_H_
#define CHUNKPLAN_SERVER_SERVICE_CHUNK_SEARCH_SERVICE_H_

// chunkplan.v1.ChunkSearch on gRPC's callback API. Each handler checks its
// request against the server's limits (request_intake.h), calls the planner
// and maps its answer and status; admission (admission.h), where a call runs
// (on a worker pool, or for a cheap Search on the callback thread itself:
// call_scheduler.h) and how a call is logged and counted (call_finisher.h)
// are apart. (Why the raw callback methods: chunk_search_service.cc.)

#include <cstdint>
#include <functional>

#include "chunkplan/planner/planner.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/service/admission.h"
#include "server/service/call_finisher.h"
#include "server/service/call_log.h"
#include "server/service/call_scheduler.h"
#include "server/service/request_intake.h"
#include "server/service/service_options.h"

namespace chunkplan::service {

class ChunkSearchService final
    : public v1::ChunkSearch::WithRawCallbackMethod_Plan<
          v1::ChunkSearch::WithRawCallbackMethod_Describe<
              v1::ChunkSearch::WithRawCallbackMethod_Frontier<
                  v1::ChunkSearch::WithRawCallbackMethod_Layout<
                      v1::ChunkSearch::WithRawCallbackMethod_Search<
                          v1::ChunkSearch::Service>>>>> {
 public:
  // Called once per finished call, on the thread that finishes it, before
  // the client is answered.
  using CallObserver = CallFinisher::CallObserver;

  // Every call is logged with LogCall, then passed to `observer` if set.
  explicit ChunkSearchService(ServiceOptions options = {},
                              CallObserver observer = {});

  // The same, its planner's engines each passed through `wrap`
  // (planner::Planner's; tests: an engine that holds chosen searches until
  // their stop check fires). chunkplan-server passes none.
  ChunkSearchService(ServiceOptions options, CallObserver observer,
                     const planner::EngineWrapper& wrap);

  // Waits for searches already queued. The gRPC server that serves this
  // service must be shut down first.
  ~ChunkSearchService() override;

  // The RPC: `request` holds a serialized chunkplan.v1.ChunkSearchRequest,
  // `response` receives a serialized ChunkSearchResponse. Answers, besides
  // the planner's own errors (INVALID_ARGUMENT, RESOURCE_EXHAUSTED for
  // CPU_SWEEP work beyond max_sweep_work, FAILED_PRECONDITION for an engine
  // this server cannot run): INVALID_ARGUMENT for bytes that are not a
  // ChunkSearchRequest; RESOURCE_EXHAUSTED when numels or dp_degrees has
  // more than max_params entries or the call's admission limit
  // (max_concurrent_searches, or max_concurrent_light_searches for a Search
  // that runs inline) is reached, or when the answer would pass
  // max_unsent_answer_bytes; DEADLINE_EXCEEDED / CANCELLED when the call's
  // deadline passes or it is cancelled before the search ends.
  grpc::ServerUnaryReactor* Search(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;

  // The Layout RPC, on the same path as Search (limits, admission, worker
  // pool, deadlines, the server's budget): `request` holds a serialized
  // chunkplan.v1.LayoutRequest, `response` receives a LayoutResponse.
  // Answers Search's errors (for the search part, and the limits applied to
  // search.numels, search.dp_degrees, configs and frozen), and the
  // planner's Layout errors (Planner::Layout). A request that names its
  // model has it described on the worker, after admission, and is then
  // weighed again by the described parameters (RESOURCE_EXHAUSTED if they
  // no longer fit max_params_in_flight).
  grpc::ServerUnaryReactor* Layout(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;

  // The Frontier RPC, on the same path: a LayoutRequest in, a
  // FrontierResponse out; Layout's errors and the planner's Frontier errors
  // (Planner::Frontier).
  grpc::ServerUnaryReactor* Frontier(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;

  // The Describe RPC: a ModelConfig in (ParseModelConfig: refused by size
  // before it is parsed), a ModelDescription out (DescribeChecked's errors).
  // A light call: admitted against max_concurrent_light_searches and
  // answered on the callback thread, its work bounded by max_config_bytes
  // and max_params.
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;

  // The Plan RPC: a PlanRequest in (ParseAndCheckPlan: refused by size
  // before it is decoded), a PlanResponse out. A heavy call holding
  // PlanWeight of max_params_in_flight (a request with search.model is
  // weighed again once its model is described, on the worker after
  // admission, and refused RESOURCE_EXHAUSTED if that weight no longer
  // fits), under the server's budget like Layout; errors: ConvertPlan's
  // (plan_convert.h) and Planner::Plan's.
  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;

  // Calls admitted and not yet answered, heavy and light together.
  int searches_in_flight() const { return admission_.in_flight(); }

  // Bytes of answers ready and not yet done with by gRPC (sent, or the
  // call ended): what max_unsent_answer_bytes bounds.
  uint64_t unsent_answer_bytes() const {
    return admission_.unsent_answer_bytes();
  }

  const planner::Planner& planner() const { return planner_; }
  const ServiceOptions& options() const { return options_; }

 private:
  using Clock = CallScheduler::Clock;
  using Work = CallScheduler::Work;

  // What a heavy call runs on a worker for its checked request.
  template <typename Parsed>
  using HeavyWork = std::function<absl::Status(
      const Parsed& request, const planner::StopCheck& stop, CallRecord& record,
      grpc::ByteBuffer* bytes)>;

  // How a heavy call's body is parsed and checked against the server's
  // limits (ParseAndCheckLayout, ParseAndCheckPlan: request_intake.h).
  template <typename Parsed>
  using HeavyIntake = absl::StatusOr<Parsed> (*)(const grpc::ByteBuffer&,
                                                 const ServiceOptions&,
                                                 CallRecord*);

  // `run` for a Layout or Frontier intake (request_intake.h): on the
  // converted request, or on the parsed one once converted (ConvertLayout:
  // its model described, after admission) and the call weighed again by
  // its described parameters (Reweigh).
  HeavyWork<LayoutIntake> OnLayout(HeavyWork<planner::LayoutRequest> run);

  // A heavy call (`method`: "Layout", "Frontier", "Plan"): its body taken
  // in by `intake` (the record's params, engine and held params filled
  // in), then served on the pool (CallScheduler::Serve), `run` doing the
  // work on a worker.
  template <typename Parsed>
  grpc::ServerUnaryReactor* ServeHeavy(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response,
                                       const char* method,
                                       HeavyIntake<Parsed> intake,
                                       HeavyWork<Parsed> run);

  // A Plan's work on a worker: ConvertPlan (describing the model), Reweigh,
  // Planner::Plan, the answer serialized into `bytes`.
  absl::Status RunPlan(const v1::PlanRequest& request,
                       const planner::StopCheck& stop, CallRecord& record,
                       grpc::ByteBuffer* bytes);

  // Makes the heavy call of `record` hold `weight` of max_params_in_flight
  // instead of record.held_params (then set to it): Admission::Reweigh.
  absl::Status Reweigh(CallRecord& record, uint64_t weight);

  const ServiceOptions options_;
  const planner::Planner planner_;
  Admission admission_;
  const CallFinisher finisher_;
  // Last, so that it is destroyed (and its workers joined) first.
  CallScheduler scheduler_;
};

// Applies the server-wide parts of `options` to `builder`: the receive
// message size limit, max_receive_message_bytes or, where smaller,
// LargestRequestBytes(max_params) + max_config_bytes (wire_counts.h: no
// request within max_params, and a config within max_config_bytes, is
// larger); and identity as the only message encoding, so that gRPC answers
// a call with any other grpc-encoding (gzip, deflate) UNIMPLEMENTED,
// naming it, from its headers, before any of its body is inflated (a
// compressed body's size bounds nothing of what it inflates to).
void ApplyServerOptions(const ServiceOptions& options,
                        grpc::ServerBuilder& builder);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CHUNK_SEARCH_SERVICE_H_
