#include "server/service/call_finisher.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "common/grpc_status.h"
#include "server/service/call_stop.h"
#include "spdlog/spdlog.h"

namespace chunkplan::service {
namespace {

uint64_t MicrosSince(CallFinisher::Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          CallFinisher::Clock::now() - start)
          .count());
}

}  // namespace

CallFinisher::CallFinisher(absl::Duration max_search_time,
                           CallObserver observer)
    : max_search_time_(max_search_time), observer_(std::move(observer)) {}

void CallFinisher::Finish(grpc::CallbackServerContext* context,
                          grpc::ServerUnaryReactor* reactor, CallRecord record,
                          absl::Status status,
                          Clock::time_point started) const {
  // A call its client ended (a reset stream, a deadline passed on the
  // client's side) is counted and logged as such, whatever the handler
  // found first (a reset request reads as an empty one).
  if (!status.ok() && context->IsCancelled()) {
    status = CallStop(context, started, max_search_time_)();
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

void CallFinisher::LogAdmitted(const grpc::CallbackServerContext& context,
                               const CallRecord& record) {
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} admitted peer={} params={}",
                  absl::AsciiStrToLower(record.method), context.peer(),
                  record.params);
  }
}

}  // namespace chunkplan::service
