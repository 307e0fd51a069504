// chunkplan-fit: does a Hugging Face model train on a cluster under
// ColossalAI Gemini? Reads the model's config.json, asks a chunkplan
// server's Layout for the world size (every parameter data-parallel over
// it), and prints whether the most loaded rank's device bytes plus the
// chunk it gathers fit in the device memory, and the chunk_config_dict to
// pass to GeminiPlugin.
//
//	chunkplan-fit --server localhost:50051 --config config.json \
//	    --world-size 8 --device-memory-gib 80
//
// Exit status: 0 fits, 3 does not fit, 1 a failed call (the status code
// and message on stderr), 2 a usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"google.golang.org/grpc"

	"chunkplan/client"
)

const gib = 1 << 30

func main() {
	server := flag.String("server", "localhost:50051", "the chunkplan server, host:port")
	config := flag.String("config", "", "the model's config.json")
	worldSize := flag.Uint("world-size", 8, "data-parallel degree of every parameter")
	deviceGiB := flag.Float64("device-memory-gib", 80, "memory of one device in GiB (2**30 bytes)")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of the call")
	flag.Parse()
	if *config == "" || *worldSize == 0 || *deviceGiB <= 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "INVALID_ARGUMENT: needs --config FILE, --world-size >= 1 and --device-memory-gib > 0")
		os.Exit(2)
	}
	text, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "NOT_FOUND: %v\n", err)
		os.Exit(1)
	}

	c, err := client.Dial(*server, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintf(os.Stderr, "UNAVAILABLE: %v\n", err)
		os.Exit(1)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	deviceBytes := uint64(*deviceGiB * gib)
	fit, err := c.CheckFit(ctx, string(text), uint32(*worldSize), deviceBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(1)
	}

	verdict := "fits"
	if !fit.Fits {
		verdict = "does not fit"
	}
	fmt.Printf("%s: peak %.2f GiB of %.2f GiB per device (world size %d)\n",
		verdict, float64(fit.PeakBytes)/gib, float64(deviceBytes)/gib, *worldSize)
	fmt.Printf("peak_bytes %d device_bytes %d\n", fit.PeakBytes, deviceBytes)
	fmt.Printf("chunk_config_dict = %s\n", configDict(fit))
	if !fit.Fits {
		os.Exit(3)
	}
}

// configDict is GeminiPlugin's chunk_config_dict as a Python literal:
// {8: {"chunk_size": 33554432, "keep_gathered": False}}.
func configDict(fit *client.Fit) string {
	degrees := make([]int, 0, len(fit.ChunkConfigDict))
	for d := range fit.ChunkConfigDict {
		degrees = append(degrees, int(d))
	}
	sort.Ints(degrees)
	out := "{"
	for i, d := range degrees {
		c := fit.ChunkConfigDict[uint32(d)]
		gathered := "False"
		if c.GetKeepGathered() {
			gathered = "True"
		}
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%d: {\"chunk_size\": %d, \"keep_gathered\": %s}", d, c.GetChunkSize(), gathered)
	}
	return out + "}"
}
