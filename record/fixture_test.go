package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// testdata/v1.jsonl is a schema-1 run file frozen when schema 1 was made.
// Never regenerate it: it is what every later tritontop must still read.
// It holds concurrency 1 for two ticks (100 requests at 1 ms, then 300 at
// 3 ms), concurrency 2 for one tick (250 at 2 ms, with GPU metrics), and a
// summary.
func TestReadSchemaV1Fixture(t *testing.T) {
	run, err := ReadAll("testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h := run.Header
	if h.Schema != 1 || h.Model.Name != "resnet50" || h.Server.Protocol != "grpc" || !h.Server.Simulated ||
		h.Interval != time.Second || h.Load.Concurrency != 1 {
		t.Errorf("header %+v", h)
	}
	if strings.Join(h.Args, " ") != "-m resnet50 -H Authorization: REDACTED --concurrency-range 1:2" {
		t.Errorf("args %q", h.Args)
	}
	var cfg struct {
		MaxBatchSize int `json:"max_batch_size"`
	}
	if err := json.Unmarshal(h.Model.Config, &cfg); err != nil || cfg.MaxBatchSize != 32 {
		t.Errorf("model config %s: %v", h.Model.Config, err)
	}
	if len(run.Snapshots) != 3 || run.Truncated || run.Summary == nil {
		t.Fatalf("%d snapshots, truncated %v, summary %v", len(run.Snapshots), run.Truncated, run.Summary != nil)
	}
	s := run.Snapshots[2]
	if s.Seq != 3 || s.Load.Concurrency != 2 || s.Tick.Requests != 250 || s.Server.Queue != 900*time.Microsecond ||
		len(s.Metrics.GPUs) != 1 || s.Metrics.GPUs[0].MemoryTotal != 141e9 || s.Histogram == "" {
		t.Errorf("snapshot 3 %+v", s)
	}
	if g := s.Metrics.GPUs[0]; !g.HasUtilization || !g.HasMemory || !g.HasPower {
		t.Errorf("snapshot 3 GPU %+v, want every gauge reported", g)
	}
	if sum := run.Summary; sum.Ticks != 3 || sum.Client.Requests != 650 || len(sum.Steps) != 2 || sum.Server.SuccessCount != 650 {
		t.Errorf("summary %+v", sum)
	}
	if gs := run.Summary.Metrics.GPUs; len(gs) != 1 || !gs[0].HasUtilization || !gs[0].HasMemory || !gs[0].HasPower || gs[0].UtilizationAvg != 0.5 {
		t.Errorf("summary GPUs %+v", gs)
	}
}
