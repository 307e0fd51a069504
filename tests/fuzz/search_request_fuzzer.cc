// libFuzzer target: arbitrary bytes as the body of a chunkplan.v1.ChunkSearch
// Search call, taken where the server takes it -- ParseAndCheck under the
// server's limits (server/service/request_intake.h), then Planner::Search
// with the planner options the server derives from those limits. A body
// that names its model (field 8, ChunkSearchRequest.model) is described
// there by the model families (server/models), within FuzzOptions'
// max_params and the config size limit: the JSON parser and every family
// are fuzzed through the same entry point (corpus seeds model_*.pb).
//
// A finding is a crash, a sanitizer report, a leak, a timeout (libFuzzer's
// -timeout), or one of the checks below failing:
//   - every error has a code the wire contract allows for it, and a message;
//   - the wire count (wire_counts.h) refuses a body for its size exactly
//     where protobuf's message holds a field past the limit, and reads as
//     malformed only bytes that protobuf refuses;
//   - an answer serializes, and holds a config per degree;
//   - AUTO's cost model (plain C++, built everywhere) gives finite,
//     non-negative estimates on every plan, whether or not this build has
//     the CUDA engine (it once divided by a start size of 0);
//   - every engine, asked by name, answers within the contract, and
//     CPU_SWEEP, CPU_PLATEAU and CUDA (where built and a device exists) give
//     the same answer wherever they answer.
// A search that is slow but legitimate is not a hang: a StopCheck ends it
// after kSearchBudget with DEADLINE_EXCEEDED, as a call deadline would.

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/planner/search_types.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/request/search_plan.h"
#include "server/service/proto_convert.h"
#include "server/service/request_intake.h"
#include "server/service/service_options.h"
#include "server/service/wire_counts.h"

namespace chunkplan::service {
namespace {

using Clock = std::chrono::steady_clock;

// Time one search may take before its StopCheck ends it; far below the
// -timeout that tests/fuzz/run-fuzz.sh gives libFuzzer.
constexpr Clock::duration kSearchBudget = std::chrono::milliseconds(500);

// The server's options (the flags' defaults), except where the fuzzer needs
// smaller numbers: max_params low enough that an input within run-fuzz.sh's
// -max_len (16 KiB) can exceed it, yet above numpy's 8192-element block so
// that the filter's blocked sums are reached; sweep work limits that keep
// each input to milliseconds; one sweep thread.
ServiceOptions FuzzOptions() {
  ServiceOptions options;
  options.max_params = 10000;
  options.max_sweep_work = uint64_t{1} << 22;
  options.max_cuda_work = uint64_t{1} << 22;
  options.sweep_threads = 1;
  return options;
}

// Reports `what` about the input at hand and aborts (a libFuzzer finding).
[[noreturn]] void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "search_request_fuzzer: %s: %s\n", what,
               status.ToString().c_str());
  std::abort();
}

// DEADLINE_EXCEEDED once kSearchBudget has passed since its creation.
planner::StopCheck BudgetStop() {
  const Clock::time_point deadline = Clock::now() + kSearchBudget;
  return [deadline]() -> absl::Status {
    if (Clock::now() < deadline) return absl::OkStatus();
    return absl::DeadlineExceededError("fuzz search budget spent");
  };
}

// True for the codes a search may end with on a request that ParseAndCheck
// took: the planner's checks, its limits, an engine this binary cannot run,
// and our own StopCheck.
bool IsSearchCode(absl::StatusCode code) {
  return code == absl::StatusCode::kInvalidArgument ||
         code == absl::StatusCode::kResourceExhausted ||
         code == absl::StatusCode::kFailedPrecondition ||
         code == absl::StatusCode::kDeadlineExceeded;
}

// True when a search ended for want of time or work budget, not because of
// what the request holds.
bool IsBudgetCode(absl::StatusCode code) {
  return code == absl::StatusCode::kResourceExhausted ||
         code == absl::StatusCode::kDeadlineExceeded;
}

// The search of `request`, with its status checked against the contract.
absl::StatusOr<planner::SearchResult> CheckedSearch(
    const planner::Planner& planner, const planner::SearchRequest& request) {
  absl::StatusOr<planner::SearchResult> result =
      planner.Search(request, BudgetStop());
  if (!result.ok()) {
    if (!IsSearchCode(result.status().code())) {
      Fail("Search answered a code outside the contract", result.status());
    }
    if (result.status().message().empty()) {
      Fail("Search answered an error without a message", result.status());
    }
    return result;
  }
  if (result->configs.empty()) {
    Fail("Search answered no configs", absl::OkStatus());
  }
  if (result->engine == planner::Engine::kAuto) {
    Fail("Search answered engine AUTO", absl::OkStatus());
  }
  std::string wire;
  if (!ToProto(*result).SerializeToString(&wire)) {
    Fail("the response does not serialize", absl::OkStatus());
  }
  return result;
}

// Aborts unless `a` and `b`, the answers of two engines, agree.
void CheckSameAnswer(const planner::SearchResult& a,
                     const planner::SearchResult& b) {
  if (a.configs != b.configs || a.total_param_size != b.total_param_size ||
      a.min_chunk_waste != b.min_chunk_waste || a.candidates != b.candidates) {
    std::fprintf(stderr,
                 "search_request_fuzzer: %s and %s disagree: waste %llu vs "
                 "%llu, candidates %llu vs %llu, %zu vs %zu configs\n",
                 std::string(planner::EngineName(a.engine)).c_str(),
                 std::string(planner::EngineName(b.engine)).c_str(),
                 static_cast<unsigned long long>(a.min_chunk_waste),
                 static_cast<unsigned long long>(b.min_chunk_waste),
                 static_cast<unsigned long long>(a.candidates),
                 static_cast<unsigned long long>(b.candidates),
                 a.configs.size(), b.configs.size());
    std::abort();
  }
}

// Runs `engine` on `request`, which gave `first`: the two must give one
// answer, or the same verdict on the request, unless one of them ran out of
// budget or the engine cannot run here.
void CheckEngineAgrees(const planner::Planner& planner,
                       const planner::SearchRequest& request,
                       const absl::StatusOr<planner::SearchResult>& first,
                       planner::Engine engine) {
  planner::SearchRequest other = request;
  other.engine = engine;
  const absl::StatusOr<planner::SearchResult> second =
      CheckedSearch(planner, other);
  if (second.status().code() == absl::StatusCode::kFailedPrecondition ||
      first.status().code() == absl::StatusCode::kFailedPrecondition) {
    return;  // an engine this machine cannot run (CUDA without a device)
  }
  if (first.ok() && second.ok()) {
    CheckSameAnswer(*first, *second);
    return;
  }
  if (IsBudgetCode(first.status().code()) ||
      IsBudgetCode(second.status().code())) {
    return;
  }
  if (first.status().code() != second.status().code()) {
    std::fprintf(stderr,
                 "search_request_fuzzer: the engines disagree on the "
                 "request: %s answered %s, %s answered %s\n",
                 std::string(planner::EngineName(first.ok() ? first->engine
                                                            : request.engine))
                     .c_str(),
                 first.status().ToString().c_str(),
                 std::string(planner::EngineName(other.engine)).c_str(),
                 second.status().ToString().c_str());
    std::abort();
  }
}

// AUTO's choice on the plan of `request`: finite, non-negative estimates,
// and an answer, on every plan BuildSearchPlan accepts.
void CheckCostModel(const planner::SearchRequest& request,
                    const ServiceOptions& options) {
  const absl::StatusOr<planner::SearchPlan> plan =
      planner::BuildSearchPlan(request);
  if (!plan.ok()) return;
  const planner::SweepCostEstimate e = EstimateSweepCosts(plan->sweep);
  if (!(e.plateau_seconds >= 0) || !(e.cuda_seconds >= 0) ||
      !std::isfinite(e.plateau_seconds) || !std::isfinite(e.cuda_seconds)) {
    std::fprintf(stderr,
                 "search_request_fuzzer: cost model estimates %g s (plateau) "
                 "and %g s (CUDA)\n",
                 e.plateau_seconds, e.cuda_seconds);
    std::abort();
  }
  planner::AutoPrefersCuda(plan->sweep, options.max_cuda_work);
}

// The wire count of `body` against protobuf's message of it: where protobuf
// parses the body, the count refuses it (RESOURCE_EXHAUSTED) exactly when
// numels or dp_degrees holds more than `limit` entries, else is OK; where the
// count finds the bytes malformed, protobuf refuses them too.
void CheckWireCountAgrees(const grpc::ByteBuffer& body, uint64_t limit) {
  const absl::Status counted = CheckSearchRequestCounts(body, limit);
  const absl::StatusOr<v1::ChunkSearchRequest> parsed = ParseRequest(body);
  if (!parsed.ok()) {
    if (counted.ok()) return;  // malformed inside what the count skips
    if (counted.code() != absl::StatusCode::kInvalidArgument &&
        counted.code() != absl::StatusCode::kResourceExhausted) {
      Fail("the wire count answered a code outside its contract", counted);
    }
    return;
  }
  const bool over = static_cast<uint64_t>(parsed->numels_size()) > limit ||
                    static_cast<uint64_t>(parsed->dp_degrees_size()) > limit;
  if (over != (counted.code() == absl::StatusCode::kResourceExhausted) ||
      (!over && !counted.ok())) {
    Fail("the wire count and protobuf's message disagree", counted);
  }
}

// One input, as the server would take it (see the top of this file).
void FuzzOne(const uint8_t* data, size_t size) {
  static const ServiceOptions options = FuzzOptions();
  static const planner::Planner* const planner =
      new planner::Planner(PlannerOptionsFor(options));

  grpc::Slice slice(data, size);
  const grpc::ByteBuffer body(&slice, 1);
  CheckWireCountAgrees(body, options.max_params);
  absl::StatusOr<planner::SearchRequest> request = ParseAndCheck(body, options);
  if (!request.ok()) {
    const absl::StatusCode code = request.status().code();
    if (code != absl::StatusCode::kInvalidArgument &&
        code != absl::StatusCode::kResourceExhausted) {
      Fail("ParseAndCheck answered a code outside the contract",
           request.status());
    }
    if (request.status().message().empty()) {
      Fail("ParseAndCheck answered an error without a message",
           request.status());
    }
    return;
  }

  CheckCostModel(*request, options);
  const absl::StatusOr<planner::SearchResult> first =
      CheckedSearch(*planner, *request);
  for (planner::Engine engine :
       {planner::Engine::kCpuSweep, planner::Engine::kCpuPlateau,
        planner::Engine::kCuda}) {
    const planner::Engine ran = first.ok() ? first->engine : request->engine;
    if (engine != ran) CheckEngineAgrees(*planner, *request, first, engine);
  }
}

}  // namespace
}  // namespace chunkplan::service

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chunkplan::service::FuzzOne(data, size);
  return 0;
}
