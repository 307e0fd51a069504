package client

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/chunkplan/chunkplan/client/go/chunkplanv1"
)

// recorder is a ChunkSearchClient that keeps the requests and answers
// Layout and Plan with what it is given.
type recorder struct {
	pb.ChunkSearchClient // the other calls: not used here
	layout               *pb.LayoutRequest
	plan                 *pb.PlanRequest
	layoutAnswer         *pb.LayoutResponse
	planAnswer           *pb.PlanResponse
}

func (r *recorder) Layout(_ context.Context, in *pb.LayoutRequest, _ ...grpc.CallOption) (*pb.LayoutResponse, error) {
	r.layout = in
	return r.layoutAnswer, nil
}

func (r *recorder) Plan(_ context.Context, in *pb.PlanRequest, _ ...grpc.CallOption) (*pb.PlanResponse, error) {
	r.plan = in
	if r.planAnswer == nil {
		return nil, status.Error(codes.InvalidArgument, "cluster.max_nodes: 0")
	}
	return r.planAnswer, nil
}

func margin(m float64) *float64 { return &m }

// Every PlanOptions field reaches the PlanRequest as it is; the model's
// config goes as search.model, numels and all else of the search kept.
func TestPlanOptionsMapToTheRequest(t *testing.T) {
	r := &recorder{planAnswer: &pb.PlanResponse{Options: []*pb.PlanOption{
		{WorldSize: 16, Nodes: 2, Verdict: &pb.Verdict{Fits: true}}}}}
	c := &Client{raw: r}
	search := &pb.ChunkSearchRequest{Numels: []uint64{5}, SearchRangeM: 64, SearchInterval: 4096, Engine: pb.Engine_ENGINE_CPU_PLATEAU}
	opts := PlanOptions{
		Search: search,
		Frozen: []bool{true, false},
		Gemini: &pb.GeminiSettings{Precision: pb.Precision_PRECISION_BF16, Optimizer: pb.Optimizer_OPTIMIZER_NONE},
		Cluster: &pb.Cluster{DeviceMemoryBytes: 80 << 30, GpusPerNode: 8, WholeNodes: true, MaxNodes: 4,
			ReserveBytes: 1 << 30, HostMemoryBytes: 1 << 40, Margin: margin(0.1)},
		Workload:   &pb.Workload{MicroBatch: 2, SequenceLength: 4096, FlashAttention: true},
		MaxOptions: 7,
	}
	got, err := c.PlanModel(context.Background(), `{"model_type": "gpt2"}`, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetOptions()[0].GetNodes() != 2 {
		t.Errorf("the server's nodes not kept: %v", got)
	}
	want := &pb.PlanRequest{
		Search: &pb.ChunkSearchRequest{SearchRangeM: 64, SearchInterval: 4096, Engine: pb.Engine_ENGINE_CPU_PLATEAU,
			Model: &pb.ModelConfig{HfConfigJson: `{"model_type": "gpt2"}`}},
		Frozen:     opts.Frozen,
		Gemini:     opts.Gemini,
		Cluster:    opts.Cluster,
		Workload:   opts.Workload,
		MaxOptions: 7,
	}
	if !proto.Equal(r.plan, want) {
		t.Errorf("request\n%v\nwant\n%v", r.plan, want)
	}
	if len(search.Numels) != 1 || search.Model != nil {
		t.Errorf("the caller's search was changed: %v", search)
	}

	// No search: GeminiPlugin's range (32 Mi); the server's defaults else.
	if _, err := c.PlanModel(context.Background(), "{}", PlanOptions{Cluster: opts.Cluster}); err != nil {
		t.Fatal(err)
	}
	if s := r.plan.GetSearch(); s.GetSearchRangeM() != 32 || s.GetSearchInterval() != 0 || s.GetModel().GetHfConfigJson() != "{}" {
		t.Errorf("default search: %v", s)
	}
}

func TestLayoutOptionsMapToTheRequest(t *testing.T) {
	r := &recorder{layoutAnswer: &pb.LayoutResponse{Verdict: &pb.Verdict{Fits: true}}}
	c := &Client{raw: r}
	opts := LayoutOptions{
		Search:    &pb.ChunkSearchRequest{DpDegrees: []uint32{8}, SearchRangeM: 32, SearchInterval: 1024},
		Configs:   []*pb.ChunkConfig{{DpDegree: 8, ChunkSize: 1 << 25}},
		Frozen:    []bool{false},
		Gemini:    &pb.GeminiSettings{Placement: pb.Placement_PLACEMENT_AUTO},
		Objective: pb.Objective_OBJECTIVE_PEAK_RANK_BYTES,
		Workload:  &pb.Workload{MicroBatch: 1, SequenceLength: 128},
		Cluster:   &pb.Cluster{DeviceMemoryBytes: 24 << 30},
	}
	if _, err := c.LayoutModel(context.Background(), "{}", opts); err != nil {
		t.Fatal(err)
	}
	want := &pb.LayoutRequest{
		Search: &pb.ChunkSearchRequest{DpDegrees: []uint32{8}, SearchRangeM: 32, SearchInterval: 1024,
			Model: &pb.ModelConfig{HfConfigJson: "{}"}},
		Configs: opts.Configs, Frozen: opts.Frozen, Gemini: opts.Gemini, Objective: opts.Objective,
		Workload: opts.Workload, Cluster: opts.Cluster,
	}
	if !proto.Equal(r.layout, want) {
		t.Errorf("request\n%v\nwant\n%v", r.layout, want)
	}
	// FitModel: GeminiPlugin's search at the world size, judged.
	if _, err := c.FitModel(context.Background(), "{}", 16, opts.Cluster); err != nil {
		t.Fatal(err)
	}
	if s := r.layout.GetSearch(); len(s.GetDpDegrees()) != 1 || s.GetDpDegrees()[0] != 16 || s.GetSearchRangeM() != 32 {
		t.Errorf("FitModel's search: %v", s)
	}
	// A cluster without a verdict in the answer: UNIMPLEMENTED.
	r.layoutAnswer = &pb.LayoutResponse{}
	if _, err := c.LayoutModel(context.Background(), "{}", opts); status.Code(err) != codes.Unimplemented {
		t.Errorf("no verdict: %v", err)
	}
}

// Errors come back with their status code; StatusLine names it in the
// canonical form.
func TestErrorsKeepTheirCode(t *testing.T) {
	c := &Client{raw: &recorder{}}
	_, err := c.PlanModel(context.Background(), "{}", PlanOptions{})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("code %v", status.Code(err))
	}
	if got := StatusLine(err); got != "INVALID_ARGUMENT: cluster.max_nodes: 0" {
		t.Errorf("StatusLine: %q", got)
	}
	if got := StatusLine(status.Error(codes.ResourceExhausted, "x")); got != "RESOURCE_EXHAUSTED: x" {
		t.Errorf("StatusLine: %q", got)
	}
	if got := StatusLine(errors.New("plain")); got != "UNKNOWN: plain" {
		t.Errorf("StatusLine: %q", got)
	}
	// An option without a verdict (a server before it): UNIMPLEMENTED.
	c = &Client{raw: &recorder{planAnswer: &pb.PlanResponse{Options: []*pb.PlanOption{{WorldSize: 8}}}}}
	if _, err := c.PlanModel(context.Background(), "{}", PlanOptions{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("no verdict: %v", err)
	}
}

func TestVerdictWordsAndChunkConfigDict(t *testing.T) {
	for v, want := range map[*pb.Verdict]string{
		{Fits: true}:                    "fits",
		{Tight: true, WhyNot: "device"}: "does not fit (tight): device",
		{WhyNot: "host"}:                "does not fit: host",
	} {
		if got := VerdictWords(v); got != want {
			t.Errorf("VerdictWords(%v) = %q", v, got)
		}
	}
	groups := []*pb.GroupLayout{{DpDegree: 8, ChunkSize: 100}, {DpDegree: 1, ChunkSize: 7, KeepGathered: true}}
	want := `{1: {"chunk_size": 7, "keep_gathered": True}, 8: {"chunk_size": 100, "keep_gathered": False}}`
	if got := ChunkConfigDict(groups); got != want {
		t.Errorf("ChunkConfigDict = %s", got)
	}
}
