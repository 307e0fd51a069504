#include "client/cli/gpu_presets.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace chunkplan::cli {
namespace {

constexpr GpuPreset kPresets[] = {
#define CHUNKPLAN_GPU(name, mib, smi_name, source) \
  {name, mib, smi_name, source},
#include "common/gpu_presets.inc"
#undef CHUNKPLAN_GPU
};

constexpr uint64_t kBytesPerMib = uint64_t{1} << 20;

}  // namespace

absl::Span<const GpuPreset> GpuPresets() { return kPresets; }

absl::StatusOr<uint64_t> GpuPresetBytes(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  std::vector<absl::string_view> names;
  for (const GpuPreset& preset : kPresets) {
    if (preset.name == lower) return preset.mib * kBytesPerMib;
    names.push_back(preset.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("--gpu: '", name,
                                                 "' is not a preset: one of ",
                                                 absl::StrJoin(names, ", ")));
}

std::string FormatGpuPresets() {
  std::string out = "name            MiB        GiB  nvidia-smi name\n";
  for (const GpuPreset& p : kPresets) {
    absl::StrAppendFormat(&out, "%-10s  %7u  %9.2f  %s\n", p.name, p.mib,
                          static_cast<double>(p.mib) / 1024, p.smi_name);
  }
  out +=
      "\nTotal memory as nvidia-smi reports it; the CUDA context and "
      "workspaces take a share. Sources: docs/gpu-presets.md.\n";
  return out;
}

}  // namespace chunkplan::cli
