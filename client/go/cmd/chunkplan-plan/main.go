// chunkplan-plan: which ColossalAI Gemini configuration of a Hugging Face
// model fits a cluster, on how many nodes? Reads the model's config.json,
// asks a chunkplan server's Plan (docs/plan.md) and prints the first
// option: its world size, the nodes it occupies, placement, figures and
// the server's verdict (fits leaves the margin free; tight: within the
// device, not the margin), and the GeminiPlugin(...) line to paste when it
// fits. With --whole-nodes the world sizes are every whole number of nodes
// up to --max-nodes, and the first option that fits is the fewest nodes.
//
//	chunkplan-plan --server localhost:50051 --config config.json \
//	    (--gpu h100-sxm | --device-memory 80GiB) --gpus-per-node 8 \
//	    (--world-sizes 8,16,32 | --whole-nodes --max-nodes 4) \
//	    [--host-memory 1TiB] [--reserve 2GiB] [--margin 5%] \
//	    [--micro-batch 1 --sequence-length 4096 --flash-attention] [--format json]
//
// Sizes take a unit as the C++ command line's do (KiB..TiB, KB..TB); --gpu
// takes the presets of common/gpu_presets.inc. Exit status: 0 the first
// option fits, 3 no option fits (then no GeminiPlugin line; why on
// stderr), 1 a failed call (the status code and message on stderr), 2 a
// usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
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
	sizes := flag.String("world-sizes", "", "the data-parallel degrees the job may use, e.g. 8,16,32")
	wholeNodes := flag.Bool("whole-nodes", false, "with --max-nodes: world sizes of whole nodes, --gpus-per-node x 1 to --max-nodes")
	maxNodes := flag.Uint("max-nodes", 0, "with --whole-nodes: the most nodes the job may use")
	gpu := flag.String("gpu", "", "the GPU by name (a preset: h100-sxm, a100-80gb, rtx-4090, ...), in place of --device-memory")
	deviceMemory := flag.String("device-memory", "", "memory of one GPU, e.g. 80GiB (KiB..TiB, KB..TB)")
	hostMemory := flag.String("host-memory", "", "host memory of one node, e.g. 1TiB (default: not checked)")
	gpusPerNode := flag.Uint("gpus-per-node", 0, "GPUs (ranks) per node")
	reserve := flag.String("reserve", "", "per GPU, kept free for the CUDA context and workspace, e.g. 2GiB")
	margin := flag.String("margin", "", "share of device memory to leave free, e.g. 0.05 or 5% (default: the server's 5%)")
	microBatch := flag.Uint("micro-batch", 0, "with --sequence-length: estimate activations")
	sequenceLength := flag.Uint("sequence-length", 0, "tokens per sequence")
	checkpointing := flag.Bool("activation-checkpointing", false, "full recomputation")
	flash := flag.Bool("flash-attention", false, "no attention scores stored")
	maxOptions := flag.Uint("max-options", 0, "at most this many options (0: the server's 10)")
	format := flag.String("format", "text", "text: the first option; json: the whole PlanResponse (protobuf's JSON, one line)")
	timeout := flag.Duration("timeout", 60*time.Second, "deadline of the call")
	flag.Parse()
	if *config == "" || flag.NArg() != 0 {
		usage(fmt.Errorf("needs --config FILE"))
	}
	if *format != "text" && *format != "json" {
		usage(fmt.Errorf("--format takes text or json"))
	}
	if (*microBatch == 0) != (*sequenceLength == 0) {
		usage(fmt.Errorf("--micro-batch and --sequence-length go together"))
	}
	cluster, err := cmdline.Cluster(*gpu, *deviceMemory, *reserve, *hostMemory, *margin)
	if err != nil {
		usage(err)
	}
	cluster.GpusPerNode = uint32(*gpusPerNode)
	if err := cmdline.SetWorldSizes(*sizes, *wholeNodes, *maxNodes, cluster); err != nil {
		usage(err)
	}
	var workload *pb.Workload
	if *microBatch != 0 {
		workload = &pb.Workload{MicroBatch: uint32(*microBatch), SequenceLength: uint32(*sequenceLength),
			ActivationCheckpointing: *checkpointing, FlashAttention: *flash}
	}
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
	plan, err := c.PlanModel(ctx, string(text), client.PlanOptions{
		Cluster: cluster, Workload: workload, MaxOptions: uint32(*maxOptions)})
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(cmdline.ExitError)
	}
	if len(plan.GetOptions()) == 0 {
		fmt.Fprintln(os.Stderr, "NOT_FOUND: Plan answered no option")
		os.Exit(cmdline.ExitError)
	}
	first := plan.GetOptions()[0]
	if *format == "json" {
		text, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(plan)
		if err != nil {
			fmt.Fprintf(os.Stderr, "INTERNAL: %v\n", err)
			os.Exit(cmdline.ExitError)
		}
		fmt.Println(string(text))
	} else {
		report(first, len(plan.GetOptions()), plan.GetOptionsConsidered())
	}
	if !first.GetVerdict().GetFits() {
		fmt.Fprintln(os.Stderr, "no option fits; option 1 "+client.VerdictWords(first.GetVerdict()))
		os.Exit(cmdline.ExitDoesNotFit)
	}
}

// report prints the first option: the server's verdict, its figures in GiB
// and in bytes, and the GeminiPlugin(...) line when it fits.
func report(o *pb.PlanOption, shown int, considered uint64) {
	v := o.GetVerdict()
	fmt.Printf("option 1 of %d (%d considered): world size %d on %d nodes, chunk size from %s, %s\n",
		shown, considered, o.GetWorldSize(), o.GetNodes(), o.GetChunkSizeFrom(), client.VerdictWords(v))
	fmt.Printf("device need %.2f GiB of %.2f GiB, headroom %.2f GiB, margin %g%% (%.2f GiB), host per node %.2f GiB\n",
		float64(v.GetDeviceNeedBytes())/gib, float64(v.GetDeviceMemoryBytes())/gib,
		float64(v.GetHeadroomBytes())/gib, 100*v.GetMargin(), float64(v.GetMarginBytes())/gib,
		float64(v.GetHostBytesPerNode())/gib)
	fmt.Printf("device_need_bytes %d host_bytes_per_node %d activation_bytes %d transient_bytes %d\n",
		v.GetDeviceNeedBytes(), v.GetHostBytesPerNode(), o.GetActivationBytes(), o.GetTransientBytes())
	fmt.Printf("headroom_bytes %d margin_bytes %d tight %t nodes %d\n",
		v.GetHeadroomBytes(), v.GetMarginBytes(), v.GetTight(), o.GetNodes())
	if o.GetActivationBytes() != 0 {
		fmt.Println("activation_bytes and transient_bytes are ESTIMATES (docs/plan.md)")
	}
	if v.GetFits() {
		fmt.Printf("GeminiPlugin(%s)\n", o.GetColossalai())
	}
}
