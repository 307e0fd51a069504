#include "server/transport/h2_preack_reader.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/transport/h2_test_frames.h"

namespace chunkplan::transport {
namespace {

using testing::Frame;
using testing::kAck;
using testing::kContinuation;
using testing::kData;
using testing::kEndHeaders;
using testing::kHeaders;
using testing::kPreface;
using testing::kPriority;
using testing::kRstStream;
using testing::kSettings;
using testing::Opening;

// `count` HEADERS on new odd stream ids from `first` on, each with a body.
std::string Streams(uint32_t first, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    const uint32_t id = first + 2 * i;
    out += Frame(kHeaders, kEndHeaders, id, std::string(7, 'h'));
    out += Frame(kData, 0, id, std::string(5, 'd'));
  }
  return out;
}

TEST(H2PreAckReaderTest, PrefaceSplitAcrossReadsIsRead) {
  H2PreAckReader reader(4);
  const std::string bytes = Opening() + Streams(1, 4);
  for (const char c : bytes) {
    absl::StatusOr<bool> acknowledged = reader.Feed(std::string(1, c));
    ASSERT_TRUE(acknowledged.ok()) << acknowledged.status();
    EXPECT_FALSE(*acknowledged);
  }
  EXPECT_EQ(reader.streams_opened(), 4u);
}

TEST(H2PreAckReaderTest, BadPrefaceIsRefused) {
  H2PreAckReader http1(4);
  EXPECT_TRUE(absl::IsInvalidArgument(
      http1.Feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status()));
  // One wrong byte, the preface's last, in a read of its own.
  std::string wrong(kPreface);
  wrong.back() = 'X';
  H2PreAckReader late(4);
  ASSERT_TRUE(late.Feed(wrong.substr(0, wrong.size() - 1)).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(late.Feed(wrong.substr(23)).status()));
  // Once refused, always refused.
  EXPECT_TRUE(
      absl::IsInvalidArgument(late.Feed(Frame(kSettings, 0, 0)).status()));
}

TEST(H2PreAckReaderTest, LimitHoldsExactlyAtN) {
  constexpr uint32_t kLimit = 3;
  H2PreAckReader reader(kLimit);
  ASSERT_TRUE(reader.Feed(Opening() + Streams(1, kLimit)).ok());
  EXPECT_EQ(reader.streams_opened(), kLimit);
  absl::StatusOr<bool> over = reader.Feed(Streams(7, 1));
  EXPECT_TRUE(absl::IsResourceExhausted(over.status())) << over.status();
  EXPECT_EQ(reader.streams_opened(), kLimit + 1);
  EXPECT_TRUE(absl::IsResourceExhausted(reader.Feed(Streams(9, 1)).status()));
}

TEST(H2PreAckReaderTest, OnlyHeadersOnNewStreamIdsOpenStreams) {
  H2PreAckReader reader(2);
  const std::string bytes =
      Opening() +
      // A header block in three frames: one stream.
      Frame(kHeaders, 0, 1, "hh") + Frame(kContinuation, 0, 1, "cc") +
      Frame(kContinuation, kEndHeaders, 1, "cc") +
      // PRIORITY on new ids opens none (RFC 9113 5.1: idle streams).
      Frame(kPriority, 0, 3, std::string(5, 'p')) +
      Frame(kPriority, 0, 101, std::string(5, 'p')) +
      // Trailers on stream 1, a reset, HEADERS on an old (closed) id.
      Frame(kHeaders, kEndHeaders, 1, "tt") + Frame(kRstStream, 0, 1, "rrrr") +
      Frame(kHeaders, kEndHeaders, 1, "hh") +
      // A second stream, on an id above the PRIORITY's.
      Frame(kHeaders, kEndHeaders, 5, "hh");
  absl::StatusOr<bool> acknowledged = reader.Feed(bytes);
  ASSERT_TRUE(acknowledged.ok()) << acknowledged.status();
  EXPECT_EQ(reader.streams_opened(), 2u);
  EXPECT_TRUE(absl::IsResourceExhausted(
      reader.Feed(Frame(kHeaders, kEndHeaders, 7, "hh")).status()));
}

TEST(H2PreAckReaderTest, PayloadsAreSkippedUnread) {
  H2PreAckReader reader(1);
  reader.ServerSpoke();
  // A DATA payload that holds an ACK's and a HEADERS' frame header.
  const std::string inside =
      Frame(kSettings, kAck, 0) + Frame(kHeaders, kEndHeaders, 3);
  absl::StatusOr<bool> acknowledged =
      reader.Feed(Opening() + Frame(kData, 0, 1, inside));
  ASSERT_TRUE(acknowledged.ok()) << acknowledged.status();
  EXPECT_FALSE(*acknowledged);
  EXPECT_EQ(reader.streams_opened(), 0u);
}

TEST(H2PreAckReaderTest, AckEndsTheWatchInTheSameRead) {
  H2PreAckReader reader(2);
  reader.ServerSpoke();
  // Two streams, the ACK, then ten more in the same read: the ten are
  // gRPC's to count.
  absl::StatusOr<bool> acknowledged = reader.Feed(
      Opening() + Streams(1, 2) + Frame(kSettings, kAck, 0) + Streams(5, 10));
  ASSERT_TRUE(acknowledged.ok()) << acknowledged.status();
  EXPECT_TRUE(*acknowledged);
  EXPECT_EQ(reader.streams_opened(), 2u);
  EXPECT_TRUE(*reader.Feed(Streams(25, 10)));
}

TEST(H2PreAckReaderTest, AckBeforeTheServerSpokeDoesNotCount) {
  H2PreAckReader reader(2);
  absl::StatusOr<bool> early =
      reader.Feed(Opening() + Frame(kSettings, kAck, 0) + Streams(1, 2));
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_FALSE(*early);
  reader.ServerSpoke();
  EXPECT_TRUE(absl::IsResourceExhausted(reader.Feed(Streams(5, 1)).status()));
}

TEST(H2PreAckReaderTest, FramesSplitAtEveryByteReadAlike) {
  constexpr uint32_t kLimit = 3;
  const std::string bytes = Opening() + Frame(kHeaders, 0, 1, "hhh") +
                            Frame(kContinuation, kEndHeaders, 1, "c") +
                            Frame(kPriority, 0, 9, std::string(5, 'p')) +
                            Streams(3, 2) + Frame(kSettings, kAck, 0) +
                            Streams(11, 8);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    H2PreAckReader reader(kLimit);
    reader.ServerSpoke();
    absl::StatusOr<bool> first = reader.Feed(bytes.substr(0, cut));
    ASSERT_TRUE(first.ok()) << "cut " << cut << ": " << first.status();
    absl::StatusOr<bool> second =
        *first ? first : reader.Feed(bytes.substr(cut));
    ASSERT_TRUE(second.ok()) << "cut " << cut << ": " << second.status();
    EXPECT_TRUE(*second) << "cut " << cut;
    EXPECT_EQ(reader.streams_opened(), kLimit) << "cut " << cut;
  }
  // Without the ACK, the same bytes pass the limit wherever they are cut.
  const std::string unacknowledged = Opening() + Streams(1, kLimit + 1);
  for (size_t cut = 0; cut <= unacknowledged.size(); ++cut) {
    H2PreAckReader reader(kLimit);
    absl::StatusOr<bool> first = reader.Feed(unacknowledged.substr(0, cut));
    absl::StatusOr<bool> second =
        first.ok() ? reader.Feed(unacknowledged.substr(cut)) : first;
    EXPECT_TRUE(absl::IsResourceExhausted(second.status())) << "cut " << cut;
  }
}

}  // namespace
}  // namespace chunkplan::transport
