#ifndef CHUNKPLAN_SERVER_METRICS_CALL_METRICS_H_
#define CHUNKPLAN_SERVER_METRICS_CALL_METRICS_H_

// chunkplan-server's Prometheus metrics, fed by the service's CallObserver
// and rendered in the Prometheus text exposition format (version 0.0.4):
//
//   chunkplan_build_info{version,engines}            gauge, always 1
//   chunkplan_calls_total{method,code}               counter
//   chunkplan_call_duration_seconds{method}          histogram
//   chunkplan_call_params{method}                    histogram (numels/call)
//   chunkplan_call_candidates{method}                histogram (grid points
//                                                    swept; calls that ran a
//                                                    search only)
//   chunkplan_searches_total{engine}                 counter (OK searches, by
//                                                    the engine that ran)
//   chunkplan_engine_fallbacks_total{engine}         counter (searches another
//                                                    engine finished)
//   chunkplan_searches_in_flight                     gauge
//   chunkplan_engine_usable{engine}                  gauge, 1 or 0: whether
//                                                    the engine can run now
//                                                    (0: no device, or a
//                                                    sticky device failure)
//
// Thread-safe: Observe and Exposition may be called from any thread.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/metrics/histogram.h"
#include "server/service/call_log.h"

namespace chunkplan::metrics {

class CallMetrics {
 public:
  // `version` and `engines` (e.g. "CPU_SWEEP CPU_PLATEAU") label
  // chunkplan_build_info; `in_flight` is asked for the in-flight gauge at
  // every Exposition (none: the gauge is left out).
  CallMetrics(std::string version, std::string engines,
              std::function<int()> in_flight = {});

  // Sets the source of the in-flight gauge (for a service created after
  // this object). Not thread-safe against Exposition: call before serving.
  void SetInFlightSource(std::function<int()> in_flight);

  // Sets the source of chunkplan_engine_usable: each engine's name and
  // whether it can run now, asked at every Exposition (none: left out). Not
  // thread-safe against Exposition: call before serving.
  using EngineUsability = std::vector<std::pair<std::string, bool>>;
  void SetEngineSource(std::function<EngineUsability()> engines);

  // Counts one finished call of `method` (e.g. "Search").
  void Observe(const std::string& method, const service::CallRecord& record);

  // Every metric in the text exposition format, HELP and TYPE lines
  // included, families in the order listed above.
  std::string Exposition() const;

 private:
  struct MethodMetrics {
    std::map<std::string, uint64_t> calls_by_code;
    Histogram duration_seconds;
    Histogram params;
    Histogram candidates;
    MethodMetrics();
  };

  const std::string version_;
  const std::string engines_;
  std::function<int()> in_flight_;
  std::function<EngineUsability()> engine_source_;
  mutable absl::Mutex mutex_;
  std::map<std::string, MethodMetrics> methods_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, uint64_t> searches_by_engine_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, uint64_t> fallbacks_by_engine_ ABSL_GUARDED_BY(mutex_);
};

// `value` escaped for a label value: backslash, double quote and newline.
std::string EscapeLabelValue(const std::string& value);

}  // namespace chunkplan::metrics

#endif  // CHUNKPLAN_SERVER_METRICS_CALL_METRICS_H_
