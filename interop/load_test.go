package interop_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/trace"
)

// TestOpenLoop runs tritontop's open loop against a real Triton's
// identity_int32 at 200 requests a second for a second, at constant
// intervals over HTTP and at Poisson arrivals over gRPC. Each run's
// counts, server times and batches are Triton's (checkExact); its load is
// the rate and distribution asked for; it sent about the rate's requests
// (never more than the rate allows over the run with the first request at
// once; at least a quarter of them, as a host that stalls the client for
// half the run still sends); and every request's latency from its schedule is at
// least its latency from its send.
func TestOpenLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		protocol, distribution string
	}{{"http", "constant"}, {"grpc", "poisson"}} {
		t.Run(tc.distribution+"-"+tc.protocol, func(t *testing.T) {
			t.Parallel()
			wallTime(t)
			srv := interop.Start(t, interop.Options{Models: []string{identity}})
			const rate = 200.0
			c := configFor(srv, tc.protocol, identity)
			c.RequestRate, c.Distribution, c.Shapes = rate, tc.distribution, []string{"INPUT0:16"}
			run, d, _ := measure(t, srv, identity, c)
			sum := run.Summary
			checkExact(t, "the run", sum.Client, sum.Server, d)
			if l := sum.Load; l.Mode != load.Rate || l.Rate != rate || string(l.Distribution) != tc.distribution {
				t.Errorf("load %+v, want rate %v %s", l, rate, tc.distribution)
			}
			// A constant schedule sends request n at n/rate from the start:
			// at most rate × the run's length + 1 (a second, unless a busy
			// host fired the end late); Poisson arrivals vary around that
			// (a standard deviation of 14 at 200), so they get room above.
			most := int64(rate*sum.Duration.Seconds()) + 1
			if tc.distribution == "poisson" {
				most += 70
			}
			if n := sum.Client.Requests; n < int64(rate*c.Duration.Seconds())/4 || n > most {
				t.Errorf("%d requests in %v (a run of %v) at %v/s", n, c.Duration, sum.Duration, rate)
			}
			if s := sum.Client.Scheduled; s == nil || s.Count != sum.Client.Successes || s.Max < sum.Client.Latency.Max || s.Mean < sum.Client.Latency.Mean {
				t.Errorf("latency from the schedule %+v, from the send %+v", s, sum.Client.Latency)
			}
		})
	}
}

// TestStages runs a rate plan (Shape.Stages) against a real Triton: 100/s
// held for half a second, then a ramp to 300/s over half a second. The
// pacer sends request n when the plan's integral reaches n, so the plan
// asks for 50 + 100 = 150 requests, the first at once: Triton counts
// exactly what tritontop sent, which is those 150 (or 151, the last due
// at the plan's very end), and the run file keeps the plan, its ticks the
// plan's rate over them, which climbs over the ramp.
func TestStages(t *testing.T) {
	t.Parallel()
	wallTime(t)
	srv := interop.Start(t, interop.Options{Models: []string{identity}})
	c := configFor(srv, "grpc", identity)
	c.Duration, c.Shapes = 0, []string{"INPUT0:16"}
	c.Shape.Stages = "0s:100/s,500ms:100/s,500ms:300/s"
	run, d, _ := measure(t, srv, identity, c)
	sum := run.Summary
	checkExact(t, "the run", sum.Client, sum.Server, d)
	if n := sum.Client.Requests; n < 150 || n > 151 {
		t.Errorf("%d requests sent; the plan asks for 150", n)
	}
	if p := run.Header.Plan; p == nil || p.Mode != load.Rate || p.Planned != 150 || p.Duration != time.Second {
		t.Errorf("the run file's plan: %+v; want 150 requests in a second", p)
	}
	var planned float64
	for _, s := range run.Snapshots {
		planned = max(planned, s.Load.Planned)
	}
	// A tick's planned rate is the plan's mean over the tick: one over
	// the ramp is over the 100/s it starts from, however the ticks fall.
	if planned <= 100 || planned > 300 {
		t.Errorf("the ticks' planned rate reached %v/s; the ramp goes from 100/s to 300/s", planned)
	}
}

// TestTraceReplay replays a trace in tritontop's JSONL format against a
// real Triton: 40 requests of identity_int32 in 400 ms, of three shapes
// (batch 1 of 16, batch 2 of 8, batch 4 of 4 elements). Triton serves
// each as recorded: it counts the 40 requests, and as many inferences as
// their batches add up to; tritontop's counts are Triton's.
func TestTraceReplay(t *testing.T) {
	t.Parallel()
	wallTime(t)
	srv := interop.Start(t, interop.Options{Models: []string{identity}})
	shapes := [][]int64{{1, 16}, {2, 8}, {4, 4}}
	var reqs []trace.Request
	var inferences int64
	for i := range 40 {
		sh := shapes[i%len(shapes)]
		inferences += sh[0]
		reqs = append(reqs, trace.Request{AtUS: float64(i) * 10_000, Model: identity, Protocol: "grpc",
			Inputs: []trace.Input{{Name: "INPUT0", Datatype: "INT32", Shape: sh, Bytes: 4 * sh[0] * sh[1]}}})
	}
	file := writeTrace(t, reqs)
	c := configFor(srv, "grpc", identity)
	c.Duration, c.Model, c.Shape.Trace = 0, "", file
	run, d, _ := measure(t, srv, identity, c)
	sum := run.Summary
	checkExact(t, "the replay", sum.Client, sum.Server, d)
	if d.Inference.Success.Count != 40 || d.InferenceCount != uint64(inferences) {
		t.Errorf("Triton served %d requests, %d inferences; the trace has 40 requests of %d inferences",
			d.Inference.Success.Count, d.InferenceCount, inferences)
	}
	if run.Header.Model.Name != identity {
		t.Errorf("the run's model is %q, the trace's %q", run.Header.Model.Name, identity)
	}
	if p := run.Header.Plan; p == nil || p.Trace == nil || p.Planned != 40 {
		t.Errorf("the run file's plan: %+v; want the trace's 40 requests", p)
	}
}

// writeTrace writes reqs as a tritontop trace (a header line, then a line
// a request) in the test's directory and returns its path.
func writeTrace(t *testing.T, reqs []trace.Request) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	if err := enc.Encode(trace.Header{Version: trace.Version, StartTime: time.Now().UTC(), Source: "interop test"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

// stepLoads lists a run's load levels, for a log.
func stepLoads(steps []record.Step) string {
	s := ""
	for _, st := range steps {
		s += fmt.Sprintf("[%s c%d r%v: %d requests] ", st.Load.Mode, st.Load.Concurrency, st.Load.Rate, st.Client.Requests)
	}
	return s
}
