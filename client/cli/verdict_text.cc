#include "client/cli/verdict_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/table_format.h"

namespace chunkplan::cli {

std::string VerdictWords(const v1::Verdict& v) {
  if (v.fits()) return "fits";
  return absl::StrCat(v.tight() ? "does not fit (tight): " : "does not fit: ",
                      v.why_not());
}

std::string MarginWords(const v1::Verdict& v) {
  return absl::StrFormat("margin %.4g%% (%s)", 100 * v.margin(),
                         Gib(v.margin_bytes()));
}

std::string FormatVerdict(const v1::Verdict& v) {
  std::string out = absl::StrFormat(
      "device need    %s (the most loaded rank's device total, worst chunk "
      "order, + the gathered chunks + the reserve %s + the activations)\n",
      Gib(v.device_need_bytes()), Gib(v.reserve_bytes()));
  absl::StrAppendFormat(&out, "device memory  %s, %s kept free\n",
                        Gib(v.device_memory_bytes()), MarginWords(v));
  absl::StrAppendFormat(&out, "headroom       %s\n", Gib(v.headroom_bytes()));
  if (v.host_bytes_per_node() != 0) {
    absl::StrAppendFormat(&out, "host per node  %s\n",
                          Gib(v.host_bytes_per_node()));
  }
  if (v.host_memory_bytes() != 0) {
    absl::StrAppendFormat(&out, "host memory    %s per node\n",
                          Gib(v.host_memory_bytes()));
  }
  absl::StrAppendFormat(&out, "verdict        %s\n", VerdictWords(v));
  return out;
}

}  // namespace chunkplan::cli
