package session_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/trace"
)

// TestMaxInflightCapsTracesAndStages: MaxInflight (--max-inflight) caps
// the requests in flight of a trace's replay and of a plan of stages as
// it caps any open loop's. Requests sent faster than a model that batches
// whatever waits can run them, capped at one in flight, reach the server
// one at a time: it runs as many batches as requests.
func TestMaxInflightCapsTracesAndStages(t *testing.T) {
	t.Parallel()
	burst := filepath.Join(t.TempDir(), "burst.jsonl")
	f, err := os.Create(burst)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w, err := trace.NewWriter(f, trace.Header{StartTime: start})
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		if err := w.Write(trace.Request{Model: "burst"}, start); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*session.Config)
		want uint64
	}{
		{"trace", func(c *session.Config) { c.Shape.Trace = burst }, 8},
		// A ramp to 400/s over 100 ms: 20 requests, 20 ms each at the server.
		{"stages", func(c *session.Config) { c.ModelArgs, c.Shape.Stages = []string{"burst"}, "100ms:400/s" }, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startSimWith(t, batchingModel("burst", 1, 8, 20, 0))
			c := session.Defaults()
			c.URL, c.Tick, c.Headless, c.MaxInflight = srv.GRPCAddr(), quickTick, true, 1
			tc.set(&c)
			runOK(t, c)
			st, err := srv.Engine().ModelStatistics("burst", "")
			if err != nil {
				t.Fatal(err)
			}
			ms := st.GetModelStats()[0]
			if n, e := ms.GetInferenceCount(), ms.GetExecutionCount(); n != tc.want || e != tc.want {
				t.Errorf("the server ran %d inferences in %d executions; capped at one in flight, want %d in %d", n, e, tc.want, tc.want)
			}
		})
	}
}
