package cmdline

import (
	// The presets' one data file, common/gpu_presets.inc, copied here by
	// client/go/generate.sh (go:embed takes no path outside the module);
	// ctest go_gpu_presets_match fails when the copy differs.
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

//go:embed gpu_presets.inc
var presetsFile string

// A preset line: CHUNKPLAN_GPU("name", MiB, "nvidia-smi name", "source").
var presetLine = regexp.MustCompile(`^CHUNKPLAN_GPU\("([^"]+)", ([0-9]+), "[^"]*", "[^"]*"\)$`)

type preset struct {
	name string
	mib  uint64
}

// presets are the data file's, in its order.
func presets() []preset {
	var out []preset
	for _, line := range strings.Split(presetsFile, "\n") {
		m := presetLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		mib, err := strconv.ParseUint(m[2], 10, 64)
		if err != nil {
			panic("gpu_presets.inc: " + line)
		}
		out = append(out, preset{m[1], mib})
	}
	return out
}

// GPUPresetNames are the presets --gpu takes, in the data file's order.
func GPUPresetNames() []string {
	var names []string
	for _, p := range presets() {
		names = append(names, p.name)
	}
	return names
}

// GPUPresetBytes is the total memory (MiB x 2^20) of preset name, any
// case, as nvidia-smi reports it (docs/gpu-presets.md); an unknown name
// is an error listing the presets.
func GPUPresetBytes(name string) (uint64, error) {
	for _, p := range presets() {
		if p.name == strings.ToLower(name) {
			return p.mib << 20, nil
		}
	}
	return 0, fmt.Errorf("--gpu: %q is not a preset: one of %s", name, strings.Join(GPUPresetNames(), ", "))
}
