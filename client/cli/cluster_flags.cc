#include "client/cli/cluster_flags.h"

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace chunkplan::cli {

bool ClusterFlags::Any() const {
  return device_memory_bytes || host_memory_bytes || gpus_per_node ||
         world_sizes || max_nodes || reserve_bytes || margin;
}

absl::StatusOr<double> ParseMargin(absl::string_view text) {
  absl::string_view number = absl::StripAsciiWhitespace(text);
  const bool percent = absl::ConsumeSuffix(&number, "%");
  double value = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(number), &value) ||
      std::isnan(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--margin: '", text.substr(0, 64),
                     "' is not a fraction of device memory, e.g. 0.05 or 5%"));
  }
  return percent ? value / 100 : value;
}

void ApplyClusterFlags(const ClusterFlags& f, v1::Cluster* c) {
  if (f.device_memory_bytes) c->set_device_memory_bytes(*f.device_memory_bytes);
  if (f.host_memory_bytes) c->set_host_memory_bytes(*f.host_memory_bytes);
  if (f.gpus_per_node) c->set_gpus_per_node(*f.gpus_per_node);
  if (f.world_sizes) {
    c->clear_whole_nodes();
    c->clear_max_nodes();
    c->clear_world_sizes();
    for (const uint32_t w : *f.world_sizes) c->add_world_sizes(w);
  }
  if (f.max_nodes) {
    c->clear_world_sizes();
    c->set_whole_nodes(true);
    c->set_max_nodes(*f.max_nodes);
  }
  if (f.reserve_bytes) c->set_reserve_bytes(*f.reserve_bytes);
  if (f.margin) c->set_margin(*f.margin);
}

}  // namespace chunkplan::cli
