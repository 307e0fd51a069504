// chunkplan-fit: does a Hugging Face model train on a cluster under
// ColossalAI Gemini? Reads the model's config.json, asks a chunkplan
// server's Layout for the world size (every parameter data-parallel over
// it) judged against the device (and, with --gpus-per-node and
// --host-memory, the node), and prints the server's verdict, its figures
// and the chunk_config_dict to pass to GeminiPlugin. The verdict is the
// server's (docs/plan.md, "The verdict"): "fits" leaves the margin
// (default 5% of the device) free.
//
//	chunkplan-fit --server localhost:50051 --config config.json \
//	    --world-size 8 (--gpu h100-sxm | --device-memory 80GiB) \
//	    [--reserve 2GiB] [--margin 5%] [--host-memory 1TiB --gpus-per-node 8]
//
// Sizes take a unit as the C++ command line's do (KiB..TiB, KB..TB); --gpu
// takes the presets of common/gpu_presets.inc. Exit status: 0 fits, 3 does
// not fit (tight included; why on stderr), 1 a failed call (the status
// code and message on stderr), 2 a usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"

	"github.com/chunkplan/chunkplan/client/go/client"
	"github.com/chunkplan/chunkplan/client/go/internal/cmdline"
)

const gib = 1 << 30

func usage(err error) {
	fmt.Fprintln(os.Stderr, "INVALID_ARGUMENT: "+err.Error())
	os.Exit(cmdline.ExitUsage)
}

func main() {
	server := flag.String("server", "localhost:50051", "the chunkplan server, host:port")
	config := flag.String("config", "", "the model's config.json")
	worldSize := flag.Uint("world-size", 0, "data-parallel degree of every parameter (required)")
	gpu := flag.String("gpu", "", "the GPU by name (a preset: h100-sxm, a100-80gb, rtx-4090, ...), in place of --device-memory")
	deviceMemory := flag.String("device-memory", "", "memory of one GPU, e.g. 80GiB (KiB..TiB, KB..TB)")
	reserve := flag.String("reserve", "", "per GPU, kept free for the CUDA context and workspace, e.g. 2GiB")
	margin := flag.String("margin", "", "share of device memory to leave free, e.g. 0.05 or 5% (default: the server's 5%)")
	hostMemory := flag.String("host-memory", "", "host memory of one node, e.g. 1TiB (default: not checked; needs --gpus-per-node)")
	gpusPerNode := flag.Uint("gpus-per-node", 0, "GPUs (ranks) per node, for the host bytes per node")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of the call")
	flag.Parse()
	if *config == "" || *worldSize == 0 || flag.NArg() != 0 {
		usage(fmt.Errorf("needs --config FILE and --world-size N"))
	}
	cluster, err := cmdline.Cluster(*gpu, *deviceMemory, *reserve, *hostMemory, *margin)
	if err != nil {
		usage(err)
	}
	cluster.GpusPerNode = uint32(*gpusPerNode)
	text, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "NOT_FOUND: %v\n", err)
		os.Exit(cmdline.ExitError)
	}

	c, err := client.Dial(*server, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintf(os.Stderr, "UNAVAILABLE: %v\n", err)
		os.Exit(cmdline.ExitError)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	layout, err := c.FitModel(ctx, string(text), uint32(*worldSize), cluster)
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(cmdline.ExitError)
	}

	v := layout.GetVerdict()
	fmt.Printf("%s\n", client.VerdictWords(v))
	fmt.Printf("need %.2f GiB of %.2f GiB per device, headroom %.2f GiB, margin %g%% (%.2f GiB) (world size %d)\n",
		float64(v.GetDeviceNeedBytes())/gib, float64(v.GetDeviceMemoryBytes())/gib,
		float64(v.GetHeadroomBytes())/gib, 100*v.GetMargin(), float64(v.GetMarginBytes())/gib, *worldSize)
	fmt.Printf("device_need_bytes %d device_memory_bytes %d headroom_bytes %d margin_bytes %d\n",
		v.GetDeviceNeedBytes(), v.GetDeviceMemoryBytes(), v.GetHeadroomBytes(), v.GetMarginBytes())
	if v.GetHostBytesPerNode() != 0 {
		fmt.Printf("host_bytes_per_node %d host_memory_bytes %d\n", v.GetHostBytesPerNode(), v.GetHostMemoryBytes())
	}
	fmt.Printf("chunk_config_dict = %s\n", client.ChunkConfigDict(layout.GetGroups()))
	if !v.GetFits() {
		fmt.Fprintln(os.Stderr, client.VerdictWords(v))
		os.Exit(cmdline.ExitDoesNotFit)
	}
}
