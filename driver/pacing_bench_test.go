package driver

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// BenchmarkOpenLoopPaced runs an open loop at 2,000 requests a second
// against a client that answers at once, so that the pacer waits between
// every two sends: it reports the process's CPU time per request
// (cpu-µs/req) and how late the sends were against their schedule
// (late-p50-µs, late-p99-µs), with the pacer's waits on a timerfd (as
// built, on Linux) and on Go timers alone (Options.CoarseTimer). Go timers
// wake through the runtime's network poller, whose epoll timeout counts
// whole milliseconds, so on an idle Linux host a wait of a few hundred
// microseconds ends up to a millisecond late. BENCHMARKS.md has the
// numbers.
func BenchmarkOpenLoopPaced(b *testing.B) {
	for _, c := range []struct {
		name   string
		coarse bool
	}{{"timerfd", false}, {"go-timers", true}} {
		b.Run(c.name, func(b *testing.B) { benchmarkOpenLoopPaced(b, c.coarse) })
	}
}

func benchmarkOpenLoopPaced(b *testing.B, coarse bool) {
	benchmarkPaced(b, Options{Client: &nopClient{}, Requests: []*triton.InferRequest{{Model: "identity"}},
		Load: load.Target{Mode: load.Rate, Rate: 2000}, CoarseTimer: coarse})
}

// benchmarkPaced runs opts until b.N results and reports the process's CPU
// per request and the sends' lateness.
func benchmarkPaced(b *testing.B, opts Options) {
	d, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	late := make([]time.Duration, 0, b.N)
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	go func() { done <- d.Run(ctx) }()
	for batch := range d.Results() {
		for _, r := range batch {
			late = append(late, r.Sent-r.Scheduled)
		}
		if len(late) >= b.N {
			d.Stop(time.Second)
			break
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	for range d.Results() {
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	slices.Sort(late)
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(late)), "cpu-µs/req")
	b.ReportMetric(float64(late[len(late)/2].Microseconds()), "late-p50-µs")
	b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "late-p99-µs")
}

// BenchmarkOpenLoopPacedServer is BenchmarkOpenLoopPaced against the
// simulator's identity model over gRPC, the simulator in a process of its
// own: the CPU per request of this process (the driver and its gRPC
// client) and the sends' lateness, at 1,000, 2,000 and 3,000 req/s, with
// the pacer's waits on a timerfd and on Go timers alone. b.N is the
// number of requests: -benchtime 3000x.
func BenchmarkOpenLoopPacedServer(b *testing.B) {
	addr := startSimProcess(b)
	c, err := triton.Dial(context.Background(), addr, triton.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	reqs := requests(b, c, "identity", triton.InputOptions{Shapes: map[string][]int64{"INPUT0": {16}}})
	for _, rate := range []float64{1000, 2000, 3000} {
		for _, c2 := range []struct {
			name   string
			coarse bool
		}{{"timerfd", false}, {"go-timers", true}} {
			b.Run(fmt.Sprintf("rate=%v/%s", rate, c2.name), func(b *testing.B) {
				benchmarkPaced(b, Options{Client: c, Requests: reqs, CoarseTimer: c2.coarse,
					Load: load.Target{Mode: load.Rate, Rate: rate}})
			})
		}
	}
}
