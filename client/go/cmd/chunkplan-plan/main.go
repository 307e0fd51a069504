// chunkplan-plan: which ColossalAI Gemini configuration of a Hugging Face
// model fits a cluster? Reads the model's config.json, asks a chunkplan
// server's Plan (docs/plan.md) and prints the first option: its world
// size, placement, figures and the server's verdict (fits leaves the
// margin free; tight: within the device, not the margin), and the
// GeminiPlugin(...) line to paste when it fits.
//
//	chunkplan-plan --server localhost:50051 --config config.json \
//	    --device-memory-gib 80 --host-memory-gib 1024 --gpus-per-node 8 \
//	    --world-sizes 8,16,32 [--reserve-gib 2] [--margin 0.05] \
//	    [--micro-batch 1 --sequence-length 4096 --flash-attention]
//
// Exit status: 0 the first option fits, 3 no option fits (then no
// GeminiPlugin line), 1 a failed call (the status code and message on
// stderr), 2 a usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
	"github.com/chunkplan/chunkplan/client/go/client"
)

const gib = 1 << 30

func usage(message string) {
	fmt.Fprintln(os.Stderr, "INVALID_ARGUMENT: "+message)
	os.Exit(2)
}

// worldSizes parses "8,16,32".
func worldSizes(text string) ([]uint32, error) {
	var out []uint32
	for _, part := range strings.Split(text, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("--world-sizes: %q is not a list of sizes >= 1, e.g. 8,16,32", text)
		}
		out = append(out, uint32(n))
	}
	return out, nil
}

func main() {
	server := flag.String("server", "localhost:50051", "the chunkplan server, host:port")
	config := flag.String("config", "", "the model's config.json")
	sizes := flag.String("world-sizes", "8", "the data-parallel degrees the job may use, e.g. 8,16,32")
	deviceGiB := flag.Float64("device-memory-gib", 80, "memory of one device in GiB (2**30 bytes)")
	hostGiB := flag.Float64("host-memory-gib", 0, "host memory of one node in GiB (0: not checked)")
	gpusPerNode := flag.Uint("gpus-per-node", 8, "devices (ranks) per node")
	reserveGiB := flag.Float64("reserve-gib", 0, "per device, kept free for the CUDA context and workspace")
	margin := flag.Float64("margin", -1, "share of device memory to leave free, in [0, 1) (negative: the server's 5%)")
	microBatch := flag.Uint("micro-batch", 0, "with --sequence-length: estimate activations")
	sequenceLength := flag.Uint("sequence-length", 0, "tokens per sequence")
	checkpointing := flag.Bool("activation-checkpointing", false, "full recomputation")
	flash := flag.Bool("flash-attention", false, "no attention scores stored")
	maxOptions := flag.Uint("max-options", 0, "at most this many options (0: the server's 10)")
	timeout := flag.Duration("timeout", 60*time.Second, "deadline of the call")
	flag.Parse()
	if *config == "" || *deviceGiB <= 0 || *hostGiB < 0 || *reserveGiB < 0 || *gpusPerNode == 0 || flag.NArg() != 0 {
		usage("needs --config FILE, --device-memory-gib > 0 and --gpus-per-node >= 1")
	}
	if (*microBatch == 0) != (*sequenceLength == 0) {
		usage("--micro-batch and --sequence-length go together")
	}
	ws, err := worldSizes(*sizes)
	if err != nil {
		usage(err.Error())
	}
	text, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "NOT_FOUND: %v\n", err)
		os.Exit(1)
	}
	cluster := &pb.Cluster{
		DeviceMemoryBytes: uint64(*deviceGiB * gib),
		HostMemoryBytes:   uint64(*hostGiB * gib),
		GpusPerNode:       uint32(*gpusPerNode),
		WorldSizes:        ws,
		ReserveBytes:      uint64(*reserveGiB * gib),
	}
	if *margin >= 0 {
		cluster.Margin = margin
	}
	var workload *pb.Workload
	if *microBatch != 0 {
		workload = &pb.Workload{MicroBatch: uint32(*microBatch), SequenceLength: uint32(*sequenceLength),
			ActivationCheckpointing: *checkpointing, FlashAttention: *flash}
	}

	c, err := client.Dial(*server, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintf(os.Stderr, "UNAVAILABLE: %v\n", err)
		os.Exit(1)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	plan, err := c.PlanModel(ctx, string(text), client.PlanOptions{
		Cluster: cluster, Workload: workload, MaxOptions: uint32(*maxOptions)})
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(1)
	}
	if len(plan.GetOptions()) == 0 {
		fmt.Fprintln(os.Stderr, "NOT_FOUND: Plan answered no option")
		os.Exit(1)
	}
	first := plan.GetOptions()[0]
	report(first, len(plan.GetOptions()), plan.GetOptionsConsidered())
	if !first.GetVerdict().GetFits() {
		os.Exit(3)
	}
}

// report prints the first option: the server's verdict, its figures in GiB
// and in bytes, and the GeminiPlugin(...) line when it fits.
func report(o *pb.PlanOption, shown int, considered uint64) {
	v := o.GetVerdict()
	fmt.Printf("option 1 of %d (%d considered): world size %d, chunk size from %s, %s\n",
		shown, considered, o.GetWorldSize(), o.GetChunkSizeFrom(), client.VerdictWords(v))
	fmt.Printf("device need %.2f GiB of %.2f GiB, headroom %.2f GiB, margin %g%% (%.2f GiB), host per node %.2f GiB\n",
		float64(v.GetDeviceNeedBytes())/gib, float64(v.GetDeviceMemoryBytes())/gib,
		float64(v.GetHeadroomBytes())/gib, 100*v.GetMargin(), float64(v.GetMarginBytes())/gib,
		float64(v.GetHostBytesPerNode())/gib)
	fmt.Printf("device_need_bytes %d host_bytes_per_node %d activation_bytes %d transient_bytes %d\n",
		v.GetDeviceNeedBytes(), v.GetHostBytesPerNode(), o.GetActivationBytes(), o.GetTransientBytes())
	fmt.Printf("headroom_bytes %d margin_bytes %d tight %t\n",
		v.GetHeadroomBytes(), v.GetMarginBytes(), v.GetTight())
	if o.GetActivationBytes() != 0 {
		fmt.Println("activation_bytes and transient_bytes are ESTIMATES (docs/plan.md)")
	}
	if v.GetFits() {
		fmt.Printf("GeminiPlugin(%s)\n", o.GetColossalai())
	}
}
