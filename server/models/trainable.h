#ifndef CHUNKPLAN_SERVER_MODELS_TRAINABLE_H_
#define CHUNKPLAN_SERVER_MODELS_TRAINABLE_H_

// Which parameters of a described model are trained: patterns over their
// names (RE2 syntax, found anywhere in the name, as Python's re.search).

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/models/model_description.h"

namespace chunkplan::models {

// Sets d.frozen and d.trainable: a parameter is trainable when it is by
// default (every one where d.frozen is empty and `train` is empty; with
// d.frozen set, as by AddLoraAdapters, those it leaves trainable) or its
// name matches `train`, and its name does not match `freeze`. Nothing is
// done when both are empty. Errors, INVALID_ARGUMENT naming the field
// ("freeze" or "train"): a pattern that does not compile, or one that
// matches no parameter's name.
absl::Status MarkTrainable(absl::string_view freeze, absl::string_view train,
                           ModelDescription& d);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_TRAINABLE_H_
