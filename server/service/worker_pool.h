#ifndef CHUNKPLAN_SERVER_SERVICE_WORKER_POOL_H_
#define CHUNKPLAN_SERVER_SERVICE_WORKER_POOL_H_

// A fixed set of threads that run submitted tasks in submission order. The
// queue itself is unbounded: callers bound it (the service admits at most
// max_concurrent_searches tasks).

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace chunkplan::service {

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

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_WORKER_POOL_H_
