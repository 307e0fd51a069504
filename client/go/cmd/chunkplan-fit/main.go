// chunkplan-fit: does a Hugging Face model train on a cluster under
// ColossalAI Gemini? Reads the model's config.json, asks a chunkplan
// server's Layout for the world size (every parameter data-parallel over
// it) judged against the device (and, with --gpus-per-node and
// --host-memory-gib, the node), and prints the server's verdict, its
// figures and the chunk_config_dict to pass to GeminiPlugin. The verdict is
// the server's (docs/plan.md, "The verdict"): "fits" leaves the margin
// (default 5% of the device) free.
//
//	chunkplan-fit --server localhost:50051 --config config.json \
//	    --world-size 8 --device-memory-gib 80 [--reserve-gib 2] \
//	    [--margin 0.05] [--host-memory-gib 1024 --gpus-per-node 8]
//
// Exit status: 0 fits, 3 does not fit (tight included), 1 a failed call
// (the status code and message on stderr), 2 a usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
	"github.com/chunkplan/chunkplan/client/go/client"
)

const gib = 1 << 30

func main() {
	server := flag.String("server", "localhost:50051", "the chunkplan server, host:port")
	config := flag.String("config", "", "the model's config.json")
	worldSize := flag.Uint("world-size", 8, "data-parallel degree of every parameter")
	deviceGiB := flag.Float64("device-memory-gib", 80, "memory of one device in GiB (2**30 bytes)")
	reserveGiB := flag.Float64("reserve-gib", 0, "per device, kept free for the CUDA context and workspace")
	margin := flag.Float64("margin", -1, "share of device memory to leave free, in [0, 1) (negative: the server's 5%)")
	hostGiB := flag.Float64("host-memory-gib", 0, "host memory of one node in GiB (0: not checked; needs --gpus-per-node)")
	gpusPerNode := flag.Uint("gpus-per-node", 0, "devices (ranks) per node, for the host bytes per node")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of the call")
	flag.Parse()
	if *config == "" || *worldSize == 0 || *deviceGiB <= 0 || *reserveGiB < 0 || *hostGiB < 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "INVALID_ARGUMENT: needs --config FILE, --world-size >= 1 and --device-memory-gib > 0")
		os.Exit(2)
	}
	text, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "NOT_FOUND: %v\n", err)
		os.Exit(1)
	}
	cluster := &pb.Cluster{
		DeviceMemoryBytes: uint64(*deviceGiB * gib),
		ReserveBytes:      uint64(*reserveGiB * gib),
		HostMemoryBytes:   uint64(*hostGiB * gib),
		GpusPerNode:       uint32(*gpusPerNode),
	}
	if *margin >= 0 {
		cluster.Margin = margin
	}

	c, err := client.Dial(*server, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintf(os.Stderr, "UNAVAILABLE: %v\n", err)
		os.Exit(1)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	layout, err := c.FitModel(ctx, string(text), uint32(*worldSize), cluster)
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(1)
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
		os.Exit(3)
	}
}
