// Package client asks a chunkplan server whether a Hugging Face model fits
// a cluster: a small layer over the stubs generated from
// proto/chunkplan/v1/chunk_search.proto (the package
// github.com/chunkplan/chunkplan/client/go/chunkplanv1 beside it).
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
	"google.golang.org/protobuf/proto"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
)

// Client asks one chunkplan server. Its methods fill in a request from a
// model's config.json and options; Raw gives the generated client for any
// other call (Search, Frontier, or a request built by hand).
type Client struct {
	conn *grpc.ClientConn // nil when New wrapped a caller's connection
	raw  pb.ChunkSearchClient
}

// Dial connects (lazily) to the server at target ("host:port" or any gRPC
// target) with the given dial options, e.g.
// grpc.WithInsecure() for plaintext (grpc-go 1.33 has no
// credentials/insecure) or grpc.WithTransportCredentials for TLS. Close
// closes the connection.
func Dial(target string, opts ...grpc.DialOption) (*Client, error) {
	conn, err := grpc.Dial(target, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, raw: pb.NewChunkSearchClient(conn)}, nil
}

// New asks over a connection the caller owns (and closes): a scheduler's
// shared *grpc.ClientConn, or any grpc.ClientConnInterface.
func New(conn grpc.ClientConnInterface) *Client {
	return &Client{raw: pb.NewChunkSearchClient(conn)}
}

// Raw is the generated client of the ChunkSearch service, over the same
// connection.
func (c *Client) Raw() pb.ChunkSearchClient { return c.raw }

// Close closes the connection Dial opened; with New it does nothing.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Describe returns the parameters of the model that configJSON (the text of
// a config.json) describes; architecture may be empty (the config's
// architectures[0]).
func (c *Client) Describe(ctx context.Context, configJSON, architecture string) (*pb.ModelDescription, error) {
	return c.raw.Describe(ctx, &pb.ModelConfig{HfConfigJson: configJSON, Architecture: architecture})
}

// DescribeShards is Describe under GeminiPlugin's tp_size: tp rank 0's
// shards as the family's ShardFormer policy leaves them (every rank holds
// the same shapes); a family without a policy, or ColossalAI's asserts, is
// INVALID_ARGUMENT naming gemini.tp_size.
func (c *Client) DescribeShards(ctx context.Context, configJSON, architecture string, tpSize uint32) (*pb.ModelDescription, error) {
	return c.raw.Describe(ctx, &pb.ModelConfig{HfConfigJson: configJSON, Architecture: architecture, TpSize: tpSize})
}

// LayoutOptions is a LayoutRequest but its model: every field as the
// proto's LayoutRequest says (docs/plan.md).
type LayoutOptions struct {
	// The search settings (range, interval, minimum chunk, filter, engine)
	// and DpDegrees (at most one value: the world size); numels and model
	// are ignored. Nil: GeminiPlugin's search (range 32 Mi elements,
	// interval 1024, minimum chunk 32 Mi) with every parameter on one rank.
	Search *pb.ChunkSearchRequest
	// Non-empty: the chunk configs to lay out instead of searching.
	Configs []*pb.ChunkConfig
	// Empty: nothing frozen; else one per described parameter.
	Frozen    []bool
	Gemini    *pb.GeminiSettings
	Objective pb.Objective
	Workload  *pb.Workload // nil: no activation estimate
	// Nil: no verdict. Else the device memory, reserve, margin and, with
	// gpus_per_node, the host memory; world_sizes must be empty.
	Cluster *pb.Cluster
}

// PlanOptions is a PlanRequest but its model: every field as the proto's
// PlanRequest says (docs/plan.md).
type PlanOptions struct {
	// The search settings; numels, model and dp_degrees are ignored. Nil:
	// GeminiPlugin's search (range 32 Mi elements, interval 1024, minimum
	// chunk 32 Mi).
	Search *pb.ChunkSearchRequest
	// Empty: nothing frozen; else one per described parameter.
	Frozen []bool
	// The fixed choices (precision, master weights, gradient accumulation,
	// pin memory, optimizer); nil: GeminiPlugin's defaults.
	Gemini *pb.GeminiSettings
	// Required: device memory, host memory, gpus per node, the world sizes
	// (listed, or WholeNodes with MaxNodes: gpus per node x 1 to MaxNodes,
	// the first option that fits then on the fewest nodes; every option's
	// Nodes is the server's), reserve and margin.
	Cluster    *pb.Cluster
	Workload   *pb.Workload // nil: no activation estimate
	MaxOptions uint32       // 0: the server's 10
	// The mesh to try (docs/tensor-parallelism.md): SearchTp tries tp 1,
	// 2, 4, 8; else TpSizes (empty: Gemini.TpSize); ExtraDpSizes (empty:
	// Gemini.ExtraDpSize).
	SearchTp     bool
	TpSizes      []uint32
	ExtraDpSizes []uint32
}

// modelSearch is search (nil: GeminiPlugin's) asked of the model of
// configJSON; search itself is not changed. The rest of search.Model
// (architecture, LoRA adapters, freeze and train patterns: docs/lora.md)
// is kept, for the server to apply.
func modelSearch(configJSON string, search *pb.ChunkSearchRequest) *pb.ChunkSearchRequest {
	out := &pb.ChunkSearchRequest{SearchRangeM: 32} // GeminiPlugin's search_range_m
	if search != nil {
		out = proto.Clone(search).(*pb.ChunkSearchRequest)
	}
	out.Numels = nil
	if out.Model == nil {
		out.Model = &pb.ModelConfig{}
	}
	out.Model.HfConfigJson = configJSON
	return out
}

// LayoutModel asks Layout how the model of configJSON lays out under opts.
// With opts.Cluster the answer's Verdict is the server's judgement; a
// server that sends none then (older than the verdict) is an error with
// code UNIMPLEMENTED. Errors are the server's gRPC status errors.
func (c *Client) LayoutModel(ctx context.Context, configJSON string, opts LayoutOptions) (*pb.LayoutResponse, error) {
	layout, err := c.raw.Layout(ctx, &pb.LayoutRequest{
		Search:    modelSearch(configJSON, opts.Search),
		Configs:   opts.Configs,
		Frozen:    opts.Frozen,
		Gemini:    opts.Gemini,
		Objective: opts.Objective,
		Workload:  opts.Workload,
		Cluster:   opts.Cluster,
	})
	if err != nil {
		return nil, err
	}
	if opts.Cluster != nil && layout.GetVerdict() == nil {
		return nil, status.Error(codes.Unimplemented, "the server's Layout answered no verdict")
	}
	return layout, nil
}

// FitModel is LayoutModel with GeminiPlugin's search and defaults, every
// parameter data-parallel over worldSize ranks, judged against cluster.
func (c *Client) FitModel(ctx context.Context, configJSON string, worldSize uint32, cluster *pb.Cluster) (*pb.LayoutResponse, error) {
	return c.LayoutModel(ctx, configJSON, LayoutOptions{
		Search:  &pb.ChunkSearchRequest{DpDegrees: []uint32{worldSize}, SearchRangeM: 32},
		Cluster: cluster,
	})
}

// PlanModel asks Plan which Gemini configurations of the model of
// configJSON fit opts.Cluster, ranked (the ones that fit first, then the
// tight ones; docs/plan.md). Every option's Colossalai field holds
// GeminiPlugin's keyword arguments as Python text, its Verdict the
// server's judgement; an option without one (a server older than the
// verdict) is an error with code UNIMPLEMENTED. Errors are the server's
// gRPC status errors.
func (c *Client) PlanModel(ctx context.Context, configJSON string, opts PlanOptions) (*pb.PlanResponse, error) {
	plan, err := c.raw.Plan(ctx, &pb.PlanRequest{
		Search:       modelSearch(configJSON, opts.Search),
		Frozen:       opts.Frozen,
		Gemini:       opts.Gemini,
		Cluster:      opts.Cluster,
		Workload:     opts.Workload,
		MaxOptions:   opts.MaxOptions,
		SearchTp:     opts.SearchTp,
		TpSizes:      opts.TpSizes,
		ExtraDpSizes: opts.ExtraDpSizes,
	})
	if err != nil {
		return nil, err
	}
	for _, o := range plan.GetOptions() {
		if o.GetVerdict() == nil {
			return nil, status.Error(codes.Unimplemented, "the server's Plan answered an option without a verdict")
		}
	}
	return plan, nil
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
