#include "tests/differential/mismatch_report.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_codec.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace chunkplan::testing {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  uint64_t parsed = 0;
  if (value != nullptr && absl::SimpleAtoi(value, &parsed)) return parsed;
  return fallback;
}

uint64_t FreshSeed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::string LayoutDiff(absl::string_view who,
                       const absl::StatusOr<v1::LayoutResponse>& expected,
                       const absl::StatusOr<v1::LayoutResponse>& actual) {
  if (!expected.ok()) {
    return RefusalDiff(who, expected.status().message(), actual.status());
  }
  if (!actual.ok()) {
    return absl::StrCat(who, ": ", actual.status().ToString(), "\n");
  }
  v1::LayoutResponse got = *actual;
  SetAsideModelReport(got);
  if (got.has_search()) {
    got.mutable_search()->clear_engine();
    got.mutable_search()->clear_candidates();
    got.mutable_search()->clear_search_nanos();
  }
  if (google::protobuf::util::MessageDifferencer::Equals(got, *expected)) {
    return "";
  }
  return absl::StrCat(who, ":\n  expected (oracle) ",
                      Clip(common::MessageToJson(*expected), 4000),
                      "\n  actual            ",
                      Clip(common::MessageToJson(got), 4000), "\n");
}

void SetAsideModelReport(google::protobuf::Message& response) {
  const google::protobuf::FieldDescriptor* field =
      response.GetDescriptor()->FindFieldByName("model_report");
  if (field != nullptr) response.GetReflection()->ClearField(&response, field);
}

std::string Clip(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return absl::StrCat(text.substr(0, max_chars), "... (", text.size(),
                      " chars in all)");
}

namespace {

absl::string_view LeadingField(absl::string_view message) {
  return message.substr(0, message.find_first_of(": "));
}

}  // namespace

bool SameField(absl::string_view ours, absl::string_view oracle) {
  const absl::string_view field = LeadingField(oracle);
  if (field == "search") return absl::StartsWith(ours, "search.");
  return LeadingField(ours) == field;
}

std::string RefusalDiff(absl::string_view who, absl::string_view oracle_message,
                        const absl::Status& actual) {
  if (actual.ok()) {
    return absl::StrCat(who, ": answered, the oracle refused (", oracle_message,
                        ")\n");
  }
  if (actual.code() != absl::StatusCode::kInvalidArgument ||
      !SameField(actual.message(), oracle_message)) {
    return absl::StrCat(who, ": ", actual.ToString(),
                        "\n  the oracle: ", oracle_message, "\n");
  }
  return "";
}

void MismatchReport::Add(size_t index, const std::string& request_line,
                         const std::string& diff) {
  if (diff.empty()) return;
  failing_.push_back(request_line);
  if (failing_.size() <= kMaxPrinted) {
    ADD_FAILURE() << context_ << ", request #" << index << ":\n  request "
                  << Clip(request_line) << "\n"
                  << diff;
  }
}

void MismatchReport::Finish(const std::string& replay_path) const {
  if (failing_.size() > kMaxPrinted) {
    ADD_FAILURE() << context_ << ": " << failing_.size() - kMaxPrinted
                  << " more mismatches not printed";
  }
  if (failing_.empty() || replay_path.empty()) return;
  std::ofstream out(replay_path);
  for (const std::string& line : failing_) out << line << "\n";
  std::cout << "failing requests written to " << replay_path
            << " (replay: " << oracle_.python << " " << oracle_.script
            << " --jsonl < that file)\n";
}

}  // namespace chunkplan::testing
