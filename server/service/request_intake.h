#ifndef CHUNKPLAN_SERVER_SERVICE_REQUEST_INTAKE_H_
#define CHUNKPLAN_SERVER_SERVICE_REQUEST_INTAKE_H_

// From a Search call's raw request body to the planner's request, under the
// server's limits, and the planner's options for those limits. (Every check
// a request meets, and where: server/planner/request/request_checks.h.) The
// service takes every request through these functions, and so does the fuzzer
// (tests/fuzz/search_request_fuzzer.cc): what the fuzzer checks is what the
// server runs.

#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/planner/search_types.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/service/call_log.h"
#include "server/service/model_convert.h"
#include "server/service/service_options.h"

namespace chunkplan::service {

// The planner's options for a server with `options`: its sweep work limits
// (max_sweep_work, max_cuda_work) and sweep threads.
planner::PlannerOptions PlannerOptionsFor(const ServiceOptions& options);

// The chunkplan.v1.ChunkSearchRequest serialized in `bytes` (which is left
// as it was), or INVALID_ARGUMENT saying that the bytes are not one.
absl::StatusOr<v1::ChunkSearchRequest> ParseRequest(
    const grpc::ByteBuffer& bytes);

// The planner's request for `request` within `options`' limits. Errors:
// RESOURCE_EXHAUSTED when numels or dp_degrees has more than
// options.max_params entries, naming the field, its size and the limit;
// FromProto's (an engine outside chunkplan.v1.Engine; with model, the
// description's errors within max_params and max_config_bytes).
// Every other check of the values is the planner's.
// `notes` as FromProto's.
absl::StatusOr<planner::SearchRequest> CheckAndConvert(
    const v1::ChunkSearchRequest& request, const ServiceOptions& options,
    ModelNotes* notes = nullptr);

// The planner's request for the request body `bytes`: refused by size
// before it is decoded (CheckSearchRequestCounts, wire_counts.h:
// RESOURCE_EXHAUSTED naming the field), then ParseRequest and
// CheckAndConvert (a body that is no request is INVALID_ARGUMENT saying where
// it stops being one; CANCELLED for no body at all, a stream that its client
// reset before the request arrived). `record` (if given) gets the decoded
// request's params (numels entries; with model, the described parameters once
// described) and engine, also for a request that CheckAndConvert refuses,
// and the model's notes.
absl::StatusOr<planner::SearchRequest> ParseAndCheck(
    const grpc::ByteBuffer& bytes, const ServiceOptions& options,
    CallRecord* record = nullptr);

// Whether a Search of the checked `request` runs inline on the callback
// thread: planner::SweepWorkBound at most options.max_inline_work (0:
// never), and served by CPU_PLATEAU whatever the machine
// (planner::CpuPlateauServes: asked by name, or AUTO below the work where
// AUTO may pick CUDA).
bool RunsInline(const planner::SearchRequest& request,
                const ServiceOptions& options);

// The planner's Layout request for `request` within `options`' limits:
// RESOURCE_EXHAUSTED when search.numels, search.dp_degrees, configs or
// frozen has more than options.max_params entries, naming the field; the
// errors of FromProto.
absl::StatusOr<planner::LayoutRequest> CheckAndConvert(
    const v1::LayoutRequest& request, const ServiceOptions& options,
    ModelNotes* notes = nullptr);

// A Layout or Frontier request as intake leaves it: converted, or, when it
// names its model (search.model), only parsed, so that the model is
// described after admission (ConvertLayout).
using LayoutIntake = std::variant<planner::LayoutRequest, v1::LayoutRequest>;

// ParseAndCheck for a LayoutRequest body (Layout and Frontier): refused by
// size before it is decoded (CheckLayoutRequestCounts: search.numels,
// search.dp_degrees, configs, frozen), then parsed, a workload's sizes
// checked (CheckWorkloadSizes) and, unless it names its model,
// CheckAndConvert; `record` gets search's params (0 with a model)
// and engine.
absl::StatusOr<LayoutIntake> ParseAndCheckLayout(const grpc::ByteBuffer& bytes,
                                                 const ServiceOptions& options,
                                                 CallRecord* record = nullptr);

// The planner's request for an intake that names its model: CheckAndConvert
// (the model described within `options`' limits), its described parameters
// then in record->params and its notes in record->model (if given;
// record->held_params is left as it is: the caller weighs the call again).
absl::StatusOr<planner::LayoutRequest> ConvertLayout(
    const v1::LayoutRequest& request, const ServiceOptions& options,
    CallRecord* record = nullptr);

// ParseAndCheck for a PlanRequest body: refused by size before it is
// decoded (CheckPlanRequestCounts: search.numels, search.dp_degrees, frozen,
// cluster.world_sizes), then parsed; nothing else is checked here, and a
// model is not yet described (ConvertPlan, after admission). `record` gets
// search's numels (0 with model) and engine, and held_params
// PlanWeight(numels, PlanWorldSizeCount(cluster)).
absl::StatusOr<v1::PlanRequest> ParseAndCheckPlan(const grpc::ByteBuffer& bytes,
                                                  const ServiceOptions& options,
                                                  CallRecord* record = nullptr);

// The planner's Plan request for `request` within `options`' limits
// (FromProtoInOrder, plan_convert.h: with search.model, the model described
// within max_params and max_config_bytes; the cluster checked here only
// when something else is refused, else by Planner::Plan).
// `notes` as FromProto's.
absl::StatusOr<planner::PlanRequest> ConvertPlan(const v1::PlanRequest& request,
                                                 const ServiceOptions& options,
                                                 ModelNotes* notes = nullptr);

// The searches a Plan runs per world size at most (docs/plan.md: ColossalAI's
// search, the peak objective on the request's grid and on the wide grid),
// and the world sizes a Plan takes at most (more: the planner's
// INVALID_ARGUMENT).
inline constexpr uint64_t kPlanSearchesPerWorldSize = 3;
inline constexpr uint64_t kPlanMaxWorldSizes = 64;

// What a Plan of `params` parameters over `world_sizes` world sizes holds of
// --max_params_in_flight while admitted: its parameters once per search it
// may run (kPlanSearchesPerWorldSize per world size, at most
// kPlanMaxWorldSizes counted), saturating at 2^64-1. Heavy calls are
// admitted by this estimate of their work: a Plan weighs as much as the
// Frontier calls it stands for.
uint64_t PlanWeight(uint64_t params, uint64_t world_sizes);

// The world sizes a Plan over `cluster` asks for, as PlanWeight counts them:
// max_nodes with whole_nodes, else the world_sizes listed.
uint64_t PlanWorldSizeCount(const v1::Cluster& cluster);

// What a ModelConfig body may hold besides its hf_config_json: the
// architecture's name and the fields' tags and lengths.
inline constexpr uint64_t kModelConfigSlackBytes = 4096;

// The chunkplan.v1.ModelConfig in the Describe body `bytes`: CANCELLED for
// no body (as ParseAndCheck); INVALID_ARGUMENT, before anything is parsed,
// for a body longer than options.max_config_bytes + kModelConfigSlackBytes,
// and for bytes that are not a ModelConfig.
absl::StatusOr<v1::ModelConfig> ParseModelConfig(const grpc::ByteBuffer& bytes,
                                                 const ServiceOptions& options);

// The description of `config` within `options`' limits (DescribeConfig,
// model_convert.h, with max_params and max_config_bytes).
absl::StatusOr<models::ModelDescription> DescribeChecked(
    const v1::ModelConfig& config, const ServiceOptions& options);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_REQUEST_INTAKE_H_
