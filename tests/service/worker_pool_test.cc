#include "server/service/worker_pool.h"

#include <atomic>
#include <memory>

#include "gtest/gtest.h"

namespace chunkplan::service {
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

}  // namespace
}  // namespace chunkplan::service
