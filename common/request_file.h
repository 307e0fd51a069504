#ifndef CHUNKPLAN_COMMON_REQUEST_FILE_H_
#define CHUNKPLAN_COMMON_REQUEST_FILE_H_

// Reading the CLI's input: a file, or standard input for "-".

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chunkplan::common {

// The whole content of the file at `path`, or of standard input when `path`
// is "-". Errors: the errno's canonical code (NOT_FOUND, PERMISSION_DENIED,
// ...) with a message that names the path.
absl::StatusOr<std::string> ReadInput(absl::string_view path);

// How messages name the input: the path, or "<stdin>" for "-".
std::string InputName(absl::string_view path);

}  // namespace chunkplan::common

#endif  // CHUNKPLAN_COMMON_REQUEST_FILE_H_
