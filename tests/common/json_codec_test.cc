#include "common/json_codec.h"

#include <string>

#include "chunkplan/v1/chunk_search.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::common {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::Status Parse(const std::string& json) {
  v1::ChunkSearchRequest request;
  return JsonToMessage(json, &request);
}

TEST(JsonToMessage, TakesAPlainRequest) {
  v1::ChunkSearchRequest request;
  ASSERT_TRUE(JsonToMessage(R"({"numels": [1000, "2000"], "searchRangeM": 1,
                                "search_interval": 1, "dp_degrees": [2]})",
                            &request)
                  .ok());
  EXPECT_EQ(request.numels_size(), 2);
  EXPECT_EQ(request.numels(1), 2000u);
  EXPECT_EQ(request.search_range_m(), 1);
}

// protobuf 3.21's parser flattened these into three numels.
TEST(JsonToMessage, RefusesAnArrayInsideAnArray) {
  const absl::Status s =
      Parse(R"({"numels":[[1000],[2000,[3000]]],"search_interval":1})");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("an array inside an array at byte 11"));
  // Arrays of objects stay fine.
  v1::LayoutRequest layout;
  EXPECT_TRUE(JsonToMessage(R"({"search": {"numels": [1]},
                                "configs": [{"dp_degree": 1}, {}]})",
                            &layout)
                  .ok());
}

// protobuf 3.21's parser concatenated the two numels, and kept the last of
// two scalars.
TEST(JsonToMessage, RefusesAKeyTwiceInOneObject) {
  absl::Status s = Parse(R"({"numels":[1000],"numels":[2000]})");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("key \"numels\" appears twice"));
  s = Parse(R"({"numels":[1],"search_range_m":1,"searchRangeM":2})");
  EXPECT_THAT(s.message(), HasSubstr("key \"searchRangeM\" appears twice"));
  s = Parse(R"({"num\u0065ls":[1]})");
  EXPECT_THAT(s.message(), HasSubstr("holds an escape"));
  // The same key in two objects, and a key's text as a value, are fine.
  v1::LayoutRequest layout;
  EXPECT_TRUE(JsonToMessage(R"({"search": {"engine": "ENGINE_AUTO"},
                                "configs": [{"dp_degree": 1},
                                            {"dp_degree": 2}]})",
                            &layout)
                  .ok());
  EXPECT_TRUE(Parse(R"({"engine": "ENGINE_AUTO", "numels": [1]})").ok());
}

// An invalid value of 1 MB is not echoed whole.
TEST(JsonToMessage, CutsEchoedValues) {
  const std::string value(1 << 20, 'x');
  const absl::Status s = Parse(R"({"numels":[")" + value + R"("]})");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), 300u) << s.message().substr(0, 300);
  EXPECT_THAT(s.message(),
              HasSubstr("\"" + std::string(kMaxEchoedBytes, 'x') + "...\""));
  const absl::Status key =
      Parse(R"({")" + value + R"(":1,")" + value + R"(":1})");
  EXPECT_LT(key.message().size(), 300u);
  EXPECT_THAT(key.message(), Not(HasSubstr(std::string(65, 'x'))));
}

}  // namespace
}  // namespace chunkplan::common
