#include "common/request_file.h"

#include <cerrno>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"

namespace chunkplan::common {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads `file` to its end. Errors as ReadInput, naming `name`.
absl::StatusOr<std::string> ReadAll(std::FILE* file, absl::string_view name) {
  std::string content;
  char buffer[1 << 16];
  while (true) {
    const size_t n = std::fread(buffer, 1, sizeof buffer, file);
    content.append(buffer, n);
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file)) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", name));
  }
  return content;
}

}  // namespace

std::string InputName(absl::string_view path) {
  return path == "-" ? "<stdin>" : std::string(path);
}

absl::StatusOr<std::string> ReadInput(absl::string_view path) {
  if (path == "-") return ReadAll(stdin, InputName(path));
  const std::string name(path);
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(name.c_str(), "rb"));
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", name));
  }
  return ReadAll(file.get(), name);
}

}  // namespace chunkplan::common
