#include "server/transport/stream_guard.h"

#include <vector>

#include "gtest/gtest.h"

namespace chunkplan::transport {
namespace {

TEST(PickOverLimitTest, ConnectionsWithinTheLimitAreNeverPicked) {
  const std::vector<SocketStreams> sockets = {
      {"10.0.0.1:1", 32}, {"10.0.0.1:2", 0}, {"10.0.0.2:3", 31}};
  EXPECT_TRUE(PickOverLimit(sockets, 32, 0).empty());
}

TEST(PickOverLimitTest, EveryExcessIsPickedWithoutABudget) {
  const std::vector<SocketStreams> sockets = {
      {"10.0.0.1:1", 33}, {"10.0.0.1:2", 32}, {"10.0.0.2:3", 1000}};
  EXPECT_EQ(PickOverLimit(sockets, 32, 0), (std::vector<size_t>{2, 0}));
}

TEST(PickOverLimitTest, LargestExcessFirstUntilTheRestFitTheBudget) {
  // Excesses 968, 1, 2, 468: total 1439. Picking 968 leaves 471, still
  // above a budget of 100; picking 468 leaves 3.
  const std::vector<SocketStreams> sockets = {{"10.0.0.1:1", 1000},
                                              {"10.0.0.1:2", 33},
                                              {"10.0.0.1:3", 34},
                                              {"10.0.0.1:4", 500}};
  EXPECT_EQ(PickOverLimit(sockets, 32, 100), (std::vector<size_t>{0, 3}));
  // A budget that holds everything picks nothing.
  EXPECT_TRUE(PickOverLimit(sockets, 32, 1439).empty());
  EXPECT_EQ(PickOverLimit(sockets, 32, 1438), (std::vector<size_t>{0}));
}

TEST(PickOverLimitTest, APeerThatIsNotTcpIsNeverPicked) {
  const std::vector<SocketStreams> sockets = {{"", 5000}, {"[::1]:7", 40}};
  EXPECT_EQ(PickOverLimit(sockets, 32, 0), (std::vector<size_t>{1}));
}

TEST(ResidentBytesTest, ReadsThisProcesssResidentMemory) {
  // /proc/self/statm's resident pages: more than nothing, less than the
  // address space (VmSize) of this small test.
  const int64_t resident = ResidentBytes();
  EXPECT_GT(resident, 0);
  EXPECT_LT(resident, int64_t{1} << 40);
}

}  // namespace
}  // namespace chunkplan::transport
