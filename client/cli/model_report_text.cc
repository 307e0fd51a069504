#include "client/cli/model_report_text.h"

#include "absl/strings/str_cat.h"

namespace chunkplan::cli {

std::string Grouped(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string WarningLines(
    const google::protobuf::RepeatedPtrField<std::string>& warnings) {
  std::string out;
  for (const std::string& warning : warnings) {
    absl::StrAppend(&out, "warning: ", warning, "\n");
  }
  return out;
}

std::string ReportHeader(const v1::ModelReport& report) {
  std::string out =
      absl::StrCat("parameters    ", Grouped(report.total_param_size()));
  if (!report.model_type().empty()) {
    absl::StrAppend(&out, " (", report.model_type(), ", ",
                    report.architecture(), ")");
  }
  absl::StrAppend(&out, "\n", WarningLines(report.warnings()));
  return out;
}

}  // namespace chunkplan::cli
