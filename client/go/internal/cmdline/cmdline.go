// Package cmdline holds what the example commands (chunkplan-fit,
// chunkplan-plan) share with the C++ command line's flags: memory sizes
// with units, the --gpu presets, world-size lists, the margin, and the
// exit codes (docs/plan.md, "Exit codes"). It parses flags only; every
// figure and verdict is the server's.
package cmdline

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
)

// Exit codes, as every command line that renders a verdict uses them.
const (
	ExitFits       = 0 // it fits (plan: the first option fits)
	ExitError      = 1 // a failed call: "CODE: message" on stderr
	ExitUsage      = 2 // a usage error
	ExitDoesNotFit = 3 // it does not fit (tight included): why on stderr
)

// units are the C++ command line's (client/cli/byte_size.h): powers of 2
// and of 10, any case.
var units = map[string]uint64{
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
}

// fractionDigits after the point count; the rest are ignored.
const fractionDigits = 20

// ByteSize is the bytes of text, rounded down, as the C++ command line
// reads a size: a non-negative decimal number, optional spaces, and a
// unit, any case: KiB, MiB, GiB, TiB (2^10 ... 2^40 bytes) or KB, MB, GB,
// TB (10^3 ... 10^12 bytes), e.g. "80GiB", "79.5 GiB", "24GB". A bare
// number is refused (its unit would be a guess), and so is a size past
// 2^64-1 bytes; the errors name flag.
func ByteSize(flag, text string) (uint64, error) {
	bad := fmt.Errorf("%s: %q is not a memory size: a number and one of KiB, MiB, GiB, TiB "+
		"(2^10 ... 2^40 bytes) or KB, MB, GB, TB (10^3 ... 10^12 bytes), e.g. 80GiB", flag, text)
	rest := strings.TrimSpace(text)
	digits := func() string {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		taken := rest[:n]
		rest = rest[n:]
		return taken
	}
	whole := digits()
	fraction := ""
	if strings.HasPrefix(rest, ".") {
		rest = rest[1:]
		fraction = digits()
	}
	if whole == "" && fraction == "" {
		return 0, bad
	}
	unit, ok := units[strings.ToLower(strings.TrimLeft(rest, " \t\n\v\f\r"))]
	if !ok {
		return 0, bad
	}
	if len(fraction) > fractionDigits {
		fraction = fraction[:fractionDigits]
	}
	// (whole x 10^k + fraction) x unit / 10^k, k the fraction's digits.
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fraction))), nil)
	number, _ := new(big.Int).SetString("0"+whole+fraction, 10)
	bytes := number.Mul(number, new(big.Int).SetUint64(unit))
	bytes.Quo(bytes, scale)
	if !bytes.IsUint64() {
		return 0, fmt.Errorf("%s: %q is more than 2^64-1 bytes", flag, text)
	}
	return bytes.Uint64(), nil
}

// DeviceMemory is one GPU's memory from exactly one of --gpu NAME (a
// preset) and --device-memory SIZE; there is no default.
func DeviceMemory(gpu, deviceMemory string) (uint64, error) {
	switch {
	case gpu != "" && deviceMemory != "":
		return 0, fmt.Errorf("give one of --gpu and --device-memory")
	case gpu != "":
		return GPUPresetBytes(gpu)
	case deviceMemory != "":
		return ByteSize("--device-memory", deviceMemory)
	}
	return 0, fmt.Errorf("needs the GPU's memory: --gpu NAME (%s) or --device-memory SIZE, e.g. 80GiB",
		strings.Join(GPUPresetNames(), ", "))
}

// OptionalByteSize is ByteSize, or 0 for an empty text (the flag not
// given).
func OptionalByteSize(flag, text string) (uint64, error) {
	if text == "" {
		return 0, nil
	}
	return ByteSize(flag, text)
}

// Margin is --margin's share of device memory: "0.05" or "5%" (the server
// checks the range), or nil for an empty text (the server's 5%).
func Margin(text string) (*float64, error) {
	if text == "" {
		return nil, nil
	}
	number := strings.TrimSpace(text)
	percent := strings.HasSuffix(number, "%")
	number = strings.TrimSpace(strings.TrimSuffix(number, "%"))
	value, err := strconv.ParseFloat(number, 64)
	if err != nil || value != value {
		return nil, fmt.Errorf("--margin: %q is not a fraction of device memory, e.g. 0.05 or 5%%", text)
	}
	if percent {
		value /= 100
	}
	return &value, nil
}

// WorldSizes parses "8,16,32" (each a number; the server judges 0 and
// repeats).
func WorldSizes(text string) ([]uint32, error) {
	var out []uint32
	for _, part := range strings.Split(text, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--world-sizes: %q is not a list of sizes, e.g. 8,16,32", text)
		}
		out = append(out, uint32(n))
	}
	return out, nil
}

// Cluster is the cluster of the size flags: the device memory from exactly
// one of --gpu and --device-memory, and --reserve, --host-memory and
// --margin where given (empty: not given). The other fields are left 0.
func Cluster(gpu, deviceMemory, reserve, hostMemory, margin string) (*pb.Cluster, error) {
	var c pb.Cluster
	var err error
	if c.DeviceMemoryBytes, err = DeviceMemory(gpu, deviceMemory); err != nil {
		return nil, err
	}
	if c.ReserveBytes, err = OptionalByteSize("--reserve", reserve); err != nil {
		return nil, err
	}
	if c.HostMemoryBytes, err = OptionalByteSize("--host-memory", hostMemory); err != nil {
		return nil, err
	}
	if c.Margin, err = Margin(margin); err != nil {
		return nil, err
	}
	return &c, nil
}

// SetWorldSizes sets the world sizes of cluster from exactly one of
// --world-sizes LIST and --whole-nodes with --max-nodes N (whole_nodes and
// max_nodes, for the server to list); there is no default.
func SetWorldSizes(list string, wholeNodes bool, maxNodes uint, cluster *pb.Cluster) error {
	if wholeNodes != (maxNodes != 0) {
		return fmt.Errorf("--whole-nodes and --max-nodes N go together")
	}
	if wholeNodes {
		if list != "" {
			return fmt.Errorf("--whole-nodes takes the place of --world-sizes: give one")
		}
		if maxNodes > 1<<32-1 {
			return fmt.Errorf("--max-nodes: %d is past 2^32-1", maxNodes)
		}
		cluster.WholeNodes, cluster.MaxNodes = true, uint32(maxNodes)
		return nil
	}
	if list == "" {
		return fmt.Errorf("needs --world-sizes LIST or --whole-nodes --max-nodes N")
	}
	sizes, err := WorldSizes(list)
	cluster.WorldSizes = sizes
	return err
}
