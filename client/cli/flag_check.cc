#include "client/cli/flag_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace chunkplan::cli {
namespace {

// abseil's usage flags: not registered flags, absl::ParseCommandLine
// recognizes them by name (absl/flags/internal/usage.cc).
bool IsUsageFlag(absl::string_view name) {
  for (const absl::string_view usage :
       {"help", "helpfull", "helpshort", "helppackage", "helpon", "helpmatch",
        "version", "only_check_args"}) {
    if (name == usage) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> NormalizeFlags(int argc,
                                                        char* argv[]) {
  std::vector<std::string> out(argv, argv + std::min(argc, 1));
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") {
      out.insert(out.end(), argv + i, argv + argc);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {  // positional, or "-"
      out.emplace_back(arg);
      continue;
    }
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t eq = arg.find('=');
    // Dashes stand for underscores: --hf-config is --hf_config.
    const std::string name =
        absl::StrReplaceAll(arg.substr(0, eq), {{"-", "_"}});
    const bool has_value = eq != absl::string_view::npos;
    if (IsUsageFlag(name)) {
      out.push_back(absl::StrCat("--", name, has_value ? arg.substr(eq) : ""));
      continue;
    }

    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      flag = absl::FindCommandLineFlag(absl::string_view(name).substr(2));
      negated = flag != nullptr;
    }
    if (flag == nullptr || (negated && !flag->IsOfType<bool>())) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (negated && has_value) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " takes no value"));
    }
    if (negated || (flag->IsOfType<bool>() && !has_value)) {
      out.push_back(absl::StrCat("--", name));
      continue;
    }

    absl::string_view value;
    if (has_value) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " needs a value"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, "=", value, ": ", error));
    }
    out.push_back(absl::StrCat("--", name, "=", value));
  }
  return out;
}

}  // namespace chunkplan::cli
