#ifndef CHUNKPLAN_COMMON_WORKER_POOL_H_
#define CHUNKPLAN_COMMON_WORKER_POOL_H_

// A fixed set of threads that run submitted tasks in submission order, and
// ParallelFor, which spreads one loop over the calling thread and a pool.
// The queue itself is unbounded: callers bound it (the service admits at
// most max_concurrent_searches tasks; ParallelFor queues at most `helpers`).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"

namespace chunkplan::common {

// `requested` threads, or the machine's hardware threads (at least 1) when
// `requested` is 0: how every thread-count flag reads its 0.
unsigned ThreadsOrCores(unsigned requested);

class WorkerPool {
 public:
  // Starts `threads` workers (at least one).
  explicit WorkerPool(unsigned threads);

  // Runs every task already submitted, then joins the workers.
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task` to run on a worker. Must not be called once the destructor
  // has begun.
  void Submit(absl::AnyInvocable<void() &&> task);

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_;  // guarded by mu_
  bool stopping_ = false;                            // guarded by mu_
  std::vector<std::thread> workers_;
};

// Runs body(i) once for every i in [0, n), on the calling thread and on at
// most `helpers` tasks queued on `pool` (none when `pool` is null), and
// returns once every body(i) has returned. Indices are claimed in increasing
// order, one at a time, by whichever thread is free.
//
// Never waits on the pool: the caller claims indices too, and a helper that
// starts only after every index was claimed returns without calling `body`.
// So it is safe when every worker of `pool` is busy, or is itself inside a
// ParallelFor, and `body` need only outlive this call.
void ParallelFor(WorkerPool* pool, unsigned helpers, uint64_t n,
                 absl::FunctionRef<void(uint64_t)> body);

}  // namespace chunkplan::common

#endif  // CHUNKPLAN_COMMON_WORKER_POOL_H_
