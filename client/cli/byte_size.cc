#include "client/cli/byte_size.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace chunkplan::cli {
namespace {

using Wide = unsigned __int128;

constexpr int kFractionDigits = 20;

constexpr std::pair<absl::string_view, uint64_t> kUnits[] = {
    {"kib", uint64_t{1} << 10},
    {"mib", uint64_t{1} << 20},
    {"gib", uint64_t{1} << 30},
    {"tib", uint64_t{1} << 40},
    {"kb", 1'000},
    {"mb", 1'000'000},
    {"gb", 1'000'000'000},
    {"tb", 1'000'000'000'000}};

// Digits taken while they are digits; their value saturates past 2^64.
Wide TakeDigits(absl::string_view& text, int* count) {
  Wide value = 0;
  *count = 0;
  while (!text.empty() && absl::ascii_isdigit(text.front())) {
    if (value <= UINT64_MAX) value = value * 10 + (text.front() - '0');
    text.remove_prefix(1);
    ++*count;
  }
  return value;
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view flag,
                                       absl::string_view text) {
  const absl::Status bad = absl::InvalidArgumentError(absl::StrCat(
      flag, ": '", text.substr(0, 64),
      "' is not a memory size: a number and one of KiB, MiB, GiB, TiB "
      "(2^10 ... 2^40 bytes) or KB, MB, GB, TB (10^3 ... 10^12 bytes), e.g. "
      "80GiB"));
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  int whole_digits = 0;
  const Wide whole = TakeDigits(rest, &whole_digits);
  Wide fraction = 0;
  Wide scale = 1;
  int fraction_digits = 0;
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    // The first kFractionDigits count (so that fraction x 2^40 fits a Wide).
    while (!rest.empty() && absl::ascii_isdigit(rest.front())) {
      if (fraction_digits < kFractionDigits) {
        fraction = fraction * 10 + (rest.front() - '0');
        scale *= 10;
      }
      rest.remove_prefix(1);
      ++fraction_digits;
    }
  }
  if (whole_digits + fraction_digits == 0) return bad;
  const std::string unit =
      absl::AsciiStrToLower(absl::StripLeadingAsciiWhitespace(rest));
  for (const auto& [name, bytes] : kUnits) {
    if (unit != name) continue;
    const Wide total = whole * bytes + fraction * bytes / scale;
    if (whole > UINT64_MAX || total > UINT64_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": '", text.substr(0, 64), "' is more than 2^64-1 bytes"));
    }
    return static_cast<uint64_t>(total);
  }
  return bad;
}

}  // namespace chunkplan::cli
