#include "common/worker_pool.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace chunkplan::common {
namespace {

TEST(WorkerPool, RunsEveryTaskBeforeItIsDestroyed) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(3);
    EXPECT_EQ(pool.size(), 3u);
    for (int i = 0; i < 1000; ++i) {
      // Move-only tasks are accepted.
      auto token = std::make_unique<int>(1);
      pool.Submit([&ran, token = std::move(token)] { ran += *token; });
    }
  }
  EXPECT_EQ(ran.load(), 1000);
}

TEST(WorkerPool, ZeroThreadsMeansOne) {
  WorkerPool pool(0);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(ParallelFor, RunsEveryIndexOnceWithAndWithoutAPool) {
  WorkerPool pool(3);
  for (WorkerPool* p : {static_cast<WorkerPool*>(nullptr), &pool}) {
    std::vector<std::atomic<int>> hits(1000);
    ParallelFor(p, 3, hits.size(), [&hits](uint64_t i) { ++hits[i]; });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ParallelFor, FinishesWhenEveryWorkerIsInsideAParallelFor) {
  // Two workers, each running a ParallelFor that asks the same pool for
  // helpers: the helpers queue behind the outer tasks, so only the callers'
  // own share of the work can finish the loops.
  WorkerPool pool(2);
  std::atomic<int> sum{0};
  std::atomic<int> outer_done{0};
  for (int t = 0; t < 2; ++t) {
    pool.Submit([&] {
      ParallelFor(&pool, 4, 100, [&sum](uint64_t) { ++sum; });
      ++outer_done;
    });
  }
  while (outer_done.load() < 2) std::this_thread::yield();
  EXPECT_EQ(sum.load(), 200);
}

TEST(ParallelFor, NothingToRun) {
  WorkerPool pool(1);
  bool ran = false;
  ParallelFor(&pool, 4, 0, [&ran](uint64_t) { ran = true; });
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace chunkplan::common
