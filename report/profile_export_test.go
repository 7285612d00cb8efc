package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// profileDoc is perf_analyzer's profile export, as its readers parse it.
type profileDoc struct {
	Experiments []struct {
		Experiment struct {
			Mode  string  `json:"mode"`
			Value float64 `json:"value"`
		} `json:"experiment"`
		Requests []struct {
			Timestamp          int64   `json:"timestamp"`
			ResponseTimestamps []int64 `json:"response_timestamps"`
		} `json:"requests"`
		WindowBoundaries []int64 `json:"window_boundaries"`
	} `json:"experiments"`
	Version     string `json:"version"`
	ServiceKind string `json:"service_kind"`
}

func readProfile(t *testing.T, path string) profileDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc profileDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the export is not JSON: %v\n%s", err, b)
	}
	return doc
}

// TestProfileExportExperiments feeds the export two levels' results
// through its tap: each level is an experiment with its mode and value,
// its successful requests (failed and cancelled ones left out) with their
// send and response times in ns since the Unix epoch (every response of a
// decoupled request), and the tick ends within it as window boundaries.
func TestProfileExportExperiments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile.json")
	// An epoch in the past, so that the change below has settled at once.
	epoch := time.Now().Add(-10 * time.Second)
	p, err := CreateProfileExport(path, epoch, load.Target{Mode: load.Concurrency, Concurrency: 4}, "tritontop test")
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan []driver.Result, 1)
	out := p.Tap(in)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	in <- []driver.Result{
		{Sent: ms(100), Done: ms(110)},
		{Sent: ms(200), Done: ms(250), Err: errors.New("boom")},
		{Sent: ms(300), Done: ms(320), Cancelled: true},
		{Sent: ms(400), Done: ms(430), Decoupled: true, Responses: 3,
			Timing: &driver.ResponseTiming{First: ms(410), Gaps: []time.Duration{ms(5), ms(7)}}},
	}
	if got := <-out; len(got) != 4 {
		t.Fatalf("the tap passed on %d results of 4", len(got))
	}
	p.Add(stats.Snapshot{Time: epoch.Add(ms(500))})
	p.LoadChanged(load.Change{At: ms(1000), State: load.State{Target: load.Target{Mode: load.Rate, Rate: 250}}})
	p.LoadChanged(load.Change{At: ms(1500), State: load.State{Target: load.Target{Mode: load.Rate, Rate: 250}, Draining: true}})
	in <- []driver.Result{{Sent: ms(1100), Done: ms(1120)}, {Sent: ms(1200), Done: ms(1230)}}
	<-out
	p.Add(stats.Snapshot{Time: epoch.Add(ms(1300))})
	close(in)
	if _, ok := <-out; ok {
		t.Fatal("the tap's channel stayed open after its input closed")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p.Requests() != 4 {
		t.Errorf("%d requests written, want the 4 successes", p.Requests())
	}
	doc := readProfile(t, path)
	if doc.Version != "tritontop test" || doc.ServiceKind != "triton" || len(doc.Experiments) != 2 {
		t.Fatalf("export %+v", doc)
	}
	ns := func(d time.Duration) int64 { return epoch.Add(d).UnixNano() }
	first, second := doc.Experiments[0], doc.Experiments[1]
	if first.Experiment.Mode != "concurrency" || first.Experiment.Value != 4 || len(first.Requests) != 2 {
		t.Fatalf("first experiment %+v", first)
	}
	if r := first.Requests[0]; r.Timestamp != ns(ms(100)) || !slices.Equal(r.ResponseTimestamps, []int64{ns(ms(110))}) {
		t.Errorf("a unary request: %+v", r)
	}
	if r := first.Requests[1]; !slices.Equal(r.ResponseTimestamps, []int64{ns(ms(410)), ns(ms(415)), ns(ms(422))}) {
		t.Errorf("a decoupled request's responses: %+v", r)
	}
	if !slices.Equal(first.WindowBoundaries, []int64{ns(0), ns(ms(500))}) {
		t.Errorf("first experiment's windows %v", first.WindowBoundaries)
	}
	if second.Experiment.Mode != "request_rate" || second.Experiment.Value != 250 || len(second.Requests) != 2 {
		t.Fatalf("second experiment %+v", second)
	}
	if w := second.WindowBoundaries; len(w) != 2 || w[0] != ns(ms(1000)) || w[1] != ns(ms(1300)) {
		t.Errorf("second experiment's windows %v", w)
	}
}

// TestProfileExportUntapped: an export closed without a tap (a run that
// ended before its driver started) is still a whole document, and a path
// that cannot be created is an error naming the flag.
func TestProfileExportUntapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile.json")
	p, err := CreateProfileExport(path, time.Now(), load.Target{Mode: load.Concurrency, Concurrency: 1}, "v")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if doc := readProfile(t, path); len(doc.Experiments) != 0 || doc.Version != "v" {
		t.Errorf("export %+v", doc)
	}
	_, err = CreateProfileExport(filepath.Join(t.TempDir(), "no", "such", "dir.json"), time.Now(), load.Target{}, "v")
	if err == nil || !strings.Contains(err.Error(), "--profile-export-file") {
		t.Errorf("an uncreatable path: %v", err)
	}
}
