package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
)

// TestGoodputEndToEnd runs the chat endpoint in open loop under two SLOs
// at once: objectives every request meets make the goodput every request;
// objectives none can meet (a first token within a microsecond) make it
// none. The summary, the CSV and the run file agree.
func TestGoodputEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ttft, itl string
		all             bool
	}{
		{"loose", "ttft-p99:1h", "itl-p99:1h", true},
		{"tight", "ttft-p99:1us", "itl-p99:1h", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t)
			dir := t.TempDir()
			c := session.Defaults()
			c.URL, c.Model, c.Protocol, c.Streaming = srv.HTTPAddr(), "llm", "http", true
			c.MetricsURLs = []string{"http://" + srv.MetricsAddr() + "/metrics"}
			c.Endpoint.Name, c.Endpoint.InputTokensMean, c.Endpoint.OutputTokensMean = "chat", 16, 4
			c.RequestRate, c.SLO.Specs = 10, []string{tc.ttft, tc.itl}
			c.Tick, c.Duration, c.Headless = quickTick, time.Second, true
			c.Record, c.CSV = filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
			stdout, _ := runOK(t, c)
			run, err := record.ReadAll(c.Record)
			if err != nil {
				t.Fatal(err)
			}
			st := run.Snapshots[len(run.Snapshots)-1].Run.Streaming
			if st == nil || st.Goodput == nil || st.Requests == 0 {
				t.Fatalf("run file: streaming %+v", st)
			}
			want := int64(0)
			if tc.all {
				want = st.Requests
			}
			if st.Goodput.Requests != want {
				t.Errorf("goodput %d of %d requests, want %d", st.Goodput.Requests, st.Requests, want)
			}
			if !strings.Contains(stdout, "    Goodput: ") || !strings.Contains(stdout, " met every --slo at once)") {
				t.Errorf("summary:\n%s", stdout)
			}
			b, err := os.ReadFile(c.CSV)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
			for i, h := range head {
				if h == "Request Goodput (requests/sec)" {
					if (row[i] == "0") == tc.all {
						t.Errorf("CSV goodput %s (all good: %v)", row[i], tc.all)
					}
					return
				}
			}
			t.Errorf("CSV has no goodput column: %s", lines[0])
		})
	}
}
