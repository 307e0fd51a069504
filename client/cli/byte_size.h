#ifndef CHUNKPLAN_CLIENT_CLI_BYTE_SIZE_H_
#define CHUNKPLAN_CLIENT_CLI_BYTE_SIZE_H_

// Memory sizes on the command line: "80GiB", "1TiB", "79.5 GiB", "24GB".

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chunkplan::cli {

// The bytes of `text`, rounded down: a non-negative decimal number (digits,
// optionally a point and more digits), optional spaces, and a unit, any
// case: KiB, MiB, GiB, TiB (2^10 ... 2^40 bytes) or KB, MB, GB, TB (10^3 ...
// 10^12 bytes), as the Python client's --device-memory takes them (which
// has the MiB, GiB, MB and GB of these). A bare number is refused: its unit
// would be a guess; digits past the 20th after the point are ignored.
// Errors: INVALID_ARGUMENT naming `flag` (e.g.
// "--device-memory") and the units; also for a size past 2^64-1 bytes.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view flag,
                                       absl::string_view text);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_BYTE_SIZE_H_
