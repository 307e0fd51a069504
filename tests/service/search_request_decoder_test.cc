// DecodeSearchRequest against protobuf: wherever the decoder answers, its
// request is the one protobuf's parse and FromProto give, field for field
// (doubles bit for bit); what it declines (every field it is not taught
// among them), ParseAndCheck still answers as protobuf does. On requests
// serialized by protobuf, on hand-written encodings protobuf also reads
// (unpacked, split, repeated), and on 20,000 mutations of serialized
// requests. The decoder's list of taught fields is the message's own.

#include "server/service/search_request_decoder.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
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
      .Varint(2);
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

// ParseAndCheck of `bytes` under default options gives protobuf's answer:
// the same status, and where both answer, the same request.
void ExpectIntakeAsProtobuf(const std::string& bytes,
                            const std::string& label) {
  const absl::StatusOr<planner::SearchRequest> want = ProtobufPath(bytes);
  const absl::StatusOr<planner::SearchRequest> got =
      ParseAndCheck(Buffer(bytes), ServiceOptions{});
  EXPECT_EQ(got.status(), want.status()) << label;
  if (got.ok() && want.ok()) EXPECT_EQ(Difference(*got, *want), "") << label;
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
    ExpectIntakeAsProtobuf(bytes, label);
  }
  const absl::StatusOr<planner::SearchRequest> engine = ParseAndCheck(
      Buffer(Wire().Raw(good).Tag(7, 0).Varint(9).bytes), ServiceOptions{});
  EXPECT_THAT(engine.status().message(), HasSubstr("engine is 9"));
}

// A field the decoder is not taught -- a field 8 that a newer
// ChunkSearchRequest would carry, of any wire type, before or after the
// taught fields -- is declined, so protobuf's path answers the request (a
// decoder that skipped it would answer without it).
TEST(DecodeSearchRequest, DeclinesEveryFieldItIsNotTaught) {
  const std::string good = testing::Gpt2ColossalAiRequest().SerializeAsString();
  const std::pair<const char*, std::string> untaught[] = {
      {"field 8, a varint", Wire().Raw(good).Tag(8, 0).Varint(1).bytes},
      {"field 8 first", Wire().Tag(8, 0).Varint(300).Raw(good).bytes},
      {"field 15, length-delimited",
       Wire().Raw(good).Tag(15, 2).Varint(3).Raw("abc").bytes},
      {"field 8, fixed32", Wire().Raw(good).Tag(8, 5).Raw("wxyz").bytes},
      {"field 99, fixed64", Wire().Raw(good).Tag(99, 1).Fixed64(1).bytes},
      {"field 536870911, an empty message",
       Wire().Raw(good).Tag(536870911, 2).Varint(0).bytes},
  };
  for (const auto& [label, bytes] : untaught) {
    EXPECT_FALSE(DecodeSearchRequest(bytes).has_value()) << label;
    ExpectIntakeAsProtobuf(bytes, label);
    const absl::StatusOr<planner::SearchRequest> got =
        ParseAndCheck(Buffer(bytes), ServiceOptions{});
    ASSERT_TRUE(got.ok()) << label << ": " << got.status();
    EXPECT_EQ(got->numels.size(),
              testing::Gpt2ColossalAiRequest().numels_size());
  }
}

std::string Describe(int number, absl::string_view name, absl::string_view type,
                     DecodedField::Label label) {
  const char* labels[] = {"singular", "optional", "repeated"};
  return absl::StrCat(number, " ", name, " ", type, " ",
                      labels[static_cast<int>(label)]);
}

// Fails when chunkplan.v1.ChunkSearchRequest gains (or changes) a field
// that the decoder has not been taught: teach DecodeSearchRequest the field,
// then add it to kDecodedSearchRequestFields (or, declined on purpose, to
// kDeclinedSearchRequestFields).
TEST(DecodeSearchRequest, TaughtFieldsAreTheMessagesFields) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* message =
      v1::ChunkSearchRequest::descriptor();
  std::vector<std::string> proto_fields;
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* f = message->field(i);
    const DecodedField::Label label =
        f->is_repeated()            ? DecodedField::Label::kRepeated
        : f->has_optional_keyword() ? DecodedField::Label::kOptional
                                    : DecodedField::Label::kSingular;
    proto_fields.push_back(
        Describe(f->number(), f->name(), f->type_name(), label));
  }
  std::vector<std::string> taught;
  for (const DecodedField& f : kDecodedSearchRequestFields) {
    taught.push_back(Describe(f.number, f.name, f.type, f.label));
  }
  for (const DecodedField& f : kDeclinedSearchRequestFields) {
    taught.push_back(Describe(f.number, f.name, f.type, f.label));
  }
  std::sort(proto_fields.begin(), proto_fields.end());
  std::sort(taught.begin(), taught.end());
  EXPECT_EQ(proto_fields, taught);
}

// Sets `field` of `message` to a value other than its default.
void SetOther(const google::protobuf::FieldDescriptor* field,
              v1::ChunkSearchRequest* message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = message->GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_UINT64:
      repeated ? r->AddUInt64(message, field, 3)
               : r->SetUInt64(message, field, 3);
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      repeated ? r->AddUInt32(message, field, 2)
               : r->SetUInt32(message, field, 2);
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(message, field, 0.5);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(message, field, !field->default_value_bool());
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      r->SetEnumValue(message, field, 1);
      break;
    default:
      ADD_FAILURE() << "no test value for " << field->full_name();
  }
}

// Every field in kDecodedSearchRequestFields is decoded (not declined), as
// protobuf reads it: the list names only what the decoder takes.
TEST(DecodeSearchRequest, DecodesEveryTaughtField) {
  for (const DecodedField& taught : kDecodedSearchRequestFields) {
    const google::protobuf::FieldDescriptor* field =
        v1::ChunkSearchRequest::descriptor()->FindFieldByNumber(taught.number);
    ASSERT_NE(field, nullptr) << taught.name;
    v1::ChunkSearchRequest request;
    SetOther(field, &request);
    const std::string bytes = request.SerializeAsString();
    ASSERT_FALSE(bytes.empty()) << taught.name;
    EXPECT_TRUE(ExpectAgrees(bytes, taught.name)) << taught.name;
  }
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
    const std::string label = absl::StrCat("mutation ", round);
    decoded += ExpectAgrees(bytes, label);
    ExpectIntakeAsProtobuf(bytes, label);
  }
  // Many mutations stay decodable: the comparison above is not vacuous.
  EXPECT_GT(decoded, 2000);
}

TEST(ParseAndCheck, FillsTheRecordOnTheDecodedPath) {
  Wire w;
  w.Packed(1, {1, 2, 3, 4}).Tag(4, 0).Varint(1).Tag(7, 0).Varint(1);
  ASSERT_TRUE(DecodeSearchRequest(w.bytes).has_value());
  CallRecord record;
  const absl::StatusOr<planner::SearchRequest> got =
      ParseAndCheck(Buffer(w.bytes), ServiceOptions{}, &record);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(record.params, 4u);
  EXPECT_EQ(record.engine, planner::Engine::kCpuSweep);
}

// A body past --max_params is refused by the wire count before the decoder
// sees it, with the message protobuf's path gives it too.
TEST(ParseAndCheck, RefusesBySizeBeforeDecoding) {
  ServiceOptions options;
  options.max_params = 3;
  Wire w;
  w.Packed(1, {1, 2, 3, 4}).Tag(4, 0).Varint(1).Tag(7, 0).Varint(1);
  ASSERT_TRUE(DecodeSearchRequest(w.bytes).has_value());
  const absl::StatusOr<planner::SearchRequest> got =
      ParseAndCheck(Buffer(w.bytes), options);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("numels has more than 3"));
  Wire declined = w;
  declined.Tag(8, 0).Varint(1);
  ASSERT_FALSE(DecodeSearchRequest(declined.bytes).has_value());
  EXPECT_EQ(ParseAndCheck(Buffer(declined.bytes), options).status(),
            got.status());
}

}  // namespace
}  // namespace chunkplan::service
