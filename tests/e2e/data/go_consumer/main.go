// A scheduler plugin's use of the Go client, as a module of its own: it
// imports github.com/chunkplan/chunkplan/client/go (go_client_test.py's
// GoModuleConsumerTest copies this file into a temporary module
// that requires the client with a replace to the tree).
//
//	consumer SERVER CONFIG_JSON WORLD_SIZE DEVICE_BYTES
//
// It prints the server's verdict of a Layout of the model (margin 0), the
// number of parameters Describe reports through the raw generated client,
// the frozen bytes of a LoRA layout (rank 8 on c_attn), and the status
// code of a bad config.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
	"github.com/chunkplan/chunkplan/client/go/client"
)

func main() {
	text, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	worldSize, _ := strconv.ParseUint(os.Args[3], 10, 32)
	device, _ := strconv.ParseUint(os.Args[4], 10, 64)
	conn, err := grpc.Dial(os.Args[1], grpc.WithInsecure())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	c := client.New(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	margin := 0.0
	layout, err := c.LayoutModel(ctx, string(text), client.LayoutOptions{
		Search:  &pb.ChunkSearchRequest{DpDegrees: []uint32{uint32(worldSize)}, SearchRangeM: 32, SearchInterval: 1024},
		Cluster: &pb.Cluster{DeviceMemoryBytes: device, Margin: &margin},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(1)
	}
	v := layout.GetVerdict()
	fmt.Printf("verdict fits %t device_need_bytes %d headroom_bytes %d margin_bytes %d\n",
		v.GetFits(), v.GetDeviceNeedBytes(), v.GetHeadroomBytes(), v.GetMarginBytes())
	fmt.Printf("chunk_config_dict = %s\n", client.ChunkConfigDict(layout.GetGroups()))

	described, err := c.Raw().Describe(ctx, &pb.ModelConfig{HfConfigJson: string(text)})
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(1)
	}
	fmt.Printf("parameters %d\n", len(described.GetNumels()))

	// LoRA on c_attn (docs/lora.md): the base frozen, whole on the rank.
	lora, err := c.LayoutModel(ctx, string(text), client.LayoutOptions{
		Search: &pb.ChunkSearchRequest{DpDegrees: []uint32{uint32(worldSize)}, SearchRangeM: 32,
			Model: &pb.ModelConfig{Lora: &pb.Lora{Rank: 8, Targets: []string{"c_attn"}}}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, client.StatusLine(err))
		os.Exit(1)
	}
	fmt.Printf("lora frozen_bytes %d\n", lora.GetMostLoadedRank().GetFrozenBytes())

	_, err = c.LayoutModel(ctx, `{"model_type": "gpt2", "n_embd": -1}`, client.LayoutOptions{})
	fmt.Printf("bad config invalid argument %t\n", status.Code(err) == codes.InvalidArgument)
}
