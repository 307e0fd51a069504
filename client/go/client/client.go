// Package client asks a chunkplan server whether a Hugging Face model fits
// a cluster: a small layer over the stubs generated from
// proto/chunkplan/v1/chunk_search.proto (package chunkplanv1).
//
// Every call takes a context and should carry a deadline; errors come back
// as gRPC status errors (status.Code(err) gives INVALID_ARGUMENT for a bad
// config, RESOURCE_EXHAUSTED beyond the server's limits, ...).
package client

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "chunkplan/v1"
)

// Client is a connection to one chunkplan server.
type Client struct {
	conn *grpc.ClientConn
	stub pb.ChunkSearchClient
}

// Dial connects (lazily) to the server at target ("host:port" or any gRPC
// target) with the given dial options, e.g.
// grpc.WithInsecure() for plaintext (Debian 12's grpc-go, 1.33, has no
// credentials/insecure) or grpc.WithTransportCredentials for TLS.
func Dial(target string, opts ...grpc.DialOption) (*Client, error) {
	conn, err := grpc.Dial(target, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, stub: pb.NewChunkSearchClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Describe returns the parameters of the model that configJSON (the text of
// a config.json) describes; architecture may be empty (the config's
// architectures[0]).
func (c *Client) Describe(ctx context.Context, configJSON, architecture string) (*pb.ModelDescription, error) {
	return c.stub.Describe(ctx, &pb.ModelConfig{HfConfigJson: configJSON, Architecture: architecture})
}

// Fit is the answer to "does this model train on worldSize devices of
// deviceBytes each under Gemini's defaults".
type Fit struct {
	// The most loaded rank's device bytes (chunk shards, master weights,
	// optimizer states) plus the chunk it gathers while computing.
	PeakBytes   uint64
	DeviceBytes uint64
	Fits        bool
	// ColossalAI's chunk_config_dict: dp degree -> its chunk settings.
	ChunkConfigDict map[uint32]*pb.ChunkConfig
	// The search interval the server used (0 asks GeminiPlugin's default,
	// 1024).
	Layout *pb.LayoutResponse
}

// CheckFit asks Layout how the model of configJSON lays out on worldSize
// data-parallel ranks (search interval: GeminiPlugin's default without
// hidden_dim) and compares the most loaded rank's peak with deviceBytes.
func (c *Client) CheckFit(ctx context.Context, configJSON string, worldSize uint32, deviceBytes uint64) (*Fit, error) {
	if worldSize == 0 {
		return nil, fmt.Errorf("world size must be at least 1")
	}
	layout, err := c.stub.Layout(ctx, &pb.LayoutRequest{
		Search: &pb.ChunkSearchRequest{
			Model:        &pb.ModelConfig{HfConfigJson: configJSON},
			DpDegrees:    []uint32{worldSize},
			SearchRangeM: 32, // GeminiPlugin's search_range_m
		},
	})
	if err != nil {
		return nil, err
	}
	return FitOf(layout, deviceBytes), nil
}

// FitOf reads a Layout answer against a device of deviceBytes.
func FitOf(layout *pb.LayoutResponse, deviceBytes uint64) *Fit {
	peak := layout.GetMostLoadedRank().GetDeviceBytes() + layout.GetGatheredChunkBytes()
	dict := map[uint32]*pb.ChunkConfig{}
	for _, g := range layout.GetGroups() {
		dict[g.GetDpDegree()] = &pb.ChunkConfig{
			DpDegree: g.GetDpDegree(), ChunkSize: g.GetChunkSize(), KeepGathered: g.GetKeepGathered(),
		}
	}
	return &Fit{PeakBytes: peak, DeviceBytes: deviceBytes, Fits: peak <= deviceBytes, ChunkConfigDict: dict, Layout: layout}
}

// PlanModel asks Plan which Gemini configurations of the model of
// configJSON fit cluster, ranked (the ones that fit first; docs/plan.md),
// with GeminiPlugin's search (range 32 Mi elements, interval 1024, minimum
// chunk 32 Mi) and its default fixed choices. workload may be nil (no
// activation estimate); maxOptions 0 asks the server's 10. Every option's
// Colossalai field holds GeminiPlugin's keyword arguments as Python text.
func (c *Client) PlanModel(ctx context.Context, configJSON string, cluster *pb.Cluster, workload *pb.Workload, maxOptions uint32) (*pb.PlanResponse, error) {
	return c.stub.Plan(ctx, &pb.PlanRequest{
		Search: &pb.ChunkSearchRequest{
			Model:        &pb.ModelConfig{HfConfigJson: configJSON},
			SearchRangeM: 32, // GeminiPlugin's search_range_m
		},
		Cluster:    cluster,
		Workload:   workload,
		MaxOptions: maxOptions,
	})
}

// StatusLine is err as the command lines print it: "CODE: message", the
// gRPC code in its canonical form (INVALID_ARGUMENT, UNAVAILABLE, ...).
func StatusLine(err error) string {
	s := status.Convert(err)
	return fmt.Sprintf("%s: %s", codeName(s.Code().String()), s.Message())
}

// codeName is a gRPC code in the canonical form ("InvalidArgument" ->
// "INVALID_ARGUMENT").
func codeName(camel string) string {
	out := []byte{}
	for i := 0; i < len(camel); i++ {
		ch := camel[i]
		if ch >= 'A' && ch <= 'Z' {
			if i > 0 {
				out = append(out, '_')
			}
			out = append(out, ch)
		} else {
			out = append(out, ch-'a'+'A')
		}
	}
	return string(out)
}
