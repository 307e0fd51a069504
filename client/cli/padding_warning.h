#ifndef CHUNKPLAN_CLIENT_CLI_PADDING_WARNING_H_
#define CHUNKPLAN_CLIENT_CLI_PADDING_WARNING_H_

// The warning of a layout whose chunks dwarf what they hold (LoRA-style
// models: ColossalAI's search sizes chunks on every parameter, frozen ones
// included, while frozen parameters get no chunk). The Python client
// prints the same lines (chunkplan/padding_warning.py).

#include <string>

#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// Empty when the layout's padding (allocated minus placed elements) is at
// most the elements it places (the sum of every chunk's `used`); else a
// blank line and three lines, each ending in '\n': the figures
//   "... P elements placed in A allocated, padding D elements = X% of
//   placed" (X = 100 * D / P, 2 decimals; "-" when nothing is placed),
// why the search's settings cannot shrink the chunks, and the configs to
// try as a chunk_config_dict literal: per group, in order, one chunk of
// its placed elements rounded up to a multiple of its dp degree (at least
// the degree), not kept gathered.
std::string PaddingWarning(const v1::LayoutResponse& response);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_PADDING_WARNING_H_
