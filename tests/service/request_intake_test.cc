#include "server/service/request_intake.h"

#include <string>

#include "chunkplan/v1/chunk_search.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "gtest/gtest.h"

namespace chunkplan::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

grpc::ByteBuffer BodyOf(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

grpc::ByteBuffer BodyOf(const v1::ChunkSearchRequest& request) {
  return BodyOf(request.SerializeAsString());
}

TEST(ParseAndCheck, ConvertsEveryFieldAndLeavesTheBodyAsItWas) {
  v1::ChunkSearchRequest request;
  request.add_numels(7);
  request.add_numels(9);
  request.add_dp_degrees(2);
  request.set_search_range_m(1.5);
  request.set_search_interval(3);
  request.set_min_chunk_size_m(0.25);
  request.set_filter_exlarge_params(false);
  request.set_engine(v1::ENGINE_CPU_SWEEP);
  const grpc::ByteBuffer body = BodyOf(request);

  absl::StatusOr<planner::SearchRequest> out =
      ParseAndCheck(body, ServiceOptions{});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->numels, ElementsAre(7, 9));
  EXPECT_THAT(out->dp_degrees, ElementsAre(2));
  EXPECT_EQ(out->search_range_m, 1.5);
  EXPECT_EQ(out->search_interval, 3u);
  EXPECT_EQ(out->min_chunk_size_m, 0.25);
  EXPECT_FALSE(out->filter_exlarge_params);
  EXPECT_EQ(out->engine, planner::Engine::kCpuSweep);
  EXPECT_EQ(body.Length(), request.ByteSizeLong());
}

TEST(ParseAndCheck, UnsetOptionalFieldsTakeTheSeedsDefaults) {
  v1::ChunkSearchRequest request;
  request.add_numels(7);
  absl::StatusOr<planner::SearchRequest> out =
      ParseAndCheck(BodyOf(request), ServiceOptions{});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->min_chunk_size_m, 32.0);
  EXPECT_TRUE(out->filter_exlarge_params);
  EXPECT_EQ(out->engine, planner::Engine::kAuto);
}

TEST(ParseAndCheck, BytesThatAreNoRequestAreInvalidArgument) {
  // A varint cut short.
  absl::StatusOr<planner::SearchRequest> out =
      ParseAndCheck(BodyOf(std::string("\x08\xff\xff", 3)), ServiceOptions{});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("(3 bytes) is not a valid "
                        "chunkplan.v1.ChunkSearchRequest"));
}

TEST(ParseAndCheck, MoreEntriesThanMaxParamsIsResourceExhausted) {
  ServiceOptions options;
  options.max_params = 2;
  v1::ChunkSearchRequest request;
  request.add_numels(1);
  request.add_numels(1);
  EXPECT_TRUE(ParseAndCheck(BodyOf(request), options).ok());

  request.add_numels(1);
  absl::StatusOr<planner::SearchRequest> out =
      ParseAndCheck(BodyOf(request), options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              HasSubstr("numels has more than 2 entries"));
  EXPECT_THAT(out.status().message(), HasSubstr("at most 2"));

  request.clear_numels();
  request.add_numels(1);
  for (int i = 0; i < 3; ++i) request.add_dp_degrees(1);
  out = ParseAndCheck(BodyOf(request), options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              HasSubstr("dp_degrees has more than 2 entries"));
}

TEST(ParseAndCheck, EngineOutsideTheEnumIsInvalidArgument) {
  v1::ChunkSearchRequest request;
  request.add_numels(1);
  request.set_engine(static_cast<v1::Engine>(99));
  absl::StatusOr<planner::SearchRequest> out =
      ParseAndCheck(BodyOf(request), ServiceOptions{});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("engine is 99"));
}

TEST(PlannerOptionsFor, CarriesTheSweepLimitsAndThreads) {
  ServiceOptions options;
  options.max_sweep_work = 12345;
  options.max_cuda_work = 678;
  options.sweep_threads = 3;
  options.max_plateau_work = 91011;
  const planner::PlannerOptions out = PlannerOptionsFor(options);
  EXPECT_EQ(out.cpu_sweep.max_work, 12345u);
  EXPECT_EQ(out.cpu_sweep.threads, 3u);
  EXPECT_EQ(out.cuda.max_work, 678u);
  EXPECT_EQ(out.max_plateau_work, 91011u);
}

}  // namespace
}  // namespace chunkplan::service
