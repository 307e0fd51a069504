#include "server/service/call_log.h"

#include <chrono>
#include <cstdint>

#include "gtest/gtest.h"

namespace chunkplan::service {
namespace {

using Clock = LogRateLimiter::Clock;
using std::chrono::milliseconds;

TEST(LogRateLimiter, LetsThroughItsLinesPerSecondAndCountsTheRest) {
  LogRateLimiter limiter(3);
  const Clock::time_point t0 = Clock::now();
  uint64_t suppressed = 99;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(limiter.Allow(t0 + milliseconds(i), &suppressed)) << i;
    EXPECT_EQ(suppressed, 0u);
  }
  // Held back: two more within the second.
  EXPECT_FALSE(limiter.Allow(t0 + milliseconds(10), &suppressed));
  EXPECT_FALSE(limiter.Allow(t0 + milliseconds(999), &suppressed));
  // The next second: let through, with the count of the two.
  EXPECT_TRUE(limiter.Allow(t0 + milliseconds(1000), &suppressed));
  EXPECT_EQ(suppressed, 2u);
  EXPECT_TRUE(limiter.Allow(t0 + milliseconds(1001), &suppressed));
  EXPECT_EQ(suppressed, 0u);
}

TEST(LogRateLimiter, AWindowStartsAtTheFirstLineAfterTheLastEnded) {
  LogRateLimiter limiter(1);
  const Clock::time_point t0 = Clock::now();
  uint64_t suppressed = 0;
  EXPECT_TRUE(limiter.Allow(t0, &suppressed));
  EXPECT_FALSE(limiter.Allow(t0 + milliseconds(500), &suppressed));
  // Quiet until 5.5 s: a new window from there, to 6.5 s.
  EXPECT_TRUE(limiter.Allow(t0 + milliseconds(5500), &suppressed));
  EXPECT_EQ(suppressed, 1u);
  EXPECT_FALSE(limiter.Allow(t0 + milliseconds(6400), &suppressed));
  EXPECT_TRUE(limiter.Allow(t0 + milliseconds(6500), &suppressed));
  EXPECT_EQ(suppressed, 1u);
}

}  // namespace
}  // namespace chunkplan::service
