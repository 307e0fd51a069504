// Package client asks a chunkplan server whether a Hugging Face model fits
// a cluster: a small layer over the stubs generated from
// proto/chunkplan/v1/chunk_search.proto (package chunkplanv1).
//
// The server judges; this package and its commands only render its
// Verdict (fits, tight, the margin, the headroom, why_not), never recompute
// it (docs/plan.md, "The verdict").
//
// Every call takes a context and should carry a deadline; errors come back
// as gRPC status errors (status.Code(err) gives INVALID_ARGUMENT for a bad
// config, RESOURCE_EXHAUSTED beyond the server's limits, ...).
package client

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
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

// FitModel asks Layout how the model of configJSON lays out on worldSize
// data-parallel ranks under Gemini's defaults (GeminiPlugin's search:
// range 32 Mi elements, interval 1024) and has the server judge it against
// cluster (its device memory, reserve, margin and, with gpus_per_node, its
// host memory; world_sizes must be empty). The answer's Verdict is the
// server's; a server that sends none (older than the verdict) is an error
// with code UNIMPLEMENTED.
func (c *Client) FitModel(ctx context.Context, configJSON string, worldSize uint32, cluster *pb.Cluster) (*pb.LayoutResponse, error) {
	layout, err := c.stub.Layout(ctx, &pb.LayoutRequest{
		Search: &pb.ChunkSearchRequest{
			Model:        &pb.ModelConfig{HfConfigJson: configJSON},
			DpDegrees:    []uint32{worldSize},
			SearchRangeM: 32, // GeminiPlugin's search_range_m
		},
		Cluster: cluster,
	})
	if err != nil {
		return nil, err
	}
	if layout.GetVerdict() == nil {
		return nil, status.Error(codes.Unimplemented, "the server's Layout answered no verdict")
	}
	return layout, nil
}

// PlanModel asks Plan which Gemini configurations of the model of
// configJSON fit cluster, ranked (the ones that fit first, then the tight
// ones; docs/plan.md), with GeminiPlugin's search (range 32 Mi elements,
// interval 1024, minimum chunk 32 Mi) and its default fixed choices.
// workload may be nil (no activation estimate); maxOptions 0 asks the
// server's 10. Every option's Colossalai field holds GeminiPlugin's keyword
// arguments as Python text, its Verdict the server's judgement.
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

// VerdictWords is the verdict as the command lines print it: "fits",
// "does not fit (tight): <why_not>" or "does not fit: <why_not>".
func VerdictWords(v *pb.Verdict) string {
	switch {
	case v.GetFits():
		return "fits"
	case v.GetTight():
		return "does not fit (tight): " + v.GetWhyNot()
	default:
		return "does not fit: " + v.GetWhyNot()
	}
}

// ChunkConfigDict is GeminiPlugin's chunk_config_dict of a layout's groups
// as a Python literal: {8: {"chunk_size": 33554432, "keep_gathered": False}}.
func ChunkConfigDict(groups []*pb.GroupLayout) string {
	sorted := append([]*pb.GroupLayout(nil), groups...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].GetDpDegree() < sorted[j].GetDpDegree() })
	entries := make([]string, 0, len(sorted))
	for _, g := range sorted {
		gathered := "False"
		if g.GetKeepGathered() {
			gathered = "True"
		}
		entries = append(entries, fmt.Sprintf("%d: {\"chunk_size\": %d, \"keep_gathered\": %s}",
			g.GetDpDegree(), g.GetChunkSize(), gathered))
	}
	return "{" + strings.Join(entries, ", ") + "}"
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
