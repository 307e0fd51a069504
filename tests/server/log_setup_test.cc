#include "server/log_setup.h"

#include "gtest/gtest.h"

namespace chunkplan::server {
namespace {

TEST(JsonEscape, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonEscape("plain text"), "plain text");
  EXPECT_EQ(JsonEscape(R"(say "hi" \ now)"), R"(say \"hi\" \\ now)");
  EXPECT_EQ(JsonEscape("a\nb\tc"), R"(a\nb\tc)");
  EXPECT_EQ(JsonEscape(absl::string_view("\x01", 1)), R"(\u0001)");
}

TEST(ConfigureLogging, RejectsUnknownLevelAndFormat) {
  EXPECT_EQ(ConfigureLogging("loud", "text").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfigureLogging("info", "xml").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ConfigureLogging("warn", "json").ok());
  EXPECT_TRUE(ConfigureLogging("info", "text").ok());
}

}  // namespace
}  // namespace chunkplan::server
