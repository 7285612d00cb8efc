package stats

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
)

// healthyTick is one second at concurrency 8 against a server with room:
// 800 requests at 10 ms, of which Triton spends 9 ms (0.5 queue, 8 compute),
// one GPU at 60%, tritontop at a tenth of a core of 4.
func healthyTick(seq int) Snapshot {
	return Snapshot{
		Seq: seq, Interval: time.Second,
		Load: Load{Mode: load.Concurrency, Concurrency: 8, InFlight: 8},
		Tick: ClientStats{Duration: time.Second, Requests: 800, Successes: 800, Inferences: 800,
			RequestsPerS: 800, InferPerS: 800,
			Latency: Latency{Count: 800, Mean: 10 * time.Millisecond, P50: 10 * time.Millisecond, P99: 14 * time.Millisecond}},
		Server: ServerStats{Available: true, SuccessCount: 800, InferenceCount: 800, ExecutionCount: 200, AvgBatch: 4,
			Request: 9 * time.Millisecond, Queue: 500 * time.Microsecond, ComputeInfer: 8 * time.Millisecond},
		Metrics: ServerMetrics{Available: true, GPUs: []GPU{{UUID: "GPU-0", Utilization: 0.6, HasUtilization: true}}},
		System:  SystemStats{ProcessCPU: 0.1, HostCPU: 0.2, NumCPU: 4},
	}
}

func ticks(n int, change func(i int, s *Snapshot)) []Snapshot {
	var out []Snapshot
	for i := range n {
		s := healthyTick(i + 1)
		if change != nil {
			change(i, &s)
		}
		out = append(out, s)
	}
	return out
}

func verdicts(fs []Finding) []Verdict {
	var v []Verdict
	for _, f := range fs {
		v = append(v, f.Verdict)
	}
	return v
}

func TestDiagnoseHealthyRunSaysNothing(t *testing.T) {
	if fs := Diagnose(ticks(10, nil), DiagnoseOptions{}); len(fs) != 0 {
		t.Errorf("healthy run diagnosed %+v", fs)
	}
	if fs := Diagnose(nil, DiagnoseOptions{}); fs != nil {
		t.Errorf("no ticks diagnosed %+v", fs)
	}
}

func TestDiagnoseEachVerdict(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   DiagnoseOptions
		change func(i int, s *Snapshot)
		want   Verdict
		words  string
	}{
		{name: "unreachable", want: Unreachable, words: "unreachable", change: func(i int, s *Snapshot) {
			s.Server, s.Metrics = ServerStats{}, ServerMetrics{}
			s.Tick = ClientStats{Duration: time.Second, Requests: 40, Errors: 40,
				ErrorsByCode: []ErrorCount{{Code: "UNAVAILABLE", Count: 40, Message: "connection refused"}}}
		}},
		{name: "stalled", want: Stalled, words: "8 requests in flight", change: func(i int, s *Snapshot) {
			if i == 9 {
				s.Tick = ClientStats{Duration: time.Second}
				s.Server = ServerStats{Available: true}
			}
		}},
		{name: "errors", want: Failing, words: "5% of requests fail (INTERNAL: boom)", change: func(i int, s *Snapshot) {
			s.Tick.Errors, s.Tick.Requests = 40, 800
			s.Tick.Successes = 760
			s.Tick.ErrorsByCode = []ErrorCount{{Code: "INTERNAL", Count: 40, Message: "boom"}}
		}},
		{name: "client process", want: ClientBound, words: "3.8 of 4 cores", change: func(i int, s *Snapshot) {
			s.System.ProcessCPU = 3.8
		}},
		{name: "client host", want: ClientBound, words: "97% CPU busy", change: func(i int, s *Snapshot) {
			s.System.HostCPU = 0.97
		}},
		{name: "client cores", want: ClientBound, words: "client cores 0-1 near full: 96% busy", change: func(i int, s *Snapshot) {
			s.System.HostCPU, s.System.HostCPUs = 0.96, "0-1"
		}},
		{name: "falling behind", want: FallingBehind, words: "800 req/s sent of 1000 offered", change: func(i int, s *Snapshot) {
			s.Load = Load{Mode: load.Rate, Rate: 1000, Distribution: load.Constant, InFlight: 30}
			s.Tick.Late = 40
			s.Tick.SetRates()
		}},
		{name: "late sends", want: FallingBehind, words: "10% of sends late", change: func(i int, s *Snapshot) {
			s.Load = Load{Mode: load.Rate, Rate: 800, Distribution: load.Constant}
			s.Tick.Late = 80
			s.Tick.SetRates()
		}},
		{name: "late sends, late by a part of the latency", want: FallingBehind,
			words: "10% of sends late, by 0.50 ms on average (5% of the latency from the schedule)", change: func(i int, s *Snapshot) {
				s.Load = Load{Mode: load.Rate, Rate: 800, Distribution: load.Constant}
				s.Tick.Late = 80
				s.Tick.Scheduled = &Latency{Count: 800, Mean: 10500 * time.Microsecond}
				s.Tick.SetRates()
			}},
		{name: "queue longer than compute", want: Queueing, words: "wait 12.0 ms in Triton's queue, longer than the 8.00 ms", change: func(i int, s *Snapshot) {
			s.Server.Queue = 12 * time.Millisecond
			s.Server.Request = 20500 * time.Microsecond
			s.Tick.Latency.Mean = 21 * time.Millisecond
		}},
		{name: "queue rising", want: Queueing, words: "rises 0.50 ms → 3.00 ms while compute stays 8.00 ms", change: func(i int, s *Snapshot) {
			if i >= 5 {
				s.Server.Queue = 3 * time.Millisecond
				s.Server.Request = 11500 * time.Microsecond
				s.Tick.Latency.Mean = 12 * time.Millisecond
			}
		}},
		{name: "gpu", want: ComputeBound, words: "GPU 0 at its ceiling: 98% busy", change: func(i int, s *Snapshot) {
			s.Metrics.GPUs[0].Utilization = 0.98
		}},
		{name: "outside triton", want: OutsideTriton, words: "86.0 ms of the 95.0 ms client latency (91%)", change: func(i int, s *Snapshot) {
			s.Tick.Latency.Mean = 95 * time.Millisecond
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := Diagnose(ticks(10, c.change), c.opts)
			if !slices.Contains(verdicts(fs), c.want) {
				t.Fatalf("verdicts %v, want %s", verdicts(fs), c.want)
			}
			for _, f := range fs {
				if f.Verdict == c.want && !strings.Contains(f.Message, c.words) {
					t.Errorf("%s: message %q lacks %q", c.want, f.Message, c.words)
				}
			}
		})
	}
}

// TestDiagnoseLastsAsLongAsTheCondition: a verdict follows its condition
// tick by tick, and a shared process is no evidence against the client.
func TestDiagnoseLastsAsLongAsTheCondition(t *testing.T) {
	run := ticks(30, func(i int, s *Snapshot) {
		if i >= 10 && i < 20 {
			s.Metrics.GPUs[0].Utilization = 0.99
		}
	})
	for end := 1; end <= len(run); end++ {
		got := slices.Contains(verdicts(Diagnose(run[:end], DiagnoseOptions{})), ComputeBound)
		// The mean over the last five ticks crosses 95% once all five are at 99%.
		want := end >= 15 && end <= 20
		if got != want {
			t.Errorf("after tick %d: GPU verdict %v, want %v", end, got, want)
		}
	}
	busy := ticks(5, func(i int, s *Snapshot) { s.System.ProcessCPU = 3.9 })
	if fs := Diagnose(busy, DiagnoseOptions{SharedProcess: true}); slices.Contains(verdicts(fs), ClientBound) {
		t.Errorf("shared process called client-bound: %+v", fs)
	}
}

// TestDiagnoseLongRequestsAreNotAStall: a decoupled model's requests run
// for many ticks; a tick in which none ended while the model kept sending
// responses is work, not a stall. One without responses still is.
func TestDiagnoseLongRequestsAreNotAStall(t *testing.T) {
	generating := ticks(10, func(i int, s *Snapshot) {
		if i == 9 {
			s.Tick = ClientStats{Duration: time.Second, Streaming: &StreamingStats{}}
			s.Server = ServerStats{Available: true, Responses: &ServerResponses{Success: 640}}
		}
	})
	if v := verdicts(Diagnose(generating, DiagnoseOptions{})); slices.Contains(v, Stalled) {
		t.Errorf("a model sending responses was diagnosed %v", v)
	}
	generating[9].Server.Responses = &ServerResponses{}
	if v := verdicts(Diagnose(generating, DiagnoseOptions{})); !slices.Contains(v, Stalled) {
		t.Errorf("a model sending nothing was diagnosed %v", v)
	}
}

// TestDiagnoseFallingBehindAtLowRates: a shortfall of finished requests is
// falling behind only when the offered rate brings enough requests to
// count; rates under 10 read with their figures, not rounded to 0.
func TestDiagnoseFallingBehindAtLowRates(t *testing.T) {
	at := func(rate float64, finished int64) []Snapshot {
		return ticks(10, func(i int, s *Snapshot) {
			s.Load = Load{Mode: load.Rate, Rate: rate, Distribution: load.Constant}
			s.Tick.Requests, s.Tick.Successes, s.Tick.Latency.Count = finished, finished, finished
			s.Tick.Late = finished / 2
			s.Tick.SetRates()
		})
	}
	// 0.5/s over the window is a few requests: one short is chance.
	if fs := Diagnose(at(0.5, 0), DiagnoseOptions{}); slices.Contains(verdicts(fs), FallingBehind) {
		t.Errorf("0.5 req/s offered, none finished in a tick: diagnosed %+v", fs)
	}
	fs := Diagnose(at(8.5, 3), DiagnoseOptions{})
	found := false
	for _, f := range fs {
		if f.Verdict == FallingBehind {
			found = true
			if !strings.Contains(f.Message, "3 req/s sent of 8.5 offered") {
				t.Errorf("message %q", f.Message)
			}
		}
	}
	if !found {
		t.Errorf("8.5 req/s offered, 3 finished a second: verdicts %v, want falling behind", verdicts(fs))
	}
}

// TestDiagnoseStartsAfreshAtEachLevel: the ticks of an earlier level (a
// closed loop with most of its latency outside Triton and the client host
// full), and the paused ticks while its requests finished, are not blamed
// on the open-loop level that follows, which keeps up from its first tick.
// Queueing still compares across the change, since that is how a knee shows.
func TestDiagnoseStartsAfreshAtEachLevel(t *testing.T) {
	run := ticks(10, func(i int, s *Snapshot) {
		switch {
		case i < 6:
			s.Load = Load{Mode: load.Concurrency, Concurrency: 256, InFlight: 256, Step: 1}
			s.Tick.Latency.Mean = 95 * time.Millisecond
			s.System.HostCPU = 0.97
		case i < 8:
			s.Load = Load{Mode: load.Rate, Rate: 400, Distribution: load.Constant, Paused: true, Step: 2}
			s.Tick.Requests, s.Tick.Successes, s.Tick.Latency.Count = 0, 0, 0
			s.Server.SuccessCount = 0
		default:
			s.Load = Load{Mode: load.Rate, Rate: 800, Distribution: load.Constant, InFlight: 8, Step: 2}
		}
	})
	if v := verdicts(Diagnose(run[:6], DiagnoseOptions{})); !slices.Contains(v, OutsideTriton) || !slices.Contains(v, ClientBound) {
		t.Fatalf("the closed loop's own ticks were diagnosed %v, want outside Triton and client-bound", v)
	}
	for end := 9; end <= len(run); end++ {
		if fs := Diagnose(run[:end], DiagnoseOptions{}); len(fs) != 0 {
			t.Errorf("after tick %d, the new level diagnosed %+v", end, fs)
		}
	}
	knee := ticks(10, func(i int, s *Snapshot) {
		if i >= 5 {
			s.Load.Concurrency, s.Load.Step = 16, 2
			s.Server.Queue = 3 * time.Millisecond
			s.Server.Request = 11500 * time.Microsecond
			s.Tick.Latency.Mean = 12 * time.Millisecond
		}
	})
	if v := verdicts(Diagnose(knee, DiagnoseOptions{})); !slices.Contains(v, Queueing) {
		t.Errorf("queue rising across a load change diagnosed %v, want queueing", v)
	}
}

// TestDiagnoseSaturatedServerIsNotTheClient: an open loop over the server's
// capacity sends every request on time while fewer finish and the rest wait
// in Triton's queue. The shortfall of finished requests, and sends late
// behind the growing backlog, are the server's limit, not the client's;
// the same lateness with the client host near full, or without a backlog,
// still is the client's.
func TestDiagnoseSaturatedServerIsNotTheClient(t *testing.T) {
	saturated := func(late int64, hostCPU float64) []Snapshot {
		return ticks(10, func(i int, s *Snapshot) {
			s.Load = Load{Mode: load.Rate, Rate: 1000, Distribution: load.Constant, InFlight: 200 * (i + 1)}
			s.Tick.Late = late
			s.Tick.SetRates()
			s.Server.Queue = 40 * time.Millisecond
			s.Server.Request = 48 * time.Millisecond
			s.Tick.Latency.Mean = 49 * time.Millisecond
			s.System.HostCPU = hostCPU
		})
	}
	v := verdicts(Diagnose(saturated(0, 0.5), DiagnoseOptions{}))
	if slices.Contains(v, FallingBehind) || !slices.Contains(v, Queueing) {
		t.Errorf("800 of 1000 req/s finished, the other 200 queued: verdicts %v, want queueing and no falling behind", v)
	}
	fs := Diagnose(saturated(100, 0.5), DiagnoseOptions{})
	if v := verdicts(fs); slices.Contains(v, FallingBehind) || !slices.Contains(v, Queueing) {
		t.Errorf("late sends behind a growing backlog: verdicts %v, want queueing only", v)
	}
	for _, f := range fs {
		if f.Verdict == Queueing && !strings.Contains(f.Message, "12% of sends late behind a backlog of 1000 more requests in flight") {
			t.Errorf("the queueing verdict does not say the sends were late: %q", f.Message)
		}
	}
	if v := verdicts(Diagnose(saturated(100, 0.97), DiagnoseOptions{})); !slices.Contains(v, ClientBound) || !slices.Contains(v, FallingBehind) {
		t.Errorf("late sends on a full client host: verdicts %v, want client-bound and falling behind", v)
	}
	steady := ticks(10, func(i int, s *Snapshot) {
		s.Load = Load{Mode: load.Rate, Rate: 800, Distribution: load.Constant, InFlight: 30}
		s.Tick.Late = 100
		s.Tick.SetRates()
		s.Server.Queue = 12 * time.Millisecond
		s.Server.Request = 20500 * time.Microsecond
		s.Tick.Latency.Mean = 21 * time.Millisecond
	})
	if v := verdicts(Diagnose(steady, DiagnoseOptions{})); !slices.Contains(v, FallingBehind) {
		t.Errorf("late sends with no backlog growing: verdicts %v, want falling behind", v)
	}
}

// TestDiagnoseShortfallOfABatchIsChance: an open loop of 140 req/s in
// ticks of 500 ms against a server answering batches of 15, whose count of
// sends over the last 5 ticks comes out 28 of 350 short (two batches
// answered as a tick ended, out of the in-flight count but not yet
// counted), is not falling behind; 60 short is.
func TestDiagnoseShortfallOfABatchIsChance(t *testing.T) {
	late := int64(3) // of 70 a tick: the driver saw a few of its sends late
	short := func(missing int64) []Snapshot {
		return ticks(10, func(i int, s *Snapshot) {
			s.Interval, s.Tick.Duration = 500*time.Millisecond, 500*time.Millisecond
			s.Load = Load{Mode: load.Rate, Rate: 140, Distribution: load.Constant, InFlight: 30}
			s.Tick.Requests, s.Tick.Successes, s.Tick.Latency.Count = 70, 70, 70
			s.Tick.Late = late
			if i == 9 {
				s.Load.InFlight -= int(missing)
			}
			s.Tick.SetRates()
			s.Server.AvgBatch = 15
		})
	}
	if v := verdicts(Diagnose(short(28), DiagnoseOptions{})); slices.Contains(v, FallingBehind) {
		t.Errorf("28 of 350 sends short with batches of 15: verdicts %v", v)
	}
	if v := verdicts(Diagnose(short(60), DiagnoseOptions{})); !slices.Contains(v, FallingBehind) {
		t.Errorf("60 of 350 sends short with batches of 15: verdicts %v, want falling behind", v)
	}
	// A driver that sent every request on time did not fall behind,
	// whatever the count of finished and in-flight requests says: a server
	// at its ceiling answering two instances' batches of 30 made the count
	// 62 short over 2.5 s in a demo plan's capacity level, which the plan
	// then refused as client-bound.
	late = 0
	if v := verdicts(Diagnose(short(60), DiagnoseOptions{})); slices.Contains(v, FallingBehind) {
		t.Errorf("60 of 350 sends short, none late: verdicts %v", v)
	}
}

// TestDiagnoseShortTicksAreNotAStall: ticks shorter than a request takes
// (10 ms ticks of a 60 ms model) often see none finish from a healthy
// server; that is no stall until none finished for MinStallSpan and three
// mean latencies. A long request (an LLM's 1.2 s answer at 1 s ticks) is
// no stall either until three of its latencies passed.
func TestDiagnoseShortTicksAreNotAStall(t *testing.T) {
	const lat = 60 * time.Millisecond
	short := func(idle int) []Snapshot {
		return ticks(10, func(i int, s *Snapshot) {
			s.Interval = 10 * time.Millisecond
			s.Tick = ClientStats{Duration: s.Interval, Requests: 1, Successes: 1,
				Latency: Latency{Count: 1, Mean: lat, P50: lat, P99: lat}}
			if i >= 10-idle {
				s.Tick = ClientStats{Duration: s.Interval}
			}
		})
	}
	if v := verdicts(Diagnose(short(5), DiagnoseOptions{})); slices.Contains(v, Stalled) {
		t.Errorf("5 ticks of 10 ms without a finished 60 ms request were diagnosed %v", v)
	}
	// Nine idle ticks of 100 ms (900 ms, fifteen latencies): a stall.
	long := ticks(10, func(i int, s *Snapshot) {
		s.Interval, s.Tick = 100*time.Millisecond, ClientStats{Duration: 100 * time.Millisecond}
	})
	long[0].Tick = ClientStats{Duration: 100 * time.Millisecond, Requests: 1, Successes: 1, Latency: Latency{Count: 1, Mean: lat}}
	if v := verdicts(Diagnose(long, DiagnoseOptions{})); !slices.Contains(v, Stalled) {
		t.Errorf("900 ms without a finished 60 ms request were diagnosed %v", v)
	}
	llm := ticks(10, func(i int, s *Snapshot) {
		s.Tick.Latency.Mean = 1200 * time.Millisecond
		if i >= 8 {
			s.Tick = ClientStats{Duration: time.Second}
		}
	})
	if v := verdicts(Diagnose(llm, DiagnoseOptions{})); slices.Contains(v, Stalled) {
		t.Errorf("2 s without a finished 1.2 s request were diagnosed %v", v)
	}
	llm = ticks(10, func(i int, s *Snapshot) {
		s.Tick.Latency.Mean = 1200 * time.Millisecond
		if i >= 6 {
			s.Tick = ClientStats{Duration: time.Second}
		}
	})
	if fs := Diagnose(llm, DiagnoseOptions{}); !slices.Contains(verdicts(fs), Stalled) || !strings.Contains(fs[0].Message, "none finished in the last 4s") {
		t.Errorf("4 s without a finished 1.2 s request were diagnosed %+v", fs)
	}
}

// TestDiagnoseIdlePauseIsNotAStall: a stepped run pauses between levels,
// and the tick that ends at the next level's start is idle (nothing in
// flight, Paused) until then; the in-flight count, read at the cut, is the
// next level's first requests. A plan's progress line called that a stall.
func TestDiagnoseIdlePauseIsNotAStall(t *testing.T) {
	const tick = 500 * time.Millisecond
	recent := ticks(10, func(i int, s *Snapshot) {
		s.Interval = tick
		s.Tick.Latency.Mean = 100 * time.Millisecond
		if i == 9 {
			s.Load.InFlight, s.Paused = 21, tick-time.Millisecond
			s.Tick = ClientStats{Duration: time.Millisecond}
		}
	})
	if v := verdicts(Diagnose(recent, DiagnoseOptions{})); slices.Contains(v, Stalled) {
		t.Errorf("a tick idle-paused for all but 1 ms was diagnosed %v", v)
	}
	// The same tick with the load applied throughout is a stall.
	recent[9].Paused, recent[9].Tick.Duration = 0, tick
	if v := verdicts(Diagnose(recent, DiagnoseOptions{})); !slices.Contains(v, Stalled) {
		t.Errorf("500 ms without a finished 100 ms request were diagnosed %v", v)
	}
}

// TestDiagnoseLateByLittleIsNotFallingBehind: an open loop that sends at
// its rate, with a tenth of its sends a few milliseconds late against
// latencies of hundreds (a host's timer or vCPU hiccups), is not falling
// behind: its lateness adds a fraction of a percent to the latency the SLO
// reads, and a plan refused for it would be refused for nothing. The same
// share of sends late by a tenth of the latency is.
func TestDiagnoseLateByLittleIsNotFallingBehind(t *testing.T) {
	for _, c := range []struct {
		mean time.Duration // the mean latency from the schedule
		want bool
	}{{300200 * time.Microsecond, false}, {330 * time.Millisecond, true}} {
		fs := Diagnose(ticks(10, func(i int, s *Snapshot) {
			s.Load = Load{Mode: load.Rate, Rate: 300, Distribution: load.Constant, InFlight: 90}
			s.Tick = ClientStats{Duration: time.Second, Requests: 300, Successes: 300, Inferences: 300, Late: 18,
				Latency:   Latency{Count: 300, Mean: 300 * time.Millisecond},
				Scheduled: &Latency{Count: 300, Mean: c.mean}}
			s.Tick.SetRates()
			s.Server.SuccessCount, s.Server.AvgBatch = 300, 30
		}), DiagnoseOptions{})
		if got := slices.Contains(verdicts(fs), FallingBehind); got != c.want {
			t.Errorf("6%% of sends late, %v late on average against 300 ms: falling behind %v, want %v (%+v)",
				c.mean-300*time.Millisecond, got, c.want, fs)
		}
	}
}
