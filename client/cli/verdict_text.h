#ifndef CHUNKPLAN_CLIENT_CLI_VERDICT_TEXT_H_
#define CHUNKPLAN_CLIENT_CLI_VERDICT_TEXT_H_

// The server's verdict (chunkplan.v1.Verdict) in words: rendered as it
// comes, never recomputed (docs/plan.md, "The verdict").

#include <string>

#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// "fits", "does not fit (tight): <why_not>" (within the device memory, not
// the margin) or "does not fit: <why_not>".
std::string VerdictWords(const v1::Verdict& verdict);

// "margin 5% (4.00 GiB)": the margin applied, as a percentage (up to 4
// significant digits) and in GiB.
std::string MarginWords(const v1::Verdict& verdict);

// The verdict's lines in a layout table: device need, device memory with
// the margin, headroom, host bytes per node (where counted) and host
// memory (where checked), then the verdict. Every line ends in '\n'.
std::string FormatVerdict(const v1::Verdict& verdict);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_VERDICT_TEXT_H_
