package record

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// fleet is the runs of workers that each counted their own results, and
// one aggregator that counted everyone's results with the same ticks: what
// one process driving the whole load would have measured.
type fleet struct {
	runs  []*Run
	names []string
	whole []stats.Snapshot
}

// fleetOptions shape a fleet's results.
type fleetOptions struct {
	workers, ticks int
	decoupled      bool
	ticksOf        func(worker int) int // how many ticks a worker ran (default all)
}

// newFleet runs the workers' aggregators and the whole one over the same
// random results: open loop (scheduled latency), a few errors, and for a
// decoupled model responses timed. Ticks are stepped by threes.
func newFleet(t testing.TB, o fleetOptions) fleet {
	t.Helper()
	const window = 3 * time.Second
	rng := rand.New(rand.NewPCG(1, 2))
	whole := stats.NewAggregator(time.Second, window)
	aggs := make([]*stats.Aggregator, o.workers)
	for w := range aggs {
		aggs[w] = stats.NewAggregator(time.Second, window)
		if o.decoupled {
			aggs[w].SetDecoupled()
		}
	}
	if o.decoupled {
		whole.SetDecoupled()
	}
	f := fleet{runs: make([]*Run, o.workers), names: make([]string, o.workers)}
	for w := range o.workers {
		h := testHeader()
		h.Window = window
		h.Load = stats.Load{Mode: load.Rate, Rate: 30, Distribution: load.Constant}
		h.Worker = &Worker{Index: w, Count: o.workers, Load: stats.Load{Mode: load.Rate, Rate: 30 * float64(o.workers), Distribution: load.Constant}}
		f.runs[w] = &Run{Header: h}
		f.names[w] = "w" + string(rune('0'+w)) + ".jsonl"
	}
	for k := 1; k <= o.ticks; k++ {
		if k > 1 && (k-1)%3 == 0 {
			// A new step: the windows restart, as a collector's do.
			whole.StartLevel()
			for _, a := range aggs {
				a.StartLevel()
			}
		}
		var all []driver.Result
		for w := range o.workers {
			if o.ticksOf != nil && k > o.ticksOf(w) {
				continue
			}
			batch := results(rng, 20+rng.IntN(40), o.decoupled)
			all = append(all, batch...)
			aggs[w].Add(batch)
			s := stats.Snapshot{Seq: k, Interval: time.Second, Elapsed: time.Duration(k) * time.Second,
				// Workers' clocks and tick ends differ by a few ms.
				Time: statstest.T0.Add(time.Duration(k)*time.Second + time.Duration(w)*3*time.Millisecond),
				Load: stats.Load{Mode: load.Rate, Rate: 30, Distribution: load.Constant, InFlight: w + 1, Step: (k - 1) / 3},
				// Each worker reads the same server; only worker 0's reading
				// of even ticks failed.
				Server:  stats.ServerStats{Available: !(w == 0 && k%2 == 0), SuccessCount: int64(1000*k + w), Queue: time.Duration(k) * time.Millisecond},
				Metrics: stats.ServerMetrics{Available: true, GPUs: []stats.GPU{{UUID: "GPU-0", Utilization: float64(w) / 10, HasUtilization: true}}},
				System:  stats.SystemStats{ProcessCPU: 0.25 * float64(w+1), HostCPU: 0.1 * float64(w+1), NumCPU: 4},
			}
			if err := aggs[w].Tick(time.Second, true, &s); err != nil {
				t.Fatal(err)
			}
			f.runs[w].Snapshots = append(f.runs[w].Snapshots, s)
		}
		var s stats.Snapshot
		whole.Add(all)
		if err := whole.Tick(time.Second, true, &s); err != nil {
			t.Fatal(err)
		}
		f.whole = append(f.whole, s)
	}
	// Each worker's measured steps, from its own ticks, as a stepped run
	// makes them.
	for w, r := range f.runs {
		var cur []stats.Snapshot
		flush := func() {
			if len(cur) == 0 {
				return
			}
			st := stepOf(cur)
			st.Measurement = &Measurement{Index: cur[0].Load.Step, Fixed: true, WindowTicks: 1, Windows: 3, Trials: 3,
				Stable: !(w == 1 && cur[0].Load.Step == 1)}
			r.Steps = append(r.Steps, st)
			cur = nil
		}
		for _, s := range r.Snapshots {
			if len(cur) > 0 && cur[0].Load.Step != s.Load.Step {
				flush()
			}
			cur = append(cur, s)
		}
		flush()
	}
	return f
}

// stepOf is a step of ticks: counters added, latency merged.
func stepOf(ticks []stats.Snapshot) Step {
	var c stats.ClientStats
	var lat stats.LatencyMerge
	for _, s := range ticks {
		t := s.Tick
		c.Add(&t)
		lat.Add(t.Latency, s.Histogram)
	}
	c.SetRates()
	c.Latency, _ = lat.Latency()
	l := ticks[0].Load
	return Step{Load: l, FirstSeq: ticks[0].Seq, LastSeq: ticks[len(ticks)-1].Seq, Ticks: len(ticks),
		Duration: c.Duration, Client: c, Server: ServerSummary{Ticks: len(ticks), ServerStats: ticks[0].Server}}
}

// results are n random finished requests: latencies spread over three
// decades, one in ten failed, some sent late.
func results(rng *rand.Rand, n int, decoupled bool) []driver.Result {
	out := make([]driver.Result, n)
	for i := range out {
		sched := time.Duration(rng.IntN(900)) * time.Millisecond
		late := time.Duration(rng.IntN(3)) * time.Millisecond
		lat := time.Duration(200+rng.ExpFloat64()*5000) * time.Microsecond
		r := driver.Result{Scheduled: sched, Sent: sched + late, Done: sched + late + lat, Inferences: 1,
			BytesSent: 100, BytesReceived: 50, Late: late > time.Millisecond}
		if rng.IntN(10) == 0 {
			r.Code, r.Err = codes.Unavailable, errors.New("unavailable")
			if rng.IntN(2) == 0 {
				r.Code, r.Err = codes.ResourceExhausted, errors.New("queue full")
			}
		}
		if decoupled && r.Code == codes.OK {
			r.Decoupled = true
			r.Responses = int32(1 + rng.IntN(20))
			r.Timing = &driver.ResponseTiming{First: time.Duration(100+rng.IntN(900)) * time.Microsecond}
			for range r.Responses - 1 {
				r.Timing.Gaps = append(r.Timing.Gaps, time.Duration(10+rng.IntN(90))*time.Microsecond)
			}
		}
		out[i] = r
	}
	return out
}

func decode(t *testing.T, s string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := stats.DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sameClient checks that merged client stats are what one process
// counting every result got: counters, rates and distributions exactly
// (the mean within the nanoseconds that each level's rounding of a mean to
// whole nanoseconds costs: the worker's tick, the merged tick, the sum).
func sameClient(t *testing.T, where string, got, want stats.ClientStats) {
	t.Helper()
	if got.Requests != want.Requests || got.Successes != want.Successes || got.Errors != want.Errors ||
		got.Inferences != want.Inferences || got.Late != want.Late || got.BytesSent != want.BytesSent ||
		got.BytesReceived != want.BytesReceived || got.Duration != want.Duration {
		t.Errorf("%s: counters %+v, want %+v", where, got, want)
	}
	if got.RequestsPerS != want.RequestsPerS || got.InferPerS != want.InferPerS || got.LateShare != want.LateShare {
		t.Errorf("%s: rates %v %v %v, want %v %v %v", where, got.RequestsPerS, got.InferPerS, got.LateShare,
			want.RequestsPerS, want.InferPerS, want.LateShare)
	}
	if len(got.ErrorsByCode) != len(want.ErrorsByCode) {
		t.Errorf("%s: errors %v, want %v", where, got.ErrorsByCode, want.ErrorsByCode)
	}
	for i := range min(len(got.ErrorsByCode), len(want.ErrorsByCode)) {
		if g, w := got.ErrorsByCode[i], want.ErrorsByCode[i]; g.Code != w.Code || g.Count != w.Count {
			t.Errorf("%s: errors %v, want %v", where, got.ErrorsByCode, want.ErrorsByCode)
		}
	}
	sameLatency(t, where+" latency", got.Latency, want.Latency)
	if (got.Scheduled == nil) != (want.Scheduled == nil) {
		t.Fatalf("%s: scheduled %v, want %v", where, got.Scheduled, want.Scheduled)
	}
	if got.Scheduled != nil {
		sameLatency(t, where+" scheduled", *got.Scheduled, *want.Scheduled)
	}
	if (got.Streaming == nil) != (want.Streaming == nil) {
		t.Fatalf("%s: streaming %v, want %v", where, got.Streaming, want.Streaming)
	}
	if g, w := got.Streaming, want.Streaming; g != nil {
		sameLatency(t, where+" ttft", g.TTFT, w.TTFT)
		sameLatency(t, where+" itl", g.ITL, w.ITL)
		if g.Requests != w.Requests || g.Responses != w.Responses || g.ResponsesPerS != w.ResponsesPerS {
			t.Errorf("%s: streaming counts %+v, want %+v", where, g, w)
		}
		gp, wp := g.PerRequest, w.PerRequest
		if gp.Count != wp.Count || gp.Min != wp.Min || gp.Max != wp.Max || gp.P50 != wp.P50 || gp.P99 != wp.P99 ||
			gp.P999 != wp.P999 || gp.Mean-wp.Mean > 1e-9 || wp.Mean-gp.Mean > 1e-9 {
			t.Errorf("%s: responses per request %+v, want %+v", where, gp, wp)
		}
	}
}

func sameLatency(t *testing.T, where string, got, want stats.Latency) {
	t.Helper()
	mean := got.Mean - want.Mean
	if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max || mean.Abs() > 3*time.Nanosecond ||
		got.P50 != want.P50 || got.P90 != want.P90 || got.P95 != want.P95 || got.P99 != want.P99 || got.P999 != want.P999 {
		t.Errorf("%s: %+v, want %+v", where, got, want)
	}
}

// Merging the workers' runs gives, tick by tick, exactly what one process
// counting every result measured: the tick, the window and the whole run,
// with the histograms themselves equal bucket by bucket.
func TestMergeIsExact(t *testing.T) {
	t.Parallel()
	for _, decoupled := range []bool{false, true} {
		f := newFleet(t, fleetOptions{workers: 3, ticks: 10, decoupled: decoupled})
		merged, err := Merge(f.runs, f.names)
		if err != nil {
			t.Fatal(err)
		}
		if len(merged.Snapshots) != len(f.whole) {
			t.Fatalf("%d merged ticks, want %d", len(merged.Snapshots), len(f.whole))
		}
		for i, s := range merged.Snapshots {
			w := f.whole[i]
			where := "tick " + strconv.Itoa(s.Seq)
			sameClient(t, where, s.Tick, w.Tick)
			sameClient(t, where+" window", s.Window, w.Window)
			sameClient(t, where+" run", s.Run, w.Run)
			for _, pair := range [][2]string{{s.Histogram, w.Histogram}, {s.ScheduledHistogram, w.ScheduledHistogram},
				{s.TTFTHistogram, w.TTFTHistogram}, {s.ITLHistogram, w.ITLHistogram}, {s.ResponsesHistogram, w.ResponsesHistogram}} {
				if !decode(t, pair[0]).Equals(decode(t, pair[1])) {
					t.Errorf("%s: a merged histogram differs from the one holding every result", where)
				}
			}
		}
	}
}

// Loads add, the server's account is one worker's (never a sum), client
// CPU adds up, and the header says what was merged.
func TestMergeLoadServerAndHeader(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{workers: 3, ticks: 6})
	// Given out of order: the merge orders them by worker.
	runs := []*Run{f.runs[2], f.runs[0], f.runs[1]}
	names := []string{f.names[2], f.names[0], f.names[1]}
	merged, err := Merge(runs, names)
	if err != nil {
		t.Fatal(err)
	}
	h := merged.Header
	if h.Worker != nil || h.Merged == nil || h.Merged.Count != 3 || len(h.Merged.Workers) != 3 ||
		h.Merged.Workers[0] != 0 || h.Merged.Files[2] != "w2.jsonl" {
		t.Errorf("header says worker %+v, merged %+v", h.Worker, h.Merged)
	}
	if h.Load.Rate != 90 || h.Load.Mode != load.Rate {
		t.Errorf("header load %+v, want rate 90", h.Load)
	}
	for _, s := range merged.Snapshots {
		if s.Load.Rate != 90 || s.Load.InFlight != 1+2+3 {
			t.Errorf("tick %d: load %+v, want rate 90 and 6 in flight", s.Seq, s.Load)
		}
		// Worker 0 read the server on odd ticks; worker 1 on even ones.
		want := int64(1000 * s.Seq)
		if s.Seq%2 == 0 {
			want++
		}
		if !s.Server.Available || s.Server.SuccessCount != want {
			t.Errorf("tick %d: server success count %d, want %d: one worker's reading, not a sum", s.Seq, s.Server.SuccessCount, want)
		}
		if len(s.Metrics.GPUs) != 1 || s.Metrics.GPUs[0].Utilization != 0 {
			t.Errorf("tick %d: metrics %+v, want worker 0's", s.Seq, s.Metrics)
		}
		if s.System.ProcessCPU != 0.25+0.5+0.75 || s.System.NumCPU != 12 {
			t.Errorf("tick %d: client CPU %+v, want 1.5 cores of 12", s.Seq, s.System)
		}
		if d := s.System.HostCPU - 0.2; d > 1e-12 || d < -1e-12 {
			t.Errorf("tick %d: host CPU %v, want the hosts' average 0.2", s.Seq, s.System.HostCPU)
		}
	}
}

// Measured steps merge by index: loads add, numbers come from the merged
// ticks exactly, a step is stable only if every worker's was.
func TestMergeSteps(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{workers: 3, ticks: 9})
	merged, err := Merge(f.runs, f.names)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Steps) != 3 {
		t.Fatalf("%d merged steps, want 3", len(merged.Steps))
	}
	for i, st := range merged.Steps {
		want := stepOf(f.whole[3*i : 3*i+3])
		if st.FirstSeq != 3*i+1 || st.LastSeq != 3*i+3 || st.Ticks != 3 || st.Load.Rate != 90 || st.Load.Step != i {
			t.Errorf("step %d: seqs %d..%d, %d ticks, load %+v", i, st.FirstSeq, st.LastSeq, st.Ticks, st.Load)
		}
		if st.Approximate {
			t.Errorf("step %d is approximate", i)
		}
		sameLatency(t, "step latency", st.Client.Latency, want.Client.Latency)
		if st.Client.Requests != want.Client.Requests || st.Client.RequestsPerS != want.Client.RequestsPerS {
			t.Errorf("step %d: %d requests at %v/s, want %d at %v/s", i, st.Client.Requests, st.Client.RequestsPerS,
				want.Client.Requests, want.Client.RequestsPerS)
		}
		m := st.Measurement
		if m == nil || m.Index != i || !m.Fixed || m.Stable != (i != 1) {
			t.Errorf("step %d: measurement %+v, want stable unless a worker's step was not", i, m)
		}
		if st.ClientCPU.AvgCores != 1.5 {
			t.Errorf("step %d: client CPU %+v, want the fleet's 1.5 cores", i, st.ClientCPU)
		}
	}
}

// A worker whose run ended early (killed) leaves the others' ticks merged
// without it.
func TestMergeShorterWorker(t *testing.T) {
	f := newFleet(t, fleetOptions{workers: 2, ticks: 5, ticksOf: func(w int) int { return 5 - 2*w }})
	merged, err := Merge(f.runs, f.names)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Snapshots) != 5 {
		t.Fatalf("%d ticks, want 5", len(merged.Snapshots))
	}
	for i, s := range merged.Snapshots {
		sameClient(t, "tick", s.Tick, f.whole[i].Tick)
		sameClient(t, "run", s.Run, f.whole[i].Run)
		// Worker 1 ran 3 ticks of the 5.
		want := 60.0
		if s.Seq > 3 {
			want = 30
		}
		if s.Load.Rate != want {
			t.Errorf("tick %d: rate %v, want %v", s.Seq, s.Load.Rate, want)
		}
	}
}

// Runs that are not the workers of one run are refused, each with one
// line that says why.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(runs []*Run)
		want   string
	}{
		{"not a worker", func(r []*Run) { r[1].Header.Worker = nil }, "w1.jsonl is not a worker's run file"},
		{"other model", func(r []*Run) { r[1].Header.Model.Name = "bert" }, "model \"bert\""},
		{"other version", func(r []*Run) { r[2].Header.Model.Version = "2" }, "version 2"},
		{"other server", func(r []*Run) { r[1].Header.Server.URL = "10.0.0.9:8001" }, "10.0.0.9:8001"},
		{"other tick", func(r []*Run) { r[1].Header.Interval = 500 * time.Millisecond }, "every 500ms"},
		{"other worker count", func(r []*Run) { r[2].Header.Worker.Count = 4 }, "worker 2 of 4"},
		{"started apart", func(r []*Run) { r[1].Header.StartTime = r[1].Header.StartTime.Add(1500 * time.Millisecond) }, "more than a tick"},
		{"same worker twice", func(r []*Run) { r[2].Header.Worker.Index = 0 }, "w0.jsonl and w2.jsonl are both worker 0 of 3"},
		{"steps apart", func(r []*Run) { r[1].Snapshots[3].Load.Step = 7 }, "steps do not line up"},
		{"ticks apart", func(r []*Run) { r[2].Snapshots[4].Time = r[2].Snapshots[4].Time.Add(2 * time.Second) }, "ticks do not line up"},
		{"garbled histogram", func(r []*Run) { r[1].Snapshots[2].Histogram = "!!" }, "tick 3: latency histogram"},
		{"other model of 10 MB", func(r []*Run) { r[1].Header.Model.Name = strings.Repeat("m", 10<<20) }, `"mmmm`},
		{"other version of 10 MB", func(r []*Run) { r[2].Header.Model.Version = strings.Repeat("9", 10<<20) }, "version 9999"},
		{"other server of 10 MB", func(r []*Run) { r[1].Header.Server.URL = strings.Repeat("h", 10<<20) }, "hhhh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFleet(t, fleetOptions{workers: 3, ticks: 6})
			c.change(f.runs)
			_, err := Merge(f.runs, f.names)
			if err == nil {
				t.Fatal("merged")
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || len(msg) > 1<<10 {
				t.Errorf("error %.300q, want one line under 1 KiB with %q", msg, c.want)
			}
		})
	}
	if _, err := Merge(nil, nil); err == nil {
		t.Error("merged nothing")
	}
}

// BenchmarkMerge merges three workers' runs of 300 one-second ticks: the
// cost of tritontop merge per five minutes of a three-worker run.
func BenchmarkMerge(b *testing.B) {
	f := newFleet(b, fleetOptions{workers: 3, ticks: 300})
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge(f.runs, f.names); err != nil {
			b.Fatal(err)
		}
	}
}
