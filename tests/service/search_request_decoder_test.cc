// DecodeSearchRequest against protobuf: wherever the decoder answers, its
// request is the one protobuf's parse and FromProto give, field for field
// (doubles bit for bit); what it declines, ParseAndCheck still answers as
// protobuf does. On requests serialized by protobuf, on hand-written
// encodings protobuf also reads (unpacked, split, repeated, unknown
// fields), and on 20,000 mutations of serialized requests.

#include "server/service/search_request_decoder.h"

#include <bit>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "gtest/gtest.h"
#include "server/service/proto_convert.h"
#include "server/service/request_intake.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::service {
namespace {

using ::testing::HasSubstr;

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// Protobuf's path: the message, then FromProto.
absl::StatusOr<planner::SearchRequest> ProtobufPath(const std::string& bytes) {
  const absl::StatusOr<v1::ChunkSearchRequest> parsed =
      ParseRequest(Buffer(bytes));
  if (!parsed.ok()) return parsed.status();
  return FromProto(*parsed);
}

// Empty when equal, else what differs.
std::string Difference(const planner::SearchRequest& a,
                       const planner::SearchRequest& b) {
  std::string out;
  if (a.numels != b.numels) absl::StrAppend(&out, " numels");
  if (a.dp_degrees != b.dp_degrees) absl::StrAppend(&out, " dp_degrees");
  if (std::bit_cast<uint64_t>(a.search_range_m) !=
      std::bit_cast<uint64_t>(b.search_range_m)) {
    absl::StrAppend(&out, " search_range_m");
  }
  if (a.search_interval != b.search_interval) {
    absl::StrAppend(&out, " search_interval");
  }
  if (std::bit_cast<uint64_t>(a.min_chunk_size_m) !=
      std::bit_cast<uint64_t>(b.min_chunk_size_m)) {
    absl::StrAppend(&out, " min_chunk_size_m");
  }
  if (a.filter_exlarge_params != b.filter_exlarge_params) {
    absl::StrAppend(&out, " filter_exlarge_params");
  }
  if (a.engine != b.engine) absl::StrAppend(&out, " engine");
  return out;
}

// Where the decoder answers, protobuf answers the same request. Returns
// whether the decoder answered.
bool ExpectAgrees(const std::string& bytes, const std::string& label) {
  const std::optional<planner::SearchRequest> decoded =
      DecodeSearchRequest(bytes);
  const absl::StatusOr<planner::SearchRequest> want = ProtobufPath(bytes);
  if (!decoded.has_value()) return false;
  EXPECT_TRUE(want.ok()) << label << ": decoded what protobuf refuses: "
                         << want.status();
  if (want.ok()) EXPECT_EQ(Difference(*decoded, *want), "") << label;
  return true;
}

// A minimal protobuf writer, for encodings protobuf's serializer does not
// produce.
struct Wire {
  std::string bytes;
  Wire& Varint(uint64_t v) {
    do {
      bytes.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
      v >>= 7;
    } while (v != 0);
    return *this;
  }
  Wire& Tag(uint32_t field, uint32_t wire) {
    return Varint(uint64_t{field} << 3 | wire);
  }
  Wire& Fixed64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(v >> 8 * i));
    return *this;
  }
  Wire& Raw(const std::string& raw) {
    bytes += raw;
    return *this;
  }
  Wire& Packed(uint32_t field, std::initializer_list<uint64_t> values) {
    Wire run;
    for (uint64_t v : values) run.Varint(v);
    return Tag(field, 2).Varint(run.bytes.size()).Raw(run.bytes);
  }
};

TEST(DecodeSearchRequest, EqualsProtobufOnSerializedRequests) {
  int decoded = 0;
  const std::vector<v1::ChunkSearchRequest> requests =
      testing::RandomRequests(300, 20261203);
  for (size_t i = 0; i < requests.size(); ++i) {
    decoded += ExpectAgrees(requests[i].SerializeAsString(),
                            absl::StrCat("random request ", i));
  }
  // protobuf's own encoding is the fast path's: every one is decoded.
  EXPECT_EQ(decoded, 300);
  EXPECT_TRUE(ExpectAgrees(testing::Gpt2ColossalAiRequest().SerializeAsString(),
                           "gpt2"));
  EXPECT_TRUE(ExpectAgrees("", "empty"));
}

TEST(DecodeSearchRequest, EqualsProtobufOnOtherEncodingsItTakes) {
  const double range = 0.75;
  Wire w;
  w.Tag(1, 0)
      .Varint(5)             // numels unpacked
      .Packed(1, {7, 0, 9})  // then a packed piece
      .Tag(1, 0)
      .Varint(11)                          // then unpacked again
      .Packed(2, {uint64_t{1} << 33 | 4})  // a degree beyond 32 bits
      .Tag(3, 1)
      .Fixed64(std::bit_cast<uint64_t>(2.5))
      .Tag(3, 1)
      .Fixed64(std::bit_cast<uint64_t>(range))  // last wins
      .Tag(4, 0)
      .Varint(128)
      .Tag(6, 0)
      .Varint(7)  // any non-zero bool is true
      .Tag(7, 0)
      .Varint(2)
      .Tag(99, 0)
      .Varint(UINT64_MAX)  // unknown fields of every type
      .Tag(100, 1)
      .Fixed64(1)
      .Tag(101, 2)
      .Varint(3)
      .Raw("abc")
      .Tag(102, 5)
      .Raw("wxyz");
  ASSERT_TRUE(ExpectAgrees(w.bytes, "mixed encodings"));
  const planner::SearchRequest got = *DecodeSearchRequest(w.bytes);
  EXPECT_EQ(got.numels, (std::vector<uint64_t>{5, 7, 0, 9, 11}));
  EXPECT_EQ(got.dp_degrees, (std::vector<uint32_t>{4}));
  EXPECT_EQ(got.search_range_m, range);
  EXPECT_EQ(got.min_chunk_size_m, 32);  // absent: the proto default
  EXPECT_TRUE(got.filter_exlarge_params);
  EXPECT_EQ(got.engine, planner::Engine::kCpuPlateau);

  // filter_exlarge_params present and false; min_chunk_size_m present.
  Wire off;
  off.Packed(1, {3}).Tag(5, 1).Fixed64(0).Tag(6, 0).Varint(0);
  ASSERT_TRUE(ExpectAgrees(off.bytes, "filter off"));
  EXPECT_FALSE(DecodeSearchRequest(off.bytes)->filter_exlarge_params);
  EXPECT_EQ(DecodeSearchRequest(off.bytes)->min_chunk_size_m, 0);
}

TEST(DecodeSearchRequest, DeclinesWhatItDoesNotDecodeAndIntakeStillAnswers) {
  const std::string good = testing::Gpt2ColossalAiRequest().SerializeAsString();
  const std::pair<const char*, std::string> declined[] = {
      {"a group", Wire().Tag(50, 3).Tag(50, 4).Raw(good).bytes},
      {"a double as a varint", Wire().Raw(good).Tag(3, 0).Varint(1).bytes},
      {"field 0", Wire().Raw(good).Tag(0, 0).Varint(1).bytes},
      {"a six-byte tag", Wire()
                             .Raw(good)
                             .Raw(std::string("\x88\x80\x80\x80\x80\x00", 6))
                             .Varint(1)
                             .bytes},
      {"an eleven-byte varint", Wire()
                                    .Raw(good)
                                    .Tag(4, 0)
                                    .Raw(std::string(10, '\x80'))
                                    .Raw("\x01")
                                    .bytes},
      {"a length past the end", Wire().Raw(good).Tag(1, 2).Varint(50).bytes},
      {"a truncated packed run",
       Wire().Raw(good).Tag(1, 2).Varint(1).Raw("\x80").bytes},
      {"an engine outside the enum",
       Wire().Raw(good).Tag(7, 0).Varint(9).bytes},
  };
  for (const auto& [label, bytes] : declined) {
    EXPECT_FALSE(DecodeSearchRequest(bytes).has_value()) << label;
    // ParseAndCheck answers as protobuf's path does.
    const absl::StatusOr<planner::SearchRequest> want = ProtobufPath(bytes);
    const absl::StatusOr<planner::SearchRequest> got =
        ParseAndCheck(Buffer(bytes), ServiceOptions{});
    EXPECT_EQ(got.status(), want.status()) << label;
    if (got.ok() && want.ok()) EXPECT_EQ(Difference(*got, *want), "") << label;
  }
  const absl::StatusOr<planner::SearchRequest> engine = ParseAndCheck(
      Buffer(Wire().Raw(good).Tag(7, 0).Varint(9).bytes), ServiceOptions{});
  EXPECT_THAT(engine.status().message(), HasSubstr("engine is 9"));
}

TEST(DecodeSearchRequest, MutatedBytesNeverDecodeDifferently) {
  std::mt19937_64 rng(31);
  const std::vector<v1::ChunkSearchRequest> requests =
      testing::RandomRequests(200, 7);
  int decoded = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = requests[round % requests.size()].SerializeAsString();
    const int edits = 1 + rng() % 3;
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes.resize(at);
          break;
        default:
          bytes.insert(at, 1, static_cast<char>(rng()));
      }
    }
    decoded += ExpectAgrees(bytes, absl::StrCat("mutation ", round));
  }
  // Many mutations stay decodable: the comparison above is not vacuous.
  EXPECT_GT(decoded, 2000);
}

TEST(ParseAndCheck, CountsLimitsOnTheDecodedPathAndFillsTheRecord) {
  ServiceOptions options;
  options.max_params = 3;
  Wire w;
  w.Packed(1, {1, 2, 3, 4}).Tag(4, 0).Varint(1).Tag(7, 0).Varint(1);
  CallRecord record;
  const absl::StatusOr<planner::SearchRequest> got =
      ParseAndCheck(Buffer(w.bytes), options, &record);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("numels has 4 entries"));
  EXPECT_EQ(record.params, 4u);
  EXPECT_EQ(record.engine, planner::Engine::kCpuSweep);
}

}  // namespace
}  // namespace chunkplan::service
