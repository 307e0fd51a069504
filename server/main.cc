// chunkplan-server: serves chunkplan.v1.ChunkSearch, the standard health
// service (grpc.health.v1) and server reflection until SIGTERM or SIGINT,
// then drains calls in flight for up to --shutdown_grace and exits 0.
//
// Once it listens it logs "chunkplan-server listening on HOST:PORT" (the real
// port when --listen asked for port 0) at info level. With --metrics_listen
// it first logs "chunkplan-server metrics on http://HOST:PORT/metrics".
//
// TLS: --tls_cert and --tls_key serve TLS instead of plaintext;
// --tls_client_ca also requires client certificates signed by that CA.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/log_setup.h"
#include "server/metrics/call_metrics.h"
#include "server/metrics/metrics_http_server.h"
#include "server/planner/planner.h"
#include "server/service/chunk_search_service.h"
#include "server/service/service_options.h"
#include "server/service/tls_credentials.h"
#include "spdlog/spdlog.h"

#ifndef CHUNKPLAN_VERSION
#error "CHUNKPLAN_VERSION must be defined by the build (PROJECT_VERSION)"
#endif

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "Address to serve on: HOST:PORT (port 0 picks a free port; the "
          "ready line names it) or unix:PATH for a Unix socket.");
ABSL_FLAG(uint32_t, threads, 0,
          "Worker threads that run searches; 0: one per core.");
ABSL_FLAG(std::string, log_level, "info",
          "trace, debug, info, warn, error, critical or off. At debug, each "
          "admitted search also logs a line when it is admitted.");
ABSL_FLAG(std::string, log_format, "text",
          "text, or json: one JSON object per line.");

// Keepalive (see grpc's doc/keepalive.md). All in milliseconds.
// 60 s: an idle connection is pinged every minute.
ABSL_FLAG(int32_t, keepalive_time_ms, 60'000,
          "Milliseconds between keepalive pings on an idle connection.");
// 20 s: a peer that does not ack a ping within it is gone.
ABSL_FLAG(int32_t, keepalive_timeout_ms, 20'000,
          "Milliseconds to wait for a keepalive ping's ack before closing "
          "the connection.");
ABSL_FLAG(bool, keepalive_permit_without_calls, false,
          "Send keepalive pings on connections with no call in flight.");
// 10 s: clients may ping at most this often (gRPC's default is 5 min).
ABSL_FLAG(int32_t, keepalive_min_ping_interval_ms, 10'000,
          "Milliseconds a client must leave between its own pings (without "
          "data); a client that pings faster is disconnected.");

// Limits (see server/service/service_options.h).
ABSL_FLAG(uint64_t, max_params, 1'000'000,
          "Most numels (and dp_degrees) per request; beyond it: "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int32_t, max_receive_message_size, 64 << 20,
          "Largest request message in bytes; beyond it gRPC answers "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_sweep_work, uint64_t{16} << 30,
          "Most candidates x swept sizes of one ENGINE_CPU_SWEEP search; "
          "beyond it: RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_cuda_work, uint64_t{1} << 44,
          "Most candidates x swept sizes of one ENGINE_CUDA search, where "
          "this binary has the engine; beyond it: RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint32_t, sweep_threads, 0,
          "Threads of the one pool that every ENGINE_CPU_SWEEP search "
          "shares, besides the search's own worker; 0: one per core.");
// 30 s: far beyond any real model's search (microseconds to milliseconds),
// short enough that a hostile request frees its worker soon.
ABSL_FLAG(absl::Duration, max_search_time, absl::Seconds(30),
          "The server's budget for one search, from its arrival: a search "
          "still running then ends with DEADLINE_EXCEEDED. A call's own "
          "deadline, where earlier, wins. Every engine obeys it.");
ABSL_FLAG(uint32_t, max_concurrent_searches, 64,
          "Searches running or waiting for a worker at once; beyond it a "
          "call is answered RESOURCE_EXHAUSTED at once.");
ABSL_FLAG(uint64_t, max_inline_work, uint64_t{1} << 24,
          "A plateau-engine Search of at most this many candidates x numels "
          "runs on the gRPC thread that received it instead of a worker; "
          "0: every search goes to a worker.");
ABSL_FLAG(absl::Duration, inline_slice, absl::Microseconds(500),
          "How long a search may run on the gRPC thread before it moves to "
          "a worker (where it starts again).");
// Transport security. Kubernetes' native gRPC probes speak plaintext only:
// probe a TLS server with an exec probe (`chunkplan health --tls_ca ...`).
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain of the server; with --tls_key, serve TLS "
          "instead of plaintext.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s); when set, every client must present a "
          "certificate they signed (mutual TLS). Needs --tls_cert.");

// Observability.
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on at /metrics over plain "
          "HTTP (port 0 picks a free port; the log names it); empty: no "
          "metrics endpoint.");

ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "On SIGTERM/SIGINT, how long calls in flight may take to finish "
          "before they are cancelled.");

namespace chunkplan {
namespace {

constexpr char kServiceName[] = "chunkplan.v1.ChunkSearch";

// The engines built into this binary, each one that cannot run here with
// why (planner::DescribeBuiltInEngines).
std::string EngineList() { return planner::DescribeBuiltInEngines(); }

// The text of --version: "chunkplan-server X.Y.Z" and the engines this
// binary has.
std::string VersionText() {
  return absl::StrCat("chunkplan-server ", CHUNKPLAN_VERSION,
                      "\nengines: ", EngineList(), "\n");
}

service::ServiceOptions OptionsFromFlags() {
  service::ServiceOptions options;
  options.max_params = absl::GetFlag(FLAGS_max_params);
  options.max_receive_message_bytes =
      absl::GetFlag(FLAGS_max_receive_message_size);
  options.max_sweep_work = absl::GetFlag(FLAGS_max_sweep_work);
  options.max_cuda_work = absl::GetFlag(FLAGS_max_cuda_work);
  options.sweep_threads = absl::GetFlag(FLAGS_sweep_threads);
  options.max_search_time = absl::GetFlag(FLAGS_max_search_time);
  options.max_concurrent_searches =
      absl::GetFlag(FLAGS_max_concurrent_searches);
  options.search_threads = absl::GetFlag(FLAGS_threads);
  options.max_inline_work = absl::GetFlag(FLAGS_max_inline_work);
  options.inline_slice = absl::GetFlag(FLAGS_inline_slice);
  return options;
}

// Keepalive settings from the flags.
void ApplyKeepalive(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             absl::GetFlag(FLAGS_keepalive_time_ms));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             absl::GetFlag(FLAGS_keepalive_timeout_ms));
  builder.AddChannelArgument(
      GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
      absl::GetFlag(FLAGS_keepalive_permit_without_calls) ? 1 : 0);
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      absl::GetFlag(FLAGS_keepalive_min_ping_interval_ms));
}

// The address clients reach: `listen` with port 0 replaced by the port the
// server bound; Unix socket addresses as given.
std::string ListeningAddress(const std::string& listen, int selected_port) {
  if (absl::StartsWith(listen, "unix:") ||
      absl::StartsWith(listen, "unix-abstract:")) {
    return listen;
  }
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::StrCat(listen, ":", selected_port);
  }
  return absl::StrCat(listen.substr(0, colon), ":", selected_port);
}

// The /metrics endpoint on --metrics_listen, serving `call_metrics`, or
// null when the flag is empty. Errors: MetricsHttpServer::Start's.
absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> StartMetrics(
    const metrics::CallMetrics& call_metrics) {
  const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
  if (listen.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> server =
      metrics::MetricsHttpServer::Start(
          listen, [&call_metrics] { return call_metrics.Exposition(); });
  if (server.ok()) {
    spdlog::info("chunkplan-server metrics on http://{}/metrics",
                 (*server)->address());
  }
  return server;
}

// Blocks until SIGTERM or SIGINT arrives (they must be blocked in every
// thread, see main) and returns it.
int WaitForTerminationSignal(const sigset_t& signals) {
  for (;;) {
    int signal_number = 0;
    if (sigwait(&signals, &signal_number) == 0) return signal_number;
  }
}

void SetServing(grpc::Server& server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus("", serving);
  health->SetServingStatus(kServiceName, serving);
}

// Serves until SIGTERM/SIGINT; returns the exit code.
int RunServer(const sigset_t& termination_signals) {
  const service::ServiceOptions options = OptionsFromFlags();
  const std::string listen = absl::GetFlag(FLAGS_listen);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      service::MakeServerCredentials({absl::GetFlag(FLAGS_tls_cert),
                                      absl::GetFlag(FLAGS_tls_key),
                                      absl::GetFlag(FLAGS_tls_client_ca)});
  if (!credentials.ok()) {
    spdlog::critical("chunkplan-server: {}", credentials.status().ToString());
    return 2;
  }
  metrics::CallMetrics call_metrics(CHUNKPLAN_VERSION, EngineList());
  // Declared before the server: the server must go first.
  service::ChunkSearchService service(
      options, [&call_metrics](const service::CallRecord& record) {
        call_metrics.Observe(record.method, record);
      });
  call_metrics.SetInFlightSource(
      [&service] { return service.searches_in_flight(); });
  call_metrics.SetEngineSource([&service] {
    metrics::CallMetrics::EngineUsability engines;
    for (const planner::EngineState& s : service.planner().EngineStates()) {
      engines.emplace_back(std::string(planner::EngineName(s.engine)),
                           s.usable.ok());
    }
    return engines;
  });
  // Declared after the service: stops serving before the service goes.
  absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> metrics_server =
      StartMetrics(call_metrics);
  if (!metrics_server.ok()) {
    spdlog::critical("chunkplan-server: {}",
                     metrics_server.status().ToString());
    return metrics_server.status().code() == absl::StatusCode::kInvalidArgument
               ? 2
               : 1;
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(listen, *credentials, &selected_port);
  builder.RegisterService(&service);
  service::ApplyServerOptions(options, builder);
  ApplyKeepalive(builder);
  // A port another process listens on is an error, not a shared port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || selected_port == 0) {
    spdlog::critical("chunkplan-server cannot listen on {}", listen);
    return 1;
  }
  SetServing(*server, true);
  spdlog::info("chunkplan-server listening on {}{}",
               ListeningAddress(listen, selected_port),
               absl::GetFlag(FLAGS_tls_cert).empty()        ? ""
               : absl::GetFlag(FLAGS_tls_client_ca).empty() ? " (TLS)"
                                                            : " (mutual TLS)");

  const int signal_number = WaitForTerminationSignal(termination_signals);
  // Clamped to [0, a day]: absl::InfiniteDuration would overflow the
  // time_point below.
  const absl::Duration grace =
      std::clamp(absl::GetFlag(FLAGS_shutdown_grace), absl::ZeroDuration(),
                 absl::Hours(24));
  spdlog::info(
      "chunkplan-server received {}; draining {} search(es) for up to {}",
      signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
      service.searches_in_flight(), absl::FormatDuration(grace));
  SetServing(*server, false);
  server->Shutdown(std::chrono::system_clock::now() +
                   absl::ToChronoNanoseconds(grace));
  server->Wait();
  spdlog::info("chunkplan-server stopped");
  return 0;
}

}  // namespace
}  // namespace chunkplan

int main(int argc, char** argv) {
  // SIGTERM and SIGINT are blocked here, before any thread starts, so every
  // thread inherits the mask and only sigwait in RunServer receives them: no
  // work happens in a signal handler.
  sigset_t termination_signals;
  sigemptyset(&termination_signals);
  sigaddset(&termination_signals, SIGTERM);
  sigaddset(&termination_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &termination_signals, nullptr);

  // Debian's abseil is built with absl::Mutex's deadlock detection on: a
  // graph lookup in every lock, gRPC's included (a few percent of a call's
  // CPU under load). chunkplan's own locks each guard one structure and
  // are never nested, so there is no cycle for it to find.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::FlagsUsageConfig usage_config;
  usage_config.version_string = chunkplan::VersionText;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "Serves chunkplan.v1.ChunkSearch over gRPC.\n"
      "  chunkplan-server [--listen=127.0.0.1:50051] [flags]\n"
      "--version prints the version and the engines available here.");
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::fprintf(stderr, "chunkplan-server: unexpected argument '%s'\n",
                 rest[1]);
    return 2;
  }
  if (absl::Status s = chunkplan::server::ConfigureLogging(
          absl::GetFlag(FLAGS_log_level), absl::GetFlag(FLAGS_log_format));
      !s.ok()) {
    std::fprintf(stderr, "chunkplan-server: %s\n",
                 std::string(s.message()).c_str());
    return 2;
  }
  return chunkplan::RunServer(termination_signals);
}
