// chunkplan-server: serves chunkplan.v1.ChunkSearch, the standard health
// service (grpc.health.v1) and server reflection until SIGTERM or SIGINT,
// then drains (docs/deploy.md, "Rolling updates"): health NOT_SERVING,
// --shutdown_delay of normal service, no new connections, searches in flight
// finished for up to --shutdown_grace, and exits 0.
//
// Once it listens it logs "chunkplan-server listening on HOST:PORT" (the real
// port when --listen asked for port 0) at info level. With --metrics_listen
// it first logs "chunkplan-server metrics on http://HOST:PORT/metrics".
//
// TLS: --tls_cert and --tls_key serve TLS instead of plaintext;
// --tls_client_ca also requires client certificates signed by that CA.

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
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
#include "chunkplan/planner/planner.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/engine_hook.h"
#include "server/log_setup.h"
#include "server/metrics/call_metrics.h"
#include "server/metrics/metrics_http_server.h"
#include "server/service/call_log.h"
#include "server/service/chunk_search_service.h"
#include "server/service/service_options.h"
#include "server/service/tls_credentials.h"
#include "server/transport/connection_gate.h"
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
          "Most numels (and dp_degrees) per request, and most parameters "
          "of a described model; beyond it: RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_config_bytes, uint64_t{1} << 20,
          "Most bytes of a model's config.json text (Describe, or a "
          "request's model); beyond it: INVALID_ARGUMENT, before parsing.");
ABSL_FLAG(int32_t, max_receive_message_size, 64 << 20,
          "Largest request message in bytes; beyond it gRPC answers "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_sweep_work, uint64_t{16} << 30,
          "Most candidates x swept sizes of one ENGINE_CPU_SWEEP search; "
          "beyond it: RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_plateau_work, uint64_t{1} << 34,
          "Most steps the work bound of one CPU_PLATEAU walk (Search, "
          "Frontier of any objective) may reach, and a layout walk's "
          "counted steps; beyond it: RESOURCE_EXHAUSTED.");
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
ABSL_FLAG(
    uint32_t, max_concurrent_light_searches, 64,
    "Searches that run inline (--max_inline_work) admitted at once, "
    "apart from --max_concurrent_searches; beyond it RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_params_in_flight, uint64_t{4} << 20,
          "Numels that the heavy calls admitted at once (running or waiting "
          "for a worker) may hold in all; beyond it RESOURCE_EXHAUSTED, "
          "except for a call admitted when no other holds any.");
ABSL_FLAG(uint64_t, max_inline_work, uint64_t{1} << 24,
          "A plateau-engine Search of at most this many candidates x numels "
          "runs on the gRPC thread that received it instead of a worker; "
          "0: every search goes to a worker.");
ABSL_FLAG(absl::Duration, inline_slice, absl::Microseconds(500),
          "How long a search may run on the gRPC thread before it moves to "
          "a worker (where it starts again).");
ABSL_FLAG(uint64_t, max_unsent_answer_bytes, uint64_t{128} << 20,
          "Most bytes of answers held for clients that have not read them "
          "yet; an answer that would pass it ends RESOURCE_EXHAUSTED.");
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

// Transport bounds (docs/deploy.md, "Limits"): what one peer, or many, may
// make the server hold.
ABSL_FLAG(uint32_t, max_connections, 1024,
          "Most client connections at once over TCP: a new one is closed at "
          "once while this many connections' descriptors are open. Also "
          "bounded by the descriptor limit (raised to its hard limit at "
          "start) less 128.");
// 32: a client queues the calls beyond it; with --max_connections, bounds
// the streams a peer can hold open (about 13 KB each) to 32 Ki.
ABSL_FLAG(uint32_t, max_concurrent_streams, 32,
          "Most calls in flight on one connection "
          "(SETTINGS_MAX_CONCURRENT_STREAMS); a client queues the rest.");
ABSL_FLAG(int32_t, max_send_message_size, 64 << 20,
          "Largest answer in bytes (a Layout of --max_params parameters is "
          "about 14 MB); beyond it the call ends RESOURCE_EXHAUSTED.");
// 256 MiB: with the process's own needs, RSS stays under the stated bound
// of 768 MiB, itself under the Deployment's 1 GiB limit.
ABSL_FLAG(uint64_t, grpc_memory_quota, uint64_t{256} << 20,
          "Bytes gRPC may hold for connections, streams and their buffers "
          "(its resource quota); past it, gRPC closes idle connections and "
          "then cancels streams.");
// 5 min (+ 40 s): clients that resolved the replicas once reconnect and
// spread to new ones within minutes; the grace outlasts --max_search_time.
ABSL_FLAG(absl::Duration, max_connection_age, absl::Minutes(5),
          "A connection older than this is sent GOAWAY so that its client "
          "reconnects (and spreads over new replicas); 0: never.");
ABSL_FLAG(absl::Duration, max_connection_age_grace, absl::Seconds(40),
          "How long calls on a connection past --max_connection_age may "
          "take to finish before it is closed.");

// Drain (docs/deploy.md, "Rolling updates").
ABSL_FLAG(absl::Duration, shutdown_delay, absl::ZeroDuration(),
          "On SIGTERM/SIGINT, how long the server keeps serving while its "
          "health service already answers NOT_SERVING, so that readiness "
          "probes and load balancers see it first.");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "After --shutdown_delay, how long searches in flight may take to "
          "finish before they are cancelled. Calls that are not searches "
          "(e.g. a stream whose request never completes) are cancelled as "
          "soon as no search is in flight.");

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
  options.max_config_bytes = absl::GetFlag(FLAGS_max_config_bytes);
  options.max_receive_message_bytes =
      absl::GetFlag(FLAGS_max_receive_message_size);
  options.max_sweep_work = absl::GetFlag(FLAGS_max_sweep_work);
  options.max_cuda_work = absl::GetFlag(FLAGS_max_cuda_work);
  options.max_plateau_work = absl::GetFlag(FLAGS_max_plateau_work);
  options.sweep_threads = absl::GetFlag(FLAGS_sweep_threads);
  options.max_search_time = absl::GetFlag(FLAGS_max_search_time);
  options.max_concurrent_searches =
      absl::GetFlag(FLAGS_max_concurrent_searches);
  options.max_concurrent_light_searches =
      absl::GetFlag(FLAGS_max_concurrent_light_searches);
  options.max_params_in_flight = absl::GetFlag(FLAGS_max_params_in_flight);
  options.search_threads = absl::GetFlag(FLAGS_threads);
  options.max_inline_work = absl::GetFlag(FLAGS_max_inline_work);
  options.inline_slice = absl::GetFlag(FLAGS_inline_slice);
  options.max_unsent_answer_bytes =
      absl::GetFlag(FLAGS_max_unsent_answer_bytes);
  return options;
}

bool IsUnixSocket(const std::string& listen) {
  return absl::StartsWith(listen, "unix:") ||
         absl::StartsWith(listen, "unix-abstract:");
}

// 2 for a bad flag (INVALID_ARGUMENT), 1 otherwise.
int ExitCodeFor(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
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

// Milliseconds for a channel argument, clamped to [1, INT_MAX]; 0 or less
// stays INT_MAX (gRPC's "never").
int ChannelArgumentMs(absl::Duration duration) {
  if (duration <= absl::ZeroDuration()) return INT_MAX;
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(duration), 1, INT_MAX));
}

// Streams per connection, answer size, gRPC's memory quota and connection
// age from the flags. `quota` must outlive the server built.
void ApplyTransportLimits(grpc::ServerBuilder& builder,
                          grpc::ResourceQuota& quota) {
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONCURRENT_STREAMS,
      static_cast<int>(std::min<uint32_t>(
          absl::GetFlag(FLAGS_max_concurrent_streams), INT_MAX)));
  builder.SetMaxSendMessageSize(absl::GetFlag(FLAGS_max_send_message_size));
  quota.Resize(absl::GetFlag(FLAGS_grpc_memory_quota));
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_AGE_MS,
      ChannelArgumentMs(absl::GetFlag(FLAGS_max_connection_age)));
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
      ChannelArgumentMs(absl::GetFlag(FLAGS_max_connection_age_grace)));
}

// Descriptors kept free of client connections: the metrics endpoint's, and
// those gRPC and the process open for themselves.
constexpr rlim_t kReservedDescriptors = 128;

// Raises the soft RLIMIT_NOFILE to the hard one (logged) and returns the
// descriptor number from which a new connection is refused (one descriptor
// per connection).
int ConnectionDescriptorBound() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t was = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = was;
  }
  const rlim_t usable = limit.rlim_cur > 2 * kReservedDescriptors
                            ? limit.rlim_cur - kReservedDescriptors
                            : limit.rlim_cur / 2;
  const rlim_t bound =
      std::min<rlim_t>(usable, absl::GetFlag(FLAGS_max_connections));
  spdlog::info(
      "chunkplan-server descriptor limit {}; connections refused "
      "from descriptor {}",
      limit.rlim_cur, bound);
  return static_cast<int>(std::min<rlim_t>(bound, INT_MAX));
}

// The address clients reach: `listen` with port 0 replaced by the port the
// server bound; Unix socket addresses as given.
std::string ListeningAddress(const std::string& listen, int selected_port) {
  if (IsUnixSocket(listen)) return listen;
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

// Feeds `call_metrics` from `service`: searches in flight and engines.
void ConnectMetrics(metrics::CallMetrics& call_metrics,
                    const service::ChunkSearchService& service) {
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

// A started gRPC server with what it listens through.
struct Serving {
  grpc::ResourceQuota quota{"chunkplan-server"};
  // TCP: the server's own accept loop; null for a Unix socket.
  std::unique_ptr<transport::ConnectionGate> gate;
  std::unique_ptr<grpc::Server> server;  // goes before gate and quota
  std::string address;                   // as clients reach it
};

// Builds and starts the gRPC server for `service` on --listen (over TCP,
// through the server's own accept loop). Errors: INVALID_ARGUMENT for a bad
// --listen, UNAVAILABLE when it cannot listen.
absl::StatusOr<std::unique_ptr<Serving>> StartServing(
    const service::ServiceOptions& options,
    service::ChunkSearchService& service,
    const std::shared_ptr<grpc::ServerCredentials>& credentials) {
  const std::string listen = absl::GetFlag(FLAGS_listen);
  auto serving = std::make_unique<Serving>();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int selected_port = 0;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor;
  if (IsUnixSocket(listen)) {
    builder.AddListeningPort(listen, credentials, &selected_port);
  } else {
    absl::StatusOr<std::unique_ptr<transport::ConnectionGate>> gate =
        transport::ConnectionGate::Listen(listen, ConnectionDescriptorBound());
    if (!gate.ok()) return gate.status();
    serving->gate = *std::move(gate);
    selected_port = serving->gate->port();
    acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        credentials);
  }
  builder.RegisterService(&service);
  service::ApplyServerOptions(options, builder);
  ApplyKeepalive(builder);
  ApplyTransportLimits(builder, serving->quota);
  // A socket another process listens on is an error, not a shared one.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  serving->server = builder.BuildAndStart();
  if (serving->server == nullptr || selected_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen));
  }
  if (serving->gate != nullptr) serving->gate->Start(std::move(acceptor));
  serving->address = ListeningAddress(listen, selected_port);
  SetServing(*serving->server, true);
  return serving;
}

// How long no search may be in flight, once Shutdown has begun, before the
// calls left (none of them a search) are cancelled; and how often to look.
constexpr absl::Duration kQuietBeforeCancel = absl::Milliseconds(200);
constexpr absl::Duration kDrainPoll = absl::Milliseconds(10);

// Refuses new calls, waits up to `grace` for the searches in flight and
// cancels every call left once none has been in flight for
// kQuietBeforeCancel: an idle or half-open stream does not hold the drain.
void ShutDown(grpc::Server& server, const service::ChunkSearchService& service,
              absl::Duration grace) {
  std::atomic<bool> stopped{false};
  std::thread shutdown([&] {
    server.Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoNanoseconds(grace));
    stopped.store(true);
  });
  absl::Time quiet_since = absl::InfiniteFuture();
  while (!stopped.load()) {
    absl::SleepFor(kDrainPoll);
    if (service.searches_in_flight() > 0) {
      quiet_since = absl::InfiniteFuture();
    } else if (quiet_since == absl::InfiniteFuture()) {
      quiet_since = absl::Now();
    } else if (absl::Now() - quiet_since >= kQuietBeforeCancel) {
      grpc_server_cancel_all_calls(server.c_server());
      break;
    }
  }
  shutdown.join();
}

// The drain on `signal_number`: NOT_SERVING, --shutdown_delay of normal
// service, no new connections, then ShutDown with --shutdown_grace.
void Drain(Serving& serving, const service::ChunkSearchService& service,
           int signal_number) {
  // Clamped to [0, a day]: absl::InfiniteDuration would overflow the
  // time_point in ShutDown.
  const absl::Duration delay =
      std::clamp(absl::GetFlag(FLAGS_shutdown_delay), absl::ZeroDuration(),
                 absl::Hours(24));
  const absl::Duration grace =
      std::clamp(absl::GetFlag(FLAGS_shutdown_grace), absl::ZeroDuration(),
                 absl::Hours(24));
  SetServing(*serving.server, false);
  spdlog::info("chunkplan-server received {}; NOT_SERVING, serving on for {}",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
               absl::FormatDuration(delay));
  absl::SleepFor(delay);
  spdlog::info(
      "chunkplan-server received {}; draining {} search(es) for up "
      "to {}",
      signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
      service.searches_in_flight(), absl::FormatDuration(grace));
  if (serving.gate != nullptr) serving.gate->Close();
  ShutDown(*serving.server, service, grace);
}

// Serves until SIGTERM/SIGINT; returns the exit code.
int RunServer(const sigset_t& termination_signals) {
  const service::ServiceOptions options = OptionsFromFlags();
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
      options,
      [&call_metrics](const service::CallRecord& record) {
        call_metrics.Observe(record.method, record);
      },
      server::BinaryEngineWrapper());
  ConnectMetrics(call_metrics, service);
  // Declared after the service: stops serving before the service goes.
  absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> metrics_server =
      StartMetrics(call_metrics);
  if (!metrics_server.ok()) {
    spdlog::critical("chunkplan-server: {}",
                     metrics_server.status().ToString());
    return ExitCodeFor(metrics_server.status());
  }
  absl::StatusOr<std::unique_ptr<Serving>> serving =
      StartServing(options, service, *credentials);
  if (!serving.ok()) {
    spdlog::critical("chunkplan-server {}",
                     std::string(serving.status().message()));
    return ExitCodeFor(serving.status());
  }
  spdlog::info("chunkplan-server listening on {}{}", (*serving)->address,
               absl::GetFlag(FLAGS_tls_cert).empty()        ? ""
               : absl::GetFlag(FLAGS_tls_client_ca).empty() ? " (TLS)"
                                                            : " (mutual TLS)");
  Drain(**serving, service, WaitForTerminationSignal(termination_signals));
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
