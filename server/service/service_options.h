#ifndef CHUNKPLAN_SERVER_SERVICE_SERVICE_OPTIONS_H_
#define CHUNKPLAN_SERVER_SERVICE_SERVICE_OPTIONS_H_

// The service's limits and threads, one field per chunkplan-server flag.
// The defaults are the flags' defaults.

#include <cstdint>

#include "absl/time/time.h"

namespace chunkplan::service {

struct ServiceOptions {
  // Most entries in a request's numels (and, separately, its dp_degrees).
  // Beyond it: RESOURCE_EXHAUSTED, naming the field, its size and the limit
  // -- the request is well formed, only larger than this server takes, which
  // is what RESOURCE_EXHAUSTED means on the wire (as for the message size).
  uint64_t max_params = 1'000'000;

  // Largest request message the server receives, in bytes; gRPC answers
  // RESOURCE_EXHAUSTED above it. Applied by ApplyServerOptions.
  int max_receive_message_bytes = 64 << 20;

  // Most sweep work (candidates x swept sizes) one ENGINE_CPU_SWEEP search
  // may take (PlannerOptions.cpu_sweep.max_work); beyond it the planner
  // answers RESOURCE_EXHAUSTED. The default is a few seconds of one core.
  uint64_t max_sweep_work = uint64_t{16} << 30;

  // Most sweep work one ENGINE_CUDA search may take
  // (PlannerOptions.cuda.max_work), where this binary has the engine;
  // beyond it RESOURCE_EXHAUSTED. The default is tens of seconds of an H200.
  uint64_t max_cuda_work = uint64_t{1} << 44;

  // The server's budget for one search, from the moment its call arrives
  // (time waiting for a worker included): the call's own deadline, where
  // earlier, still wins. A search still running at the end of it ends with
  // DEADLINE_EXCEEDED naming --max_search_time. Every engine asks for it
  // between slices of about a millisecond.
  absl::Duration max_search_time = absl::Seconds(30);

  // Threads of the pool that every CPU_SWEEP search shares, besides the
  // search's own worker; 0: one per core.
  unsigned sweep_threads = 0;

  // Searches admitted at once (running or waiting for a worker). A search
  // beyond it is answered RESOURCE_EXHAUSTED at once: there is no unbounded
  // queue. At least 1.
  unsigned max_concurrent_searches = 64;

  // Worker threads that run searches; 0: one per core.
  unsigned search_threads = 0;
};

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_SERVICE_OPTIONS_H_
