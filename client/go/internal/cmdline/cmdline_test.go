package cmdline

import (
	"strings"
	"testing"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
)

// Sizes worked by hand from the units: 2^30 = 1073741824, 79.5 x 2^30 =
// 85362475008, 2^64 - 1 = 18446744073709551615.
func TestByteSize(t *testing.T) {
	for text, want := range map[string]uint64{
		"80GiB":    80 << 30,
		"80gib":    80 << 30,
		"79.5 GiB": 85362475008,
		" 1TiB ":   1 << 40,
		"24GB":     24000000000,
		"1.5KB":    1500,
		"0.3KiB":   307, // 307.2 rounded down
		"5.MiB":    5 << 20,
		".5MiB":    1 << 19,
		"0GiB":     0,
	} {
		got, err := ByteSize("--device-memory", text)
		if err != nil || got != want {
			t.Errorf("ByteSize(%q) = %d, %v; want %d", text, got, err, want)
		}
	}
	// 2^64 - 1 bytes is the most: 18446744073.709551615 GB.
	if got, err := ByteSize("--x", "18446744073.709551615GB"); err != nil || got != 1<<64-1 {
		t.Errorf("the largest size: %d, %v", got, err)
	}
	// Digits past the 20th after the point are ignored: 0.1 x 2^40 =
	// 109951162777.6, and 0.1000...0009 (the 9 the 21st digit) the same.
	if got, _ := ByteSize("--x", "0.100000000000000000009TiB"); got != 109951162777 {
		t.Errorf("21st digit: %d", got)
	}
	// 16777216TiB is 2^24 x 2^40 = 2^64 bytes: one too many.
	for _, text := range []string{"80", "", "GiB", "80 GiBs", "-1GiB", "1e3GiB", "80 G", "16777216TiB",
		"18446744073.709551616GB", "99999999999999999999999TB"} {
		if got, err := ByteSize("--reserve", text); err == nil {
			t.Errorf("ByteSize(%q) = %d; want an error", text, got)
		} else if !strings.HasPrefix(err.Error(), "--reserve: ") {
			t.Errorf("ByteSize(%q): %v does not name the flag", text, err)
		}
	}
}

// The presets are common/gpu_presets.inc's: every CHUNKPLAN_GPU line
// parsed, and two figures read off the file by hand (h100-sxm 81559 MiB,
// rtx-4090 24564 MiB).
func TestGPUPresets(t *testing.T) {
	lines := 0
	for _, line := range strings.Split(presetsFile, "\n") {
		if strings.HasPrefix(line, "CHUNKPLAN_GPU(") {
			lines++
		}
	}
	if n := len(GPUPresetNames()); n == 0 || n != lines {
		t.Fatalf("%d presets parsed of %d lines", n, lines)
	}
	for name, mib := range map[string]uint64{"h100-sxm": 81559, "RTX-4090": 24564} {
		if got, err := GPUPresetBytes(name); err != nil || got != mib<<20 {
			t.Errorf("GPUPresetBytes(%q) = %d, %v", name, got, err)
		}
	}
	if _, err := GPUPresetBytes("h100-pcie"); err == nil || !strings.Contains(err.Error(), "h100-sxm") {
		t.Errorf("an unknown preset: %v", err)
	}
}

func TestDeviceMemory(t *testing.T) {
	if got, err := DeviceMemory("", "24GB"); err != nil || got != 24000000000 {
		t.Errorf("--device-memory 24GB: %d, %v", got, err)
	}
	if got, err := DeviceMemory("a100-80gb", ""); err != nil || got != 81920<<20 {
		t.Errorf("--gpu a100-80gb: %d, %v", got, err)
	}
	// No silent default; not both.
	if _, err := DeviceMemory("", ""); err == nil || !strings.Contains(err.Error(), "--gpu NAME") {
		t.Errorf("neither: %v", err)
	}
	if _, err := DeviceMemory("h200", "80GiB"); err == nil {
		t.Error("both: no error")
	}
	if got, err := OptionalByteSize("--host-memory", ""); err != nil || got != 0 {
		t.Errorf("an absent size: %d, %v", got, err)
	}
}

func TestMarginAndWorldSizes(t *testing.T) {
	for text, want := range map[string]float64{"0.05": 0.05, "5%": 0.05, " 2.5 % ": 0.025, "0": 0} {
		got, err := Margin(text)
		if err != nil || got == nil || *got != want {
			t.Errorf("Margin(%q) = %v, %v; want %g", text, got, err, want)
		}
	}
	if got, err := Margin(""); got != nil || err != nil {
		t.Errorf("no margin: %v, %v", got, err)
	}
	for _, text := range []string{"five", "NaN", "%"} {
		if _, err := Margin(text); err == nil {
			t.Errorf("Margin(%q): no error", text)
		}
	}
	got, err := WorldSizes("8, 16,32")
	if err != nil || len(got) != 3 || got[0] != 8 || got[1] != 16 || got[2] != 32 {
		t.Errorf("WorldSizes: %v, %v", got, err)
	}
	for _, text := range []string{"", "8,,16", "8;16", "-8", "4294967296"} {
		if _, err := WorldSizes(text); err == nil {
			t.Errorf("WorldSizes(%q): no error", text)
		}
	}
}

func TestClusterAndWorldSizes(t *testing.T) {
	c, err := Cluster("", "24GB", "1GiB", "256GiB", "5%")
	if err != nil {
		t.Fatal(err)
	}
	if c.DeviceMemoryBytes != 24000000000 || c.ReserveBytes != 1<<30 || c.HostMemoryBytes != 256<<30 ||
		c.Margin == nil || *c.Margin != 0.05 {
		t.Errorf("Cluster: %v", c)
	}
	if c, err = Cluster("h200", "", "", "", ""); err != nil || c.DeviceMemoryBytes != 143771<<20 ||
		c.ReserveBytes != 0 || c.HostMemoryBytes != 0 || c.Margin != nil {
		t.Errorf("Cluster(--gpu h200): %v, %v", c, err)
	}
	for _, args := range [][5]string{{"", "", "", "", ""}, {"", "80", "", "", ""}, {"", "80GiB", "2", "", ""},
		{"", "80GiB", "", "1T", ""}, {"", "80GiB", "", "", "x"}} {
		if _, err := Cluster(args[0], args[1], args[2], args[3], args[4]); err == nil {
			t.Errorf("Cluster%q: no error", args)
		}
	}

	c = &pb.Cluster{}
	if err := SetWorldSizes("", true, 4, c); err != nil || !c.WholeNodes || c.MaxNodes != 4 || c.WorldSizes != nil {
		t.Errorf("whole nodes: %v, %v", c, err)
	}
	c = &pb.Cluster{}
	if err := SetWorldSizes("8,16", false, 0, c); err != nil || c.WholeNodes || len(c.WorldSizes) != 2 {
		t.Errorf("listed: %v, %v", c, err)
	}
	for _, bad := range []struct {
		list  string
		whole bool
		max   uint
	}{{"", false, 0}, {"", true, 0}, {"", false, 3}, {"8", true, 3}, {"x", false, 0}} {
		if err := SetWorldSizes(bad.list, bad.whole, bad.max, &pb.Cluster{}); err == nil {
			t.Errorf("SetWorldSizes%v: no error", bad)
		}
	}
}
