#include "server/metrics/call_metrics.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::metrics {
namespace {

// Seconds: 50 us (a small plateau search) to 30 s (a large CPU sweep).
std::vector<double> DurationBounds() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
}

// Appends "# HELP name help\n# TYPE name type\n".
void AppendHeader(const char* name, const char* type, const char* help,
                  std::string& out) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ",
                  type, "\n");
}

std::string Label(const char* name, const std::string& value) {
  return absl::StrCat(name, "=\"", EscapeLabelValue(value), "\"");
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

CallMetrics::MethodMetrics::MethodMetrics()
    : duration_seconds(DurationBounds()),
      params(DecadeBounds(8)),
      candidates(DecadeBounds(11)) {}

CallMetrics::CallMetrics(std::string version, std::string engines,
                         std::function<int()> in_flight)
    : version_(std::move(version)),
      engines_(std::move(engines)),
      in_flight_(std::move(in_flight)) {}

void CallMetrics::SetInFlightSource(std::function<int()> in_flight) {
  in_flight_ = std::move(in_flight);
}

void CallMetrics::SetEngineSource(std::function<EngineUsability()> engines) {
  engine_source_ = std::move(engines);
}

void CallMetrics::Observe(const std::string& method,
                          const service::CallRecord& record) {
  const std::string code = absl::StatusCodeToString(record.status.code());
  absl::MutexLock lock(&mutex_);
  MethodMetrics& m = methods_[method];
  ++m.calls_by_code[code];
  m.duration_seconds.Observe(static_cast<double>(record.micros) * 1e-6);
  m.params.Observe(static_cast<double>(record.params));
  if (record.candidates > 0) {
    m.candidates.Observe(static_cast<double>(record.candidates));
  }
  const std::string engine(planner::EngineName(record.engine));
  if (record.status.ok()) ++searches_by_engine_[engine];
  if (!record.fallback_reason.empty()) ++fallbacks_by_engine_[engine];
}

std::string CallMetrics::Exposition() const {
  std::string out;
  AppendHeader("chunkplan_build_info", "gauge",
               "The running chunkplan-server: version and engines.", out);
  absl::StrAppend(&out, "chunkplan_build_info{", Label("version", version_),
                  ",", Label("engines", engines_), "} 1\n");

  absl::MutexLock lock(&mutex_);
  AppendHeader("chunkplan_calls_total", "counter",
               "Finished calls by method and gRPC status code.", out);
  for (const auto& [method, m] : methods_) {
    for (const auto& [code, count] : m.calls_by_code) {
      absl::StrAppend(&out, "chunkplan_calls_total{", Label("method", method),
                      ",", Label("code", code), "} ", count, "\n");
    }
  }
  struct HistogramFamily {
    const char* name;
    const char* help;
    const Histogram MethodMetrics::*histogram;
  };
  const HistogramFamily families[] = {
      {"chunkplan_call_duration_seconds",
       "Seconds from a call's start to its answer.",
       &MethodMetrics::duration_seconds},
      {"chunkplan_call_params", "Parameters (numels) per call.",
       &MethodMetrics::params},
      {"chunkplan_call_candidates",
       "Candidate chunk sizes swept per call that ran a search.",
       &MethodMetrics::candidates},
  };
  for (const HistogramFamily& family : families) {
    AppendHeader(family.name, "histogram", family.help, out);
    for (const auto& [method, m] : methods_) {
      (m.*family.histogram)
          .AppendSamples(family.name, Label("method", method), out);
    }
  }
  AppendHeader("chunkplan_searches_total", "counter",
               "Searches answered OK, by the engine that ran.", out);
  for (const auto& [engine, count] : searches_by_engine_) {
    absl::StrAppend(&out, "chunkplan_searches_total{", Label("engine", engine),
                    "} ", count, "\n");
  }
  AppendHeader("chunkplan_engine_fallbacks_total", "counter",
               "Searches that another engine finished after the first "
               "failed, by the engine that finished.",
               out);
  for (const auto& [engine, count] : fallbacks_by_engine_) {
    absl::StrAppend(&out, "chunkplan_engine_fallbacks_total{",
                    Label("engine", engine), "} ", count, "\n");
  }
  if (in_flight_) {
    AppendHeader("chunkplan_searches_in_flight", "gauge",
                 "Searches admitted and not yet answered.", out);
    absl::StrAppend(&out, "chunkplan_searches_in_flight ", in_flight_(), "\n");
  }
  if (engine_source_) {
    AppendHeader("chunkplan_engine_usable", "gauge",
                 "1 where the engine can run now; 0 where it cannot (no "
                 "device, or a sticky device failure).",
                 out);
    for (const auto& [engine, usable] : engine_source_()) {
      absl::StrAppend(&out, "chunkplan_engine_usable{", Label("engine", engine),
                      "} ", usable ? 1 : 0, "\n");
    }
  }
  return out;
}

}  // namespace chunkplan::metrics
