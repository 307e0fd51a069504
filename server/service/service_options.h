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

  // Most bytes of a model's config text (ModelConfig.hf_config_json, in
  // Describe or a request's `model`); a longer one is INVALID_ARGUMENT,
  // refused before it is parsed. Hugging Face configs are a few KiB.
  uint64_t max_config_bytes = uint64_t{1} << 20;

  // Largest request message the server receives, in bytes; gRPC answers
  // RESOURCE_EXHAUSTED above it. Applied by ApplyServerOptions.
  int max_receive_message_bytes = 64 << 20;

  // Most sweep work (candidates x swept sizes) one ENGINE_CPU_SWEEP search
  // may take (PlannerOptions.cpu_sweep.max_work); beyond it the planner
  // answers RESOURCE_EXHAUSTED. The default is a few seconds of one core.
  uint64_t max_sweep_work = uint64_t{16} << 30;

  // Most steps the bound of one CPU_PLATEAU walk may reach
  // (PlannerOptions.max_plateau_work; engines/plateau_work.h), for Search
  // and the seed's Frontier with ENGINE_AUTO or CPU_PLATEAU; beyond it
  // RESOURCE_EXHAUSTED. The default admits every bench/ workload.
  uint64_t max_plateau_work = uint64_t{1} << 34;

  // Most sweep work one ENGINE_CUDA search may take
  // (PlannerOptions.cuda.max_work), where this binary has the engine;
  // beyond it RESOURCE_EXHAUSTED. The default is estimated (no device run has
  // measured it) at tens of seconds of an H200.
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

  // Heavy calls admitted at once (running or waiting for a worker): every
  // Layout and Frontier, and every Search that does not run inline (see
  // max_inline_work). A call beyond it is answered RESOURCE_EXHAUSTED at
  // once: there is no unbounded queue. At least 1.
  unsigned max_concurrent_searches = 64;

  // Light calls admitted at once, apart from the heavy ones: Searches that
  // run inline (max_inline_work), whose work is bounded by that estimate and
  // by inline_slice, so that heavy callers holding every heavy slot cannot
  // starve them. One that outgrows its slice keeps its light slot on the
  // pool. Beyond it: RESOURCE_EXHAUSTED at once. At least 1.
  unsigned max_concurrent_light_searches = 64;

  // Request entries (numels) that heavy calls admitted at once, running or
  // waiting for a worker, may hold in all: each holds its decoded request
  // (about 10 MiB at 10^6 numels) until it ends, so this bounds that memory
  // whatever max_concurrent_searches allows. A heavy call that would pass it
  // is answered RESOURCE_EXHAUSTED at once, except when no other heavy call
  // holds any: a request within max_params is never refused for good. A
  // Plan holds its entries once per search it may run (PlanWeight,
  // request_intake.h: 3 per world size), the Frontier calls it stands for.
  uint64_t max_params_in_flight = uint64_t{4} << 20;

  // Worker threads that run searches; 0: one per core.
  unsigned search_threads = 0;

  // A Search served by CPU_PLATEAU (engine AUTO or CPU_PLATEAU) whose sweep
  // work bound (planner::SweepWorkBound: candidates x numels, from the
  // request's fields) is at most this runs on the gRPC callback thread that
  // received it, skipping the hop to a worker; others go to the pool. 0:
  // every search goes to the pool. The default covers every model workload
  // in bench/ at GeminiPlugin's defaults (LLaMA-2 70B: 3.0e6, BERT-large
  // 1.3e7) and lies far below the work at which AUTO picks CUDA (2^30).
  uint64_t max_inline_work = uint64_t{1} << 24;

  // How long an inline search may run before it moves to the worker pool
  // (where it starts again): the bound on what one search costs the
  // callback thread, whatever the work bound estimated. The plateau engine
  // asks its StopCheck every 2^15 chunks counted, about 0.2 ms here.
  absl::Duration inline_slice = absl::Microseconds(500);

  // Most bytes of serialized answers the server holds at once for calls
  // that gRPC has not finished sending (a slot is freed when the answer is
  // ready, not when it has left: a client that never reads would otherwise
  // make the server hold every answer it asked for). An answer that would
  // pass it is answered RESOURCE_EXHAUSTED instead, naming the flag; its
  // bytes are counted from the moment it is ready until the call is done.
  // The default holds 8 of the largest answers (a Layout of 10^6
  // parameters, about 16 MB) and keeps RSS under docs/deploy.md's bound.
  uint64_t max_unsent_answer_bytes = uint64_t{128} << 20;
};

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_SERVICE_OPTIONS_H_
