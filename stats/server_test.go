package stats

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton/pb"
)

// reading describes one cumulative ModelStatistics reading compactly.
type reading struct {
	success, fail, queue, cin, cinf, cout, hit counter
	inferences, executions                     uint64
	batches                                    map[uint64]uint64 // size -> executions
}

func dur(c counter) *pb.StatisticDuration {
	return &pb.StatisticDuration{Count: c.count, Ns: c.ns}
}

func (r reading) proto() *pb.ModelStatistics {
	st := &pb.ModelStatistics{
		Name: "m", Version: "1",
		InferenceCount: r.inferences, ExecutionCount: r.executions,
		InferenceStats: &pb.InferStatistics{
			Success: dur(r.success), Fail: dur(r.fail), Queue: dur(r.queue),
			ComputeInput: dur(r.cin), ComputeInfer: dur(r.cinf), ComputeOutput: dur(r.cout),
			CacheHit: dur(r.hit), CacheMiss: dur(counter{}),
		},
	}
	for size, n := range r.batches {
		st.BatchStats = append(st.BatchStats, &pb.InferBatchStatistics{
			BatchSize:    size,
			ComputeInput: dur(counter{n, n * 10}), ComputeInfer: dur(counter{n, n * 100}),
			ComputeOutput: dur(counter{n, n * 10}),
		})
	}
	return st
}

func baseReading() reading {
	return reading{
		success: counter{100, 1_000_000}, fail: counter{2, 5000}, queue: counter{100, 400_000},
		cin: counter{100, 10_000}, cinf: counter{100, 300_000}, cout: counter{100, 20_000},
		inferences: 400, executions: 60,
		batches: map[uint64]uint64{1: 20, 4: 30, 8: 10},
	}
}

func TestServerDeltaAveragesUseIntegerDivision(t *testing.T) {
	prev := baseReading()
	cur := prev
	// Three more successes whose times do not divide evenly.
	cur.success = counter{103, 1_000_000 + 1_000_002}
	cur.queue = counter{103, 400_000 + 600_001}
	cur.cin = counter{103, 10_000 + 3_001}
	cur.cinf = counter{103, 300_000 + 200_002}
	cur.cout = counter{103, 20_000 + 3_000}
	cur.fail = counter{3, 9000}
	cur.inferences = 400 + 12
	cur.executions = 60 + 2
	cur.batches = map[uint64]uint64{1: 20, 4: 30, 8: 10, 6: 2}

	s := ServerDelta(prev.proto(), cur.proto())
	want := ServerStats{
		Available: true, Model: "m", Version: "1",
		SuccessCount: 3, FailCount: 1, InferenceCount: 12, ExecutionCount: 2,
		Request:       1_000_002 / 3, // 333334, not 333334.0…
		Queue:         600_001 / 3,
		ComputeInput:  3_001 / 3,
		ComputeInfer:  200_002 / 3,
		ComputeOutput: 3_000 / 3,
		// compute = (3001+200002+3000)/3 = 68667; 333334 − 200000 − 68667.
		Overhead: 333334 - 200000 - 68667,
		AvgBatch: 6,
		Batches:  []BatchCount{{Size: 6, Count: 2}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("ServerDelta =\n%+v\nwant\n%+v", s, want)
	}
	// perf_analyzer's microseconds: Δns / (Δcount × 1000), integer division.
	if got, pa := s.Request/time.Microsecond, time.Duration(1_000_002/(3*1000)); got != pa {
		t.Errorf("request µs = %d, perf_analyzer gives %d", got, pa)
	}
}

// TestServerDeltaTornReadingAddsUp: Triton reads each count of a
// statistics answer apart, without the statistics' lock, so a reading
// under load may have its queue and compute counts a request past its
// success count (a real Triton 2.73 did in 4 of 9514 readings taken during
// a run of concurrency 8). The ticks on either side of such a reading
// still add up to the span's times exactly: each average divides by the
// count it is weighted by downstream, the success count (less cache hits
// for compute).
func TestServerDeltaTornReadingAddsUp(t *testing.T) {
	start := baseReading()
	end := start
	end.success = counter{110, 2_000_000}
	end.queue = counter{110, 1_000_000}
	end.cin, end.cinf, end.cout = counter{110, 20_000}, counter{110, 900_000}, counter{110, 30_000}
	torn := start
	torn.success = counter{105, 1_500_000}
	// The queue and compute figures were read after one more request.
	torn.queue = counter{106, 700_000}
	torn.cin, torn.cinf, torn.cout = counter{106, 17_000}, counter{106, 700_000}, counter{106, 27_000}
	a, b := ServerDelta(start.proto(), torn.proto()), ServerDelta(torn.proto(), end.proto())
	if a.Reset || b.Reset {
		t.Fatalf("a torn reading taken for a reset: %+v %+v", a, b)
	}
	sum := func(f func(ServerStats) time.Duration) int64 {
		return int64(f(a))*a.SuccessCount + int64(f(b))*b.SuccessCount
	}
	for _, c := range []struct {
		name string
		got  int64
		want int64
	}{
		{"queue", sum(func(s ServerStats) time.Duration { return s.Queue }), 600_000},
		{"compute input", sum(func(s ServerStats) time.Duration { return s.ComputeInput }), 10_000},
		{"compute infer", sum(func(s ServerStats) time.Duration { return s.ComputeInfer }), 600_000},
		{"compute output", sum(func(s ServerStats) time.Duration { return s.ComputeOutput }), 10_000},
	} {
		if c.got != c.want {
			t.Errorf("%s: the two ticks add up to %d ns, the span has %d ns", c.name, c.got, c.want)
		}
	}
}

func TestServerDeltaZeroCountsGiveZeroAverages(t *testing.T) {
	prev := baseReading()
	s := ServerDelta(prev.proto(), prev.proto())
	if !s.Available || s.Reset {
		t.Fatalf("unchanged reading: Available=%v Reset=%v", s.Available, s.Reset)
	}
	if s.Request != 0 || s.Queue != 0 || s.ComputeInfer != 0 || s.Overhead != 0 || s.AvgBatch != 0 || s.Batches != nil {
		t.Fatalf("unchanged reading gave nonzero averages: %+v", s)
	}
}

func TestServerDeltaOverheadFloorsAtZero(t *testing.T) {
	prev := baseReading()
	cur := prev
	// Every request in a batch gets the batch's full compute time, so
	// queue + compute can exceed the request time.
	cur.success = counter{104, 1_000_000 + 4_000}
	cur.queue = counter{104, 400_000 + 2_000}
	cur.cin = counter{104, 10_000 + 400}
	cur.cinf = counter{104, 300_000 + 4_000}
	cur.cout = counter{104, 20_000 + 400}
	s := ServerDelta(prev.proto(), cur.proto())
	if s.Request != 1000 || s.Queue != 500 || s.ComputeInfer != 1000 {
		t.Fatalf("averages = %v %v %v, want 1µs 500ns 1µs", s.Request, s.Queue, s.ComputeInfer)
	}
	if s.Overhead != 0 {
		t.Fatalf("Overhead = %v, want 0 (floored)", s.Overhead)
	}
}

func TestServerDeltaBatchDistribution(t *testing.T) {
	prev := baseReading()
	cur := prev
	cur.batches = map[uint64]uint64{1: 25, 4: 30, 8: 17, 16: 1}
	cur.executions = prev.executions + 5 + 7 + 1
	cur.inferences = prev.inferences + 5*1 + 7*8 + 16
	s := ServerDelta(prev.proto(), cur.proto())
	want := []BatchCount{{1, 5}, {8, 7}, {16, 1}}
	if !reflect.DeepEqual(s.Batches, want) {
		t.Fatalf("Batches = %v, want %v", s.Batches, want)
	}
	if wantAvg := float64(5+56+16) / 13; s.AvgBatch != wantAvg {
		t.Fatalf("AvgBatch = %v, want %v", s.AvgBatch, wantAvg)
	}
}

func TestServerDeltaDetectsCounterReset(t *testing.T) {
	mutations := map[string]func(r *reading){
		"success count": func(r *reading) { r.success.count-- },
		"success ns":    func(r *reading) { r.success.ns-- },
		"fail count":    func(r *reading) { r.fail.count-- },
		"queue ns":      func(r *reading) { r.queue.ns-- },
		"compute input": func(r *reading) { r.cin.count-- },
		"compute infer": func(r *reading) { r.cinf.ns-- },
		"compute out":   func(r *reading) { r.cout.count-- },
		"cache hit":     func(r *reading) { r.hit = counter{}; r.success.count += 5 },
		"inferences":    func(r *reading) { r.inferences-- },
		"executions":    func(r *reading) { r.executions-- },
		"batch count":   func(r *reading) { r.batches = map[uint64]uint64{1: 19, 4: 30, 8: 10} },
		"fewer batches": func(r *reading) { r.batches = map[uint64]uint64{1: 20, 4: 30} },
		"batch replaced": func(r *reading) {
			r.batches = map[uint64]uint64{1: 20, 4: 30, 2: 10}
		},
		"restart": func(r *reading) {
			*r = reading{success: counter{1, 10}, queue: counter{1, 5}, inferences: 1, executions: 1,
				batches: map[uint64]uint64{1: 1}}
		},
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			prev := baseReading()
			prev.hit = counter{3, 300}
			cur := prev
			cur.batches = map[uint64]uint64{}
			for k, v := range prev.batches {
				cur.batches[k] = v
			}
			mutate(&cur)
			s := ServerDelta(prev.proto(), cur.proto())
			if !s.Reset || !s.Available {
				t.Fatalf("Reset=%v Available=%v, want a reported reset", s.Reset, s.Available)
			}
			zero := ServerStats{Available: true, Reset: true, Model: "m", Version: "1"}
			if !reflect.DeepEqual(s, zero) {
				t.Fatalf("reset tick has deltas: %+v", s)
			}
		})
	}
}

// statsClient is a StatisticsClient that answers from a function.
type statsClient struct {
	stats func(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error)
}

func (c statsClient) ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
	return c.stats(ctx, model, version)
}

func TestServerPollerSequence(t *testing.T) {
	steps := []struct {
		r   *reading
		err error
	}{}
	r0 := baseReading()
	r1 := r0
	r1.success = counter{110, 1_100_000}
	r1.queue = counter{110, 450_000}
	r2 := reading{success: counter{4, 4000}, queue: counter{4, 400}} // restart
	r3 := r2
	r3.success = counter{6, 7000}
	for _, r := range []*reading{&r0, &r1, nil, &r2, &r3} {
		var err error
		if r == nil {
			err = errors.New("connection refused\n(retry later)")
		}
		steps = append(steps, struct {
			r   *reading
			err error
		}{r, err})
	}
	i := 0
	client := statsClient{stats: func(_ context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
		if model != "m" || version != "1" {
			t.Errorf("ModelStatistics(%q, %q), want (m, 1)", model, version)
		}
		st := steps[i]
		i++
		if st.err != nil {
			return nil, st.err
		}
		other := st.r.proto()
		other.Version = "2"
		other.InferenceCount += 1000
		return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{other, st.r.proto()}}, nil
	}}
	p := NewServerPoller(client, "m", "1")
	ctx := context.Background()
	if err := p.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	s := p.Poll(ctx)
	if !s.Available || s.SuccessCount != 10 || s.Request != 10_000 || s.Queue != 5000 {
		t.Fatalf("first delta = %+v", s)
	}
	s = p.Poll(ctx)
	if s.Available || s.Err == "" || strings.Contains(s.Err, "\n") {
		t.Fatalf("failed read = %+v, want unavailable with a one-line error", s)
	}
	s = p.Poll(ctx)
	if !s.Reset || s.SuccessCount != 0 {
		t.Fatalf("after restart = %+v, want Reset with no deltas", s)
	}
	s = p.Poll(ctx)
	if !s.Available || s.Reset || s.SuccessCount != 2 || s.Request != 1500 {
		t.Fatalf("after new baseline = %+v", s)
	}
}

func TestPickVersion(t *testing.T) {
	mk := func(name, v string) *pb.ModelStatistics { return &pb.ModelStatistics{Name: name, Version: v} }
	all := []*pb.ModelStatistics{mk("m", "2"), mk("other", "9"), mk("m", "10"), mk("m", "1")}
	if got := pickVersion(all, "m", ""); got != all[2] {
		t.Errorf("latest = %v, want version 10", got)
	}
	if got := pickVersion(all, "m", "1"); got != all[3] {
		t.Errorf("version 1 = %v", got)
	}
	if got := pickVersion(all, "m", "3"); got != nil {
		t.Errorf("missing version = %v, want nil", got)
	}
	if got := pickVersion(all, "x", ""); got != nil {
		t.Errorf("missing model = %v, want nil", got)
	}
}

// TestServerPollerServed: Served counts the successes since the first
// reading, and cannot tell once a Poll saw the counters reset (a model
// reloaded whose new counters are already past the first reading's).
func TestServerPollerServed(t *testing.T) {
	r0 := reading{success: counter{10, 1000}, queue: counter{10, 100}}
	r1 := reading{success: counter{25, 2500}, queue: counter{25, 250}}
	r2 := reading{success: counter{3, 300}, queue: counter{3, 30}}     // reloaded
	r3 := reading{success: counter{40, 4000}, queue: counter{40, 400}} // past the first again
	readings := []reading{r0, r1, r1, r2, r3}
	var call int
	p := NewServerPoller(statsClient{stats: func(context.Context, string, string) (*pb.ModelStatisticsResponse, error) {
		r := readings[min(call, len(readings)-1)]
		call++
		return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{r.proto()}}, nil
	}}, "m", "")
	ctx := context.Background()
	if _, ok := p.Served(ctx); ok {
		t.Error("Served without a first reading")
	}
	if err := p.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	if n, ok := p.Served(ctx); !ok || n != 15 {
		t.Errorf("Served = %d, %v; want 15 since the first reading", n, ok)
	}
	if s := p.Poll(ctx); s.Reset || s.SuccessCount != 15 {
		t.Fatalf("Poll = %+v", s)
	}
	if s := p.Poll(ctx); !s.Reset {
		t.Fatalf("Poll after the reload = %+v, want a reset", s)
	}
	if n, ok := p.Served(ctx); ok {
		t.Errorf("Served = %d after a reset; want it unable to tell", n)
	}
}
