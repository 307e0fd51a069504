#include "server/service/wire_counts.h"

#include <cstdint>
#include <set>
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "gtest/gtest.h"
#include "server/service/request_intake.h"

namespace chunkplan::service {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::testing::HasSubstr;

// `bytes` as a body of two slices (split in the middle), as gRPC may hand it.
grpc::ByteBuffer BodyOf(const std::string& bytes) {
  const size_t half = bytes.size() / 2;
  grpc::Slice slices[2] = {grpc::Slice(bytes.substr(0, half)),
                           grpc::Slice(bytes.substr(half))};
  return grpc::ByteBuffer(slices, 2);
}

// Wire-format writers, from the encoding's definition.
std::string Varint(uint64_t v) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream(&stream).WriteVarint64(v);
  return out;
}
std::string Key(int field, int wire_type) {
  return Varint(static_cast<uint64_t>(field) << 3 | wire_type);
}
std::string Unpacked(int field, int count, uint64_t value = 1) {
  std::string out;
  for (int i = 0; i < count; ++i) out += Key(field, 0) + Varint(value);
  return out;
}
std::string Packed(int field, int count, uint64_t value = 1) {
  std::string run;
  for (int i = 0; i < count; ++i) run += Varint(value);
  return Key(field, 2) + Varint(run.size()) + run;
}
std::string Delimited(int field, const std::string& body) {
  return Key(field, 2) + Varint(body.size()) + body;
}

// The repeated fields reachable from `message` (through singular message
// fields), as "prefix.name" -> kind, recursively.
void RepeatedFields(const Descriptor* message, const std::string& prefix,
                    std::set<std::string>& out) {
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* f = message->field(i);
    const std::string name = prefix + f->name();
    if (f->is_repeated()) {
      // A message or a string: a length-delimited entry (Kind::kMessage).
      const bool delimited =
          f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ||
          f->cpp_type() == FieldDescriptor::CPPTYPE_STRING;
      out.insert(absl::StrCat(name, "#", f->number(),
                              delimited ? ":message" : ":varint"));
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      RepeatedFields(f->message_type(), name + ".", out);
    }
  }
}

std::set<std::string> Counted(std::span<const CountedField> fields,
                              const std::string& prefix) {
  std::set<std::string> out;
  for (const CountedField& f : fields) {
    out.insert(absl::StrCat(
        prefix, f.name, "#", f.number,
        f.kind == CountedField::Kind::kMessage ? ":message" : ":varint"));
  }
  return out;
}

// Every repeated field of the requests (each one a way to make the server
// hold memory) is one the counter counts, by number, name and encoding: a
// repeated field added to ChunkSearchRequest or LayoutRequest (or to a
// message inside them) fails here until wire_counts.h is taught it.
TEST(WireCounts, CountsEveryRepeatedFieldOfTheRequests) {
  std::set<std::string> search;
  RepeatedFields(v1::ChunkSearchRequest::descriptor(), "", search);
  std::set<std::string> want_search = Counted(kSearchRequestCounted, "");
  want_search.merge(Counted(kLoraCounted, "model.lora."));
  EXPECT_EQ(search, want_search);

  std::set<std::string> layout;
  RepeatedFields(v1::LayoutRequest::descriptor(), "", layout);
  std::set<std::string> want = Counted(kLayoutRequestCounted, "");
  want.merge(Counted(kSearchRequestCounted, "search."));
  want.merge(Counted(kLoraCounted, "search.model.lora."));
  want.merge(Counted(kLoraCounted, "workload.shape_from.lora."));
  want.merge(Counted(kClusterCounted, "cluster."));
  EXPECT_EQ(layout, want);
  const FieldDescriptor* nested =
      v1::LayoutRequest::descriptor()->FindFieldByNumber(kLayoutSearchField);
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->name(), "search");
  EXPECT_EQ(nested->message_type(), v1::ChunkSearchRequest::descriptor());
  const FieldDescriptor* cluster =
      v1::LayoutRequest::descriptor()->FindFieldByNumber(kLayoutClusterField);
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->name(), "cluster");
  EXPECT_EQ(cluster->message_type(), v1::Cluster::descriptor());

  std::set<std::string> plan;
  RepeatedFields(v1::PlanRequest::descriptor(), "", plan);
  std::set<std::string> want_plan = Counted(kPlanRequestCounted, "");
  want_plan.merge(Counted(kSearchRequestCounted, "search."));
  want_plan.merge(Counted(kLoraCounted, "search.model.lora."));
  want_plan.merge(Counted(kLoraCounted, "workload.shape_from.lora."));
  want_plan.merge(Counted(kClusterCounted, "cluster."));
  EXPECT_EQ(plan, want_plan);
  const auto* descriptor = v1::PlanRequest::descriptor();
  EXPECT_EQ(descriptor->FindFieldByNumber(kPlanSearchField)->message_type(),
            v1::ChunkSearchRequest::descriptor());
  EXPECT_EQ(descriptor->FindFieldByNumber(kPlanClusterField)->message_type(),
            v1::Cluster::descriptor());
  EXPECT_EQ(v1::ChunkSearchRequest::descriptor()
                ->FindFieldByNumber(kSearchModelField)
                ->message_type(),
            v1::ModelConfig::descriptor());
  EXPECT_EQ(v1::ModelConfig::descriptor()
                ->FindFieldByNumber(kModelLoraField)
                ->message_type(),
            v1::Lora::descriptor());
  EXPECT_EQ(
      descriptor->FindFieldByNumber(kRequestWorkloadField)->message_type(),
      v1::Workload::descriptor());
  EXPECT_EQ(v1::Workload::descriptor()
                ->FindFieldByNumber(kWorkloadShapeFromField)
                ->message_type(),
            v1::ModelConfig::descriptor());
}

// A PlanRequest's fields, nested ones included, each counted as protobuf
// reads them.
TEST(WireCounts, CountsEveryFieldOfAPlanRequest) {
  const std::string plan = Delimited(1, Packed(1, 3)) + Packed(2, 2) +
                           Delimited(4, Packed(4, 2)) +
                           Delimited(1, Unpacked(1, 2) + Packed(2, 1)) +
                           Unpacked(2, 3) + Delimited(4, Unpacked(4, 3, 64));
  v1::PlanRequest request;
  ASSERT_TRUE(request.ParseFromString(plan));
  ASSERT_EQ(request.search().numels_size(), 5);
  ASSERT_EQ(request.frozen_size(), 5);
  ASSERT_EQ(request.cluster().world_sizes_size(), 5);
  EXPECT_TRUE(CheckPlanRequestCounts(BodyOf(plan), 5).ok());
  EXPECT_THAT(CheckPlanRequestCounts(BodyOf(plan), 4).message(),
              HasSubstr("search.numels has more than 4"));
  EXPECT_THAT(CheckPlanRequestCounts(BodyOf(Packed(2, 3)), 2).message(),
              HasSubstr("frozen has more than 2"));
  EXPECT_THAT(
      CheckPlanRequestCounts(
          BodyOf(Delimited(4, Packed(4, 2)) + Delimited(4, Unpacked(4, 1))), 2)
          .message(),
      HasSubstr("cluster.world_sizes has more than 2"));
}

// At the limit a body passes; one entry more is refused naming the field,
// whatever the encoding: packed, unpacked, in pieces of both.
TEST(WireCounts, RefusesOneEntryPastTheLimitInEveryEncoding) {
  const std::string encodings[] = {
      Packed(1, 5),
      Unpacked(1, 5, 1ull << 63),
      Packed(1, 2) + Unpacked(1, 1) + Key(4, 0) + Varint(7) + Packed(1, 2),
  };
  for (const std::string& numels : encodings) {
    EXPECT_TRUE(CheckSearchRequestCounts(BodyOf(numels), 5).ok());
    const absl::Status refused = CheckSearchRequestCounts(BodyOf(numels), 4);
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(refused.message(), HasSubstr("numels has more than 4"));
  }
  const absl::Status dp =
      CheckSearchRequestCounts(BodyOf(Packed(1, 1) + Unpacked(2, 3, 8)), 2);
  EXPECT_THAT(dp.message(), HasSubstr("dp_degrees has more than 2"));
}

// The counts agree with protobuf's message: a field in another wire type is
// an unknown field (not counted), and the occurrences of LayoutRequest's
// `search` merge.
TEST(WireCounts, CountsAsProtobufReadsTheBody) {
  // numels as fixed64 (wire type 1): protobuf keeps it as an unknown field.
  const std::string odd = Key(1, 1) + std::string(8, '\0') + Packed(1, 2);
  v1::ChunkSearchRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(odd));
  ASSERT_EQ(parsed.numels_size(), 2);
  EXPECT_TRUE(CheckSearchRequestCounts(BodyOf(odd), 2).ok());

  const std::string layout = Delimited(1, Packed(1, 3)) +
                             Delimited(2, Unpacked(2, 1, 64)) +
                             Delimited(1, Unpacked(1, 2)) + Packed(3, 4) +
                             Unpacked(3, 1) + Delimited(2, "");
  v1::LayoutRequest request;
  ASSERT_TRUE(request.ParseFromString(layout));
  ASSERT_EQ(request.search().numels_size(), 5);
  ASSERT_EQ(request.configs_size(), 2);
  ASSERT_EQ(request.frozen_size(), 5);
  EXPECT_TRUE(CheckLayoutRequestCounts(BodyOf(layout), 5).ok());
  const absl::Status refused = CheckLayoutRequestCounts(BodyOf(layout), 4);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("search.numels has more than 4"));
  EXPECT_THAT(CheckLayoutRequestCounts(BodyOf(Packed(3, 3)), 2).message(),
              HasSubstr("frozen has more than 2"));
  EXPECT_THAT(
      CheckLayoutRequestCounts(BodyOf(Delimited(2, "") + Delimited(2, "")), 1)
          .message(),
      HasSubstr("configs has more than 1"));
  // A LayoutRequest's cluster (field 7) is a Cluster: its world_sizes
  // (field 4) count, occurrences merged.
  const std::string cluster =
      Delimited(7, Packed(4, 2)) + Delimited(7, Unpacked(4, 2));
  ASSERT_TRUE(request.ParseFromString(cluster));
  ASSERT_EQ(request.cluster().world_sizes_size(), 4);
  EXPECT_TRUE(CheckLayoutRequestCounts(BodyOf(cluster), 4).ok());
  EXPECT_THAT(CheckLayoutRequestCounts(BodyOf(cluster), 3).message(),
              HasSubstr("cluster.world_sizes has more than 3"));
}

// The count ends at the first field past the limit, far before the end of a
// body of many entries (here the rest of the body is not even well formed).
TEST(WireCounts, StopsAtTheLimitWithoutReadingOn) {
  const std::string body = Packed(1, 1000) + "\xff\xff";
  EXPECT_EQ(CheckSearchRequestCounts(BodyOf(body), 10).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CheckSearchRequestCounts(BodyOf(body), 1000).code(),
            absl::StatusCode::kInvalidArgument);
}

// Bytes that are not the wire format get a reason, and ParseAndCheck's
// message ends in it (it ended in an empty reason before).
TEST(WireCounts, MalformedBytesGetAReason) {
  const std::string cut[] = {
      std::string("\x08\xff\xff", 3),  // varint cut short
      Key(1, 2) + Varint(9) + "\x01",  // packed run past the end
      Key(4, 0),                       // tag without a value
      std::string("\x00", 1),          // field number 0
      Key(9, 7),                       // wire type 7
  };
  for (const std::string& bytes : cut) {
    const absl::Status counted = CheckSearchRequestCounts(BodyOf(bytes), 100);
    EXPECT_EQ(counted.code(), absl::StatusCode::kInvalidArgument) << bytes;
    EXPECT_THAT(counted.message(), HasSubstr(" at byte "));
    const absl::StatusOr<planner::SearchRequest> out =
        ParseAndCheck(BodyOf(bytes), ServiceOptions{});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr(counted.message()));
  }
}

// LargestRequestBytes bounds what protobuf writes for the largest values in
// every field of a LayoutRequest with `n` entries per repeated field.
TEST(WireCounts, LargestRequestBytesBoundsTheLargestSerializedRequest) {
  constexpr int n = 1000;
  v1::LayoutRequest request;
  v1::ChunkSearchRequest& search = *request.mutable_search();
  for (int i = 0; i < n; ++i) {
    search.add_numels(UINT64_MAX);
    search.add_dp_degrees(UINT32_MAX);
    v1::ChunkConfig& config = *request.add_configs();
    config.set_dp_degree(UINT32_MAX);
    config.set_chunk_size(UINT64_MAX);
    config.set_keep_gathered(true);
    request.add_frozen(true);
  }
  search.set_search_range_m(1e300);
  search.set_search_interval(UINT64_MAX);
  search.set_min_chunk_size_m(1e300);
  search.set_filter_exlarge_params(true);
  search.set_engine(v1::ENGINE_CUDA);
  request.mutable_gemini()->set_precision(v1::PRECISION_BF16);
  request.mutable_gemini()->set_master_weights(true);
  request.mutable_gemini()->set_gradient_accumulation(true);
  request.mutable_gemini()->set_pin_memory(true);
  request.mutable_gemini()->set_optimizer(v1::OPTIMIZER_NONE);
  request.set_objective(v1::OBJECTIVE_PEAK_RANK_BYTES);
  EXPECT_LE(request.ByteSizeLong(), LargestRequestBytes(n));
  EXPECT_EQ(LargestRequestBytes(n), 40u * n + 4096);
}

}  // namespace
}  // namespace chunkplan::service
