package interop_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
)

// TestProfileExport runs perf_analyzer's --profile-export-file
// (PerfAnalyzer.ProfileExportFile) against a real Triton: a concurrency
// range of 1 and 2, each level a fixed 600 ms. The export parses, has an
// experiment per level, each request's response after its send, and as
// many requests as Triton counted over the run; the run's counts and
// server times are Triton's (checkExact).
func TestProfileExport(t *testing.T) {
	t.Parallel()
	wallTime(t)
	srv := interop.Start(t, interop.Options{Models: []string{identity}})
	path := filepath.Join(t.TempDir(), "profile.json")
	c := configFor(srv, "grpc", identity)
	c.Duration, c.ConcurrencyRange, c.StepDuration, c.Shapes = 0, "1:2", 600*time.Millisecond, []string{"INPUT0:16"}
	c.PerfAnalyzer.ProfileExportFile = path
	run, d, _ := measure(t, srv, identity, c)
	checkExact(t, "the run", run.Summary.Client, run.Summary.Server, d)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Experiments []struct {
			Experiment struct {
				Mode  string  `json:"mode"`
				Value float64 `json:"value"`
			} `json:"experiment"`
			Requests []struct {
				Timestamp          int64   `json:"timestamp"`
				ResponseTimestamps []int64 `json:"response_timestamps"`
			} `json:"requests"`
		} `json:"experiments"`
		ServiceKind string `json:"service_kind"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the export does not parse: %v", err)
	}
	if doc.ServiceKind != "triton" || len(doc.Experiments) != 2 {
		t.Fatalf("service kind %q, %d experiments; want triton, 2 (concurrency 1 and 2)", doc.ServiceKind, len(doc.Experiments))
	}
	var total uint64
	for i, e := range doc.Experiments {
		if e.Experiment.Mode != "concurrency" || e.Experiment.Value != float64(i+1) {
			t.Errorf("experiment %d is %+v", i, e.Experiment)
		}
		for _, r := range e.Requests {
			if len(r.ResponseTimestamps) != 1 || r.ResponseTimestamps[0] < r.Timestamp {
				t.Fatalf("experiment %d: a request at %d has responses %v", i, r.Timestamp, r.ResponseTimestamps)
			}
		}
		total += uint64(len(e.Requests))
	}
	if total != d.Inference.Success.Count {
		t.Errorf("the export has %d requests; Triton counted %d", total, d.Inference.Success.Count)
	}
}
