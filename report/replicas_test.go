package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// replicaRun is six one-second ticks over two replicas that both report a
// GPU "GPU-0": replica a answers 100 requests a tick at 2 ms; replica b
// 50 at 8 ms, except in ticks 4 and 5, when it is out and answers none.
func replicaRun(t *testing.T) []stats.Snapshot {
	t.Helper()
	agg := stats.NewAggregator(time.Second, 10*time.Second)
	agg.SetEndpoints(2)
	var snaps []stats.Snapshot
	for seq := 1; seq <= 6; seq++ {
		out := seq == 4 || seq == 5
		var batch []driver.Result
		base := time.Duration(seq) * time.Second
		for range 100 {
			batch = append(batch, driver.Result{Scheduled: base, Sent: base, Done: base + 2*time.Millisecond, Inferences: 1})
		}
		if !out {
			for range 50 {
				batch = append(batch, driver.Result{Scheduled: base, Sent: base, Done: base + 8*time.Millisecond, Inferences: 1, Endpoint: 1})
			}
		}
		agg.Add(batch)
		s := stats.Snapshot{Seq: seq, Elapsed: time.Duration(seq) * time.Second, Interval: time.Second,
			Load: stats.Load{Mode: "concurrency", Concurrency: 4}}
		if err := agg.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		s.Replicas[0].URL, s.Replicas[1].URL = "a:8001", "b:8001"
		s.Replicas[0].Up, s.Replicas[1].Up = true, !out
		s.Replicas[0].Server = stats.ServerStats{Available: true, Model: "m", SuccessCount: 100, InferenceCount: 100,
			ExecutionCount: 50, Request: time.Millisecond, Queue: 200 * time.Microsecond, ComputeInfer: 800 * time.Microsecond}
		s.Replicas[0].Metrics = stats.ServerMetrics{Available: true,
			GPUs: []stats.GPU{{UUID: "GPU-0", Utilization: 0.2, HasUtilization: true, Replica: "a:8001"}}}
		if out {
			s.Replicas[1].Server = stats.ServerStats{Model: "m", Err: "connection refused"}
			s.Replicas[1].Metrics = stats.ServerMetrics{Err: "connection refused"}
		} else {
			s.Replicas[1].Server = stats.ServerStats{Available: true, Model: "m", SuccessCount: 50, InferenceCount: 50,
				ExecutionCount: 50, Request: 7 * time.Millisecond, Queue: 5 * time.Millisecond, ComputeInfer: 2 * time.Millisecond}
			s.Replicas[1].Metrics = stats.ServerMetrics{Available: true,
				GPUs: []stats.GPU{{UUID: "GPU-0", Utilization: 0.8, HasUtilization: true, Replica: "b:8001"}}}
		}
		s.Server = stats.AggregateServer([]stats.ServerStats{s.Replicas[0].Server, s.Replicas[1].Server})
		s.Metrics = stats.AggregateMetrics([]stats.ServerMetrics{s.Replicas[0].Metrics, s.Replicas[1].Metrics})
		snaps = append(snaps, s)
	}
	return snaps
}

// TestReplicaSummary: the summary has a block per replica whose counts
// add up to the whole run's, with each replica's own latency, queue and
// GPU, and how long it was in; GPUs of two replicas with one UUID stay
// apart.
func TestReplicaSummary(t *testing.T) {
	h := record.Header{Server: record.ServerInfo{URL: "a:8001,b:8001", Protocol: "gRPC",
		Replicas: []string{"a:8001", "b:8001"}, Balance: "least"}, Model: record.ModelInfo{Name: "m"}}
	sum := Summarize(h, replicaRun(t))
	if len(sum.Replicas) != 2 || sum.Balance != "least" {
		t.Fatalf("replicas %+v, balance %q", sum.Replicas, sum.Balance)
	}
	a, b := sum.Replicas[0], sum.Replicas[1]
	if a.Client.Requests != 600 || b.Client.Requests != 200 || a.Client.Requests+b.Client.Requests != sum.Client.Requests {
		t.Errorf("requests %d + %d, whole run %d", a.Client.Requests, b.Client.Requests, sum.Client.Requests)
	}
	if a.Server.SuccessCount+b.Server.SuccessCount != sum.Server.SuccessCount || b.Server.Ticks != 4 {
		t.Errorf("server successes %d + %d, whole run %d; b measured %d ticks", a.Server.SuccessCount, b.Server.SuccessCount,
			sum.Server.SuccessCount, b.Server.Ticks)
	}
	if a.Client.Latency.P99 != 2*time.Millisecond || b.Client.Latency.P50 != 8*time.Millisecond || a.Approximate || b.Approximate {
		t.Errorf("latency a %+v, b %+v", a.Client.Latency, b.Client.Latency)
	}
	if a.TicksUp != 6 || a.Downs != 0 || b.Ticks != 6 || b.TicksUp != 4 || b.Downs != 1 {
		t.Errorf("a in %d/%d ticks, out %d×; b in %d/%d, out %d×", a.TicksUp, a.Ticks, a.Downs, b.TicksUp, b.Ticks, b.Downs)
	}
	if b.Server.Queue != 5*time.Millisecond || len(b.Metrics.GPUs) != 1 || b.Metrics.GPUs[0].UtilizationAvg != 0.8 {
		t.Errorf("b's server %+v, GPUs %+v", b.Server.ServerStats, b.Metrics.GPUs)
	}
	if g := sum.Metrics.GPUs; len(g) != 2 || g[0].Replica != "a:8001" || g[1].Replica != "b:8001" || g[1].UtilizationAvg != 0.8 {
		t.Errorf("whole run's GPUs %+v", g)
	}

	var text, md bytes.Buffer
	if err := WriteText(&text, sum); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{"Replicas (least outstanding requests)", "a:8001 GPU-0 : 20%", "b:8001 GPU-0 : 80%"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Columns: replica, in, requests, share, infer/s, errors, p50, p99,
	// queue, compute, batch, gpu.
	rows := map[string]string{
		"a:8001": "a:8001 6/6 ticks 600 75.0% 100.0 0 2.00 2.00 0.20 0.80 2.0 20%",
		"b:8001": "b:8001 4/6 ticks, out 1× 200 25.0% 33.3 0 8.00 8.00 5.00 2.00 1.0 80%",
	}
	_, table, _ := strings.Cut(out, "Replicas (")
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && rows[f[0]] != "" {
			if got := strings.Join(f, " "); got != rows[f[0]] {
				t.Errorf("replica row\n got %s\nwant %s", got, rows[f[0]])
			}
			delete(rows, f[0])
		}
	}
	if len(rows) > 0 {
		t.Errorf("summary lacks the rows of %v:\n%s", rows, out)
	}
	if err := WriteMarkdown(&md, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| b:8001 | 4/6 ticks, out 1× | 200 | 25.0% |") {
		t.Errorf("Markdown summary lacks b's row:\n%s", md.String())
	}
}

// TestProgressSaysReplicasUp: the headless line of a replica run says how
// many replicas are in, and names those out.
func TestProgressSaysReplicasUp(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 0, stats.DiagnoseOptions{})
	snaps := replicaRun(t)
	p.Add(snaps[2])
	p.Add(snaps[3])
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "replicas 2/2 up") || !strings.Contains(lines[1], "replicas 1/2 up (b:8001 out)") {
		t.Errorf("progress lines:\n%s", b.String())
	}
}
