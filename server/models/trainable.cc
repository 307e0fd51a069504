#include "server/models/trainable.h"

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace chunkplan::models {
namespace {

// A compiled pattern (nullptr for an empty one), or INVALID_ARGUMENT naming
// `field`.
absl::StatusOr<std::unique_ptr<RE2>> Compile(absl::string_view pattern,
                                             absl::string_view field) {
  if (pattern.empty()) return std::unique_ptr<RE2>();
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(
      re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": \"", absl::CHexEscape(pattern.substr(0, 200)),
                     "\" is not a valid RE2 pattern: ", re->error()));
  }
  return re;
}

// Whether `re` is found in each name; INVALID_ARGUMENT naming `field` when
// it is found in none. All false for no pattern.
absl::StatusOr<std::vector<bool>> Matches(const RE2* re,
                                          absl::string_view field,
                                          const ModelDescription& d) {
  std::vector<bool> out(d.names.size(), false);
  if (re == nullptr) return out;
  bool any = false;
  for (size_t i = 0; i < d.names.size(); ++i) {
    out[i] = RE2::PartialMatch(d.names[i], *re);
    any = any || out[i];
  }
  if (!any) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": \"", absl::CHexEscape(re->pattern().substr(0, 200)),
        "\" matches no parameter of ",
        d.param_list ? "the parameter list (names as it gives them)"
                     : absl::StrCat(d.architecture,
                                    " (names as `chunkplan describe` lists "
                                    "them)")));
  }
  return out;
}

}  // namespace

absl::Status MarkTrainable(absl::string_view freeze, absl::string_view train,
                           ModelDescription& d) {
  if (freeze.empty() && train.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<RE2>> freeze_re = Compile(freeze, "freeze");
  if (!freeze_re.ok()) return freeze_re.status();
  absl::StatusOr<std::unique_ptr<RE2>> train_re = Compile(train, "train");
  if (!train_re.ok()) return train_re.status();
  absl::StatusOr<std::vector<bool>> frozen_by =
      Matches(freeze_re->get(), "freeze", d);
  if (!frozen_by.ok()) return frozen_by.status();
  absl::StatusOr<std::vector<bool>> trained_by =
      Matches(train_re->get(), "train", d);
  if (!trained_by.ok()) return trained_by.status();
  const bool defaults_given = !d.frozen.empty();
  std::vector<bool> frozen(d.names.size());
  uint64_t trainable = 0;
  for (size_t i = 0; i < frozen.size(); ++i) {
    const bool by_default = defaults_given ? !d.frozen[i] : train.empty();
    frozen[i] = !((by_default || (*trained_by)[i]) && !(*frozen_by)[i]);
    if (!frozen[i]) trainable += d.numels[i];  // within d.total
  }
  d.frozen = std::move(frozen);
  d.trainable = trainable;
  return absl::OkStatus();
}

}  // namespace chunkplan::models
