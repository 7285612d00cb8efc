package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// simSuccesses is the simulator's count of successful inferences of model,
// over its versions; 0 for a model it does not serve.
func simSuccesses(t *testing.T, srv *sim.Server, model string) int64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		return 0
	}
	var n int64
	for _, m := range st.GetModelStats() {
		n += int64(m.GetInferenceStats().GetSuccess().GetCount())
	}
	return n
}

// TestCountWindows: perf_analyzer's --measurement-mode count_windows
// measures each level in windows of --measurement-request-count finished
// requests, not of --measurement-interval: here windows of 200 requests of
// a fast model close long before the 5 s interval would, and the step's
// three windows hold at least 600 requests.
func TestCountWindows(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := quickConfig(srv, "simple")
	c.Duration, c.ConcurrencyRange, c.MeasurementIntervalMS = 0, "2", 5000
	c.PerfAnalyzer.MeasurementMode, c.PerfAnalyzer.MeasurementRequestCount = session.CountWindows, 200
	run, _ := recordRun(t, c)
	if run.Summary == nil || len(run.Summary.Steps) != 1 {
		t.Fatalf("want one step, got %+v", run.Summary)
	}
	st := run.Summary.Steps[0]
	if st.Client.Requests < 600 {
		t.Errorf("the step's three windows hold %d requests, want at least 600", st.Client.Requests)
	}
	if st.Measurement == nil || st.Measurement.Windows != 3 {
		t.Fatalf("measurement %+v", st.Measurement)
	}
	if d := st.Duration; d >= 3*5*time.Second {
		t.Errorf("the step's windows took %v: as long as time windows of 5 s", d)
	}
}

// TestProfileExport: perf_analyzer's --profile-export-file: the file
// parses, has an experiment per level of the range with its requests and
// window boundaries, every response after its request, and as many
// requests as the simulator served.
func TestProfileExport(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	path := filepath.Join(t.TempDir(), "profile.json")
	before := simSuccesses(t, srv, "simple")
	c := quickConfig(srv, "simple")
	c.Duration, c.ConcurrencyRange, c.MeasurementIntervalMS, c.PerfAnalyzer.ProfileExportFile = 0, "1:2", 300, path
	runOK(t, c)
	served := simSuccesses(t, srv, "simple") - before
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
				Timestamp          int64            `json:"timestamp"`
				RequestInputs      map[string]any   `json:"request_inputs"`
				ResponseTimestamps []int64          `json:"response_timestamps"`
				ResponseOutputs    []map[string]any `json:"response_outputs"`
			} `json:"requests"`
			WindowBoundaries []int64 `json:"window_boundaries"`
		} `json:"experiments"`
		Version     string  `json:"version"`
		ServiceKind string  `json:"service_kind"`
		Endpoint    *string `json:"endpoint"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the export does not parse: %v", err)
	}
	if doc.ServiceKind != "triton" || doc.Version == "" || doc.Endpoint == nil {
		t.Errorf("version %q, service_kind %q, endpoint %v", doc.Version, doc.ServiceKind, doc.Endpoint)
	}
	if len(doc.Experiments) != 2 {
		t.Fatalf("%d experiments, want 2 (concurrency 1 and 2)", len(doc.Experiments))
	}
	var total int64
	for i, e := range doc.Experiments {
		if e.Experiment.Mode != "concurrency" || e.Experiment.Value != float64(i+1) {
			t.Errorf("experiment %d is %+v", i, e.Experiment)
		}
		if len(e.WindowBoundaries) < 2 {
			t.Errorf("experiment %d has %d window boundaries", i, len(e.WindowBoundaries))
		}
		for j := 1; j < len(e.WindowBoundaries); j++ {
			if e.WindowBoundaries[j] <= e.WindowBoundaries[j-1] {
				t.Fatalf("experiment %d: window boundaries out of order: %v", i, e.WindowBoundaries)
			}
		}
		for _, r := range e.Requests {
			if len(r.ResponseTimestamps) != 1 || r.ResponseTimestamps[0] < r.Timestamp {
				t.Fatalf("experiment %d: request at %d has responses %v", i, r.Timestamp, r.ResponseTimestamps)
			}
		}
		total += int64(len(e.Requests))
	}
	if total != served {
		t.Errorf("the export has %d requests, the simulator served %d", total, served)
	}
}
