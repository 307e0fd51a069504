#ifndef CHUNKPLAN_SERVER_SERVICE_PROTO_CONVERT_H_
#define CHUNKPLAN_SERVER_SERVICE_PROTO_CONVERT_H_

// chunkplan.v1 messages <-> the planner's plain values: the one place where
// the wire contract meets the planner.

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/search_types.h"
#include "chunkplan/planner/verdict_types.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "server/service/model_convert.h"

namespace chunkplan::service {

// The planner's request for `request`, with the proto defaults applied
// (min_chunk_size_m 32, filter_exlarge_params true when unset). With
// `model`: the described numels (ModelNumels, within `limits`; the rest of
// the description in `described` when given), and search_interval 0 taken
// as kGeminiDefaultSearchInterval; `notes` (when given) gets the model's
// notes (NotesOf).
// Errors: INVALID_ARGUMENT for an engine value outside chunkplan.v1.Engine;
// ModelNumels'. Every other check is the planner's.
absl::StatusOr<planner::SearchRequest> FromProto(
    const v1::ChunkSearchRequest& request, const ModelLimits& limits = {},
    std::optional<models::ModelDescription>* described = nullptr,
    ModelNotes* notes = nullptr, const models::TpOptions& tp = {});

// FromProto's search settings of `request`, without its parameters (numels,
// model, dp_degrees): the engine checked, the defaults applied, and with
// `model` search_interval 0 taken as kGeminiDefaultSearchInterval.
// Errors: INVALID_ARGUMENT for an engine value outside chunkplan.v1.Engine.
absl::StatusOr<planner::SearchRequest> SearchSettingsFromProto(
    const v1::ChunkSearchRequest& request);

// The wire form of a planner result.
v1::ChunkSearchResponse ToProto(const planner::SearchResult& result);

// The planner's Layout request for `request`, with the proto defaults
// applied (GeminiPlugin's: master weights and pinned memory on when unset).
// Errors: INVALID_ARGUMENT for an enum value outside chunkplan.v1 (the
// search's engine, the precision, the optimizer, the objective), naming the
// field; the search's errors (with its model, within `limits`) prefixed
// "search."; with a workload, CheckWorkloadSizes' (before the model is
// described) and PlanWorkloadOf's (workload_convert.h); with a cluster,
// planner::CheckLayoutCluster's (before the model is described). Every
// other check is the planner's. `notes` as the search's FromProto.
absl::StatusOr<planner::LayoutRequest> FromProto(
    const v1::LayoutRequest& request, const ModelLimits& limits = {},
    ModelNotes* notes = nullptr);

// The planner's Gemini settings for `gemini`, with GeminiPlugin's defaults
// (master weights and pinned memory on) where unset. Errors:
// INVALID_ARGUMENT naming the field ("gemini.precision", "gemini.placement",
// "gemini.optimizer") for a value outside its chunkplan.v1 enum. Every other
// check is the planner's.
absl::StatusOr<planner::GeminiSettings> FromProto(
    const v1::GeminiSettings& gemini);

// `g` into `out`, every field set (the optional ones where `g` has them),
// with `precision` (the planner's settings do not carry it).
void SetGemini(const planner::GeminiSettings& g, v1::Precision precision,
               v1::GeminiSettings* out);

// The wire forms of a chunk config and of a rank's bytes, into `out`.
void SetConfig(const planner::ChunkConfig& c, v1::ChunkConfig* out);
void SetRank(const planner::RankMemory& m, v1::RankMemory* out);

// The planner's cluster: every field copied, the margin where set (the
// planner checks their values).
planner::Cluster ClusterFromProto(const v1::Cluster& c);

// `v` into `out`, every field set.
void SetVerdict(const planner::Verdict& v, v1::Verdict* out);

// `status` with its message behind `prefix` (e.g. "search.").
absl::Status Prefixed(absl::string_view prefix, const absl::Status& status);

// The wire form of a Layout result.
v1::LayoutResponse ToProto(const planner::LayoutResult& result);

// The wire form of a Frontier result.
v1::FrontierResponse ToProto(const planner::FrontierResult& result);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_PROTO_CONVERT_H_
