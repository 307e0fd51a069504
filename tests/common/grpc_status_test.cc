#include "common/grpc_status.h"

#include "gtest/gtest.h"

namespace chunkplan::common {
namespace {

TEST(ToGrpcStatus, OkIsOk) { EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok()); }

TEST(ToGrpcStatus, KeepsCodeAndMessage) {
  const grpc::Status s =
      ToGrpcStatus(absl::InvalidArgumentError("dp_degrees[3] is 0"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "dp_degrees[3] is 0");
  EXPECT_EQ(ToGrpcStatus(absl::ResourceExhaustedError("x")).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ToGrpcStatus(absl::DeadlineExceededError("x")).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(ToGrpcStatus(absl::UnauthenticatedError("x")).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST(ToGrpcStatus, NonCanonicalCodeIsUnknown) {
  const grpc::Status s =
      ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(99), "odd"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "odd");
}

TEST(ToAbslStatus, OkIsOk) { EXPECT_TRUE(ToAbslStatus(grpc::Status::OK).ok()); }

TEST(ToAbslStatus, KeepsCodeAndMessage) {
  const absl::Status s = ToAbslStatus(grpc::Status(
      grpc::StatusCode::RESOURCE_EXHAUSTED, "numels has 9 entries"));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "numels has 9 entries");
}

TEST(GrpcStatus, EveryCanonicalCodeSurvivesTheRoundTrip) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status in(static_cast<absl::StatusCode>(code), "m");
    EXPECT_EQ(ToAbslStatus(ToGrpcStatus(in)), in) << code;
  }
}

}  // namespace
}  // namespace chunkplan::common
