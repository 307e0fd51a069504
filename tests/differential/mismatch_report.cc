#include "tests/differential/mismatch_report.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

std::string Clip(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return absl::StrCat(text.substr(0, max_chars), "... (", text.size(),
                      " chars in all)");
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
