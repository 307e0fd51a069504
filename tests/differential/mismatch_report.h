#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_MISMATCH_REPORT_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_MISMATCH_REPORT_H_

// What the differential tests share: their run settings from the
// environment, and how they report answers that differ from an oracle's.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "google/protobuf/message.h"
#include "testing/oracle_runner.h"

namespace chunkplan::testing {

// The environment variable `name` as an unsigned integer, else `fallback`.
uint64_t EnvOr(const char* name, uint64_t fallback);

// A seed from std::random_device.
uint64_t FreshSeed();

// Clears `response`'s model_report (the parameter total and the config's
// warnings, which every answer carries and the model tests hold to the
// models oracle), so that it compares with an oracle that does not print it.
void SetAsideModelReport(google::protobuf::Message& response);

// `text`, cut after `max_chars` with a note of its full length.
std::string Clip(const std::string& text, size_t max_chars = 16000);

// Whether a refusal's message `ours` names the field the oracle's message
// names (each message's field: up to its first ':' or ' '). An oracle that
// names only "search" for the search part matches any "search.<field>".
bool SameField(absl::string_view ours, absl::string_view oracle);

// "" when `actual` is the refusal the oracle gave (`oracle_message`):
// INVALID_ARGUMENT naming the same field; else what differs, opened by
// `who`. `actual` is OK when the request was answered.
std::string RefusalDiff(absl::string_view who, absl::string_view oracle_message,
                        const absl::Status& actual);

// "" when `actual` is the layout oracle's answer `expected` (an answer, or
// its refusal), leaving out the search's engine, candidates and time (the
// service's own); else what differs, opened by `who`.
std::string LayoutDiff(absl::string_view who,
                       const absl::StatusOr<v1::LayoutResponse>& expected,
                       const absl::StatusOr<v1::LayoutResponse>& actual);

// Collects the requests whose answers differ from the oracle's: each one a
// gtest failure (the first kMaxPrinted in full, then a count), and all of
// them written to a replay file that the oracle can be run on.
class MismatchReport {
 public:
  static constexpr size_t kMaxPrinted = 8;

  // `context` opens every failure (e.g. "CHUNKPLAN_DIFF_SEED=..."); `oracle`
  // is named in the replay command.
  MismatchReport(std::string context, OracleCommand oracle)
      : context_(std::move(context)), oracle_(std::move(oracle)) {}

  // Request #`index` (`request_line`, its JSON) differs as `diff` says;
  // nothing when `diff` is empty.
  void Add(size_t index, const std::string& request_line,
           const std::string& diff);

  // Fails with the count of mismatches not printed, and writes every failing
  // request line to `replay_path` (none when it is empty).
  void Finish(const std::string& replay_path) const;

 private:
  std::string context_;
  OracleCommand oracle_;
  std::vector<std::string> failing_;
};

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_MISMATCH_REPORT_H_
