#include "common/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

namespace chunkplan::common {
namespace {

// The loop ParallelFor shares with its helpers. Owned jointly (shared_ptr),
// so that a helper that starts after the loop is over still finds it.
struct SharedLoop {
  SharedLoop(uint64_t n, absl::FunctionRef<void(uint64_t)> body)
      : n(n), body(body) {}

  // Claims and runs indices until none is left.
  void Run() {
    for (;;) {
      const uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) return;
      body(i);  // the caller waits for this index: `body` is alive
      std::lock_guard<std::mutex> lock(mu);
      if (++done == n) finished.notify_all();
    }
  }

  const uint64_t n;
  const absl::FunctionRef<void(uint64_t)> body;
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  std::condition_variable finished;
  uint64_t done = 0;  // guarded by mu
};

}  // namespace

unsigned ThreadsOrCores(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

WorkerPool::WorkerPool(unsigned threads) {
  const unsigned n = std::max(1u, threads);
  workers_.reserve(n);
  for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void WorkerPool::Submit(absl::AnyInvocable<void() &&> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void WorkerPool::Work() {
  for (;;) {
    absl::AnyInvocable<void() &&> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    std::move(task)();
  }
}

void ParallelFor(WorkerPool* pool, unsigned helpers, uint64_t n,
                 absl::FunctionRef<void(uint64_t)> body) {
  if (n == 0) return;
  auto loop = std::make_shared<SharedLoop>(n, body);
  if (pool != nullptr) {
    const uint64_t wanted = std::min<uint64_t>(helpers, n - 1);
    for (uint64_t h = 0; h < wanted; ++h) {
      pool->Submit([loop] { loop->Run(); });
    }
  }
  loop->Run();
  std::unique_lock<std::mutex> lock(loop->mu);
  loop->finished.wait(lock, [&loop] { return loop->done == loop->n; });
}

}  // namespace chunkplan::common
