// libFuzzer target: arbitrary bytes as the text of a Hugging Face
// config.json, taken where every call that names a model takes it --
// models::DescribeModel under the server's default --max_params -- and,
// where the text also asks for a class of its own, once more with that
// class. Seeds: tests/fuzz/config_corpus/ (published configs and the
// hostile ones: numbers beyond a double, deep nesting, text that is not
// JSON); dictionary: tests/fuzz/config.dict (JSON's tokens and the keys the
// families read).
//
// A finding is a crash (an exception that escapes the JSON edge ends the
// process here as it did in the server), a sanitizer report, a leak, a
// timeout, or one of these checks failing:
//   - an error is INVALID_ARGUMENT or RESOURCE_EXHAUSTED (--max_params)
//     with a message, never longer than kMaxMessage bytes (a message quotes
//     the text it refuses, cut short);
//   - a description holds as many names as sizes, no size of 0, sizes that
//     sum to its total, and at most kMaxParams parameters.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/models/model_description.h"

namespace {

constexpr uint64_t kMaxParams = 1'000'000;  // the server's default
constexpr size_t kMaxMessage = 4096;

[[noreturn]] void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "config_fuzzer: %s: %s\n", what,
               status.ToString().c_str());
  std::abort();
}

void Check(const absl::StatusOr<chunkplan::models::ModelDescription>& d) {
  if (!d.ok()) {
    const absl::StatusCode code = d.status().code();
    if (code != absl::StatusCode::kInvalidArgument &&
        code != absl::StatusCode::kResourceExhausted) {
      Fail("an error of a code no config may get", d.status());
    }
    if (d.status().message().empty() ||
        d.status().message().size() > kMaxMessage) {
      Fail("an error with no message or an overlong one", d.status());
    }
    return;
  }
  if (d->names.size() != d->numels.size() || d->numels.size() > kMaxParams) {
    Fail("names and sizes disagree, or too many", absl::OkStatus());
  }
  uint64_t total = 0;
  for (const uint64_t numel : d->numels) {
    if (numel == 0 || __builtin_add_overflow(total, numel, &total)) {
      Fail("a size of 0, or sizes past 2^64", absl::OkStatus());
    }
  }
  if (total != d->total)
    Fail("sizes do not sum to the total", absl::OkStatus());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(chunkplan::models::DescribeModel(text, "", kMaxParams));
  // Every class a family knows is reached through the text's own
  // "architectures"; a class named by the caller is fuzzed with a fixed
  // one that no family has.
  Check(
      chunkplan::models::DescribeModel(text, "NoSuchForCausalLM", kMaxParams));
  return 0;
}
