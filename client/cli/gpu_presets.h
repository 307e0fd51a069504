#ifndef CHUNKPLAN_CLIENT_CLI_GPU_PRESETS_H_
#define CHUNKPLAN_CLIENT_CLI_GPU_PRESETS_H_

// --gpu NAME: a card's total memory as nvidia-smi reports it. The figures
// are common/gpu_presets.inc's, the one table the Python client also reads;
// docs/gpu-presets.md says where each comes from.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace chunkplan::cli {

struct GpuPreset {
  absl::string_view name;      // as --gpu takes it, e.g. "h100-sxm"
  uint64_t mib;                // total memory in MiB (2**20 bytes)
  absl::string_view smi_name;  // the card as nvidia-smi names it
  absl::string_view source;    // where the figure was published
};

// Every preset, in the data file's order.
absl::Span<const GpuPreset> GpuPresets();

// The total bytes (mib * 2**20) of preset `name` (any case). Errors:
// INVALID_ARGUMENT listing the presets for an unknown name.
absl::StatusOr<uint64_t> GpuPresetBytes(absl::string_view name);

// `chunkplan gpus`: one line per preset (name, MiB, GiB with 2 decimals,
// nvidia-smi's name) under a header, then a line naming the docs; every
// line ends in '\n'.
std::string FormatGpuPresets();

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_GPU_PRESETS_H_
