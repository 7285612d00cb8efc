package stats

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton/pb"
)

// TestStressServerStatsOnBusyHost (stress: run under CPU hogs) drives the
// simulator with the machine deliberately loaded by two CPU hogs and the
// collector's default read wait: a late read is carried apart
// (ServerLate, naming the ticks it describes) rather than in the next
// tick's counts, the ticks' server counts with the late reads' add up to
// the simulator's own delta, and at most 1 tick in 10 is without server
// numbers.
func TestStressServerStatsOnBusyHost(t *testing.T) {
	testenv.Stress(t)
	testenv.LoadHost(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const model = "resnet50"
	srv, client, reqs := demoSim(t, ctx, model, sim.EngineOptions{MetricsInterval: 200 * time.Millisecond})
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs,
		Load: load.Target{Mode: load.Concurrency, Concurrency: 8}})
	if err != nil {
		t.Fatal(err)
	}
	const interval = time.Second
	col := NewCollector(CollectorOptions{
		Interval: interval,
		Results:  drv.Results(),
		Control:  drv,
		Epoch:    drv.Epoch(),
		Server:   NewServerPoller(client, model, ""),
		Metrics:  NewMetricsScraper("http://"+srv.MetricsAddr()+"/metrics", &http.Client{}, model, ""),
	})
	col.Prime(ctx)
	before := simStats(t, srv, model)
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	time.AfterFunc(10*time.Second, func() { drv.Stop(5 * time.Second) })
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	after := simStats(t, srv, model)
	var counted int64
	missing, late := 0, 0
	for _, s := range snaps {
		if !s.Server.Available {
			missing++
			t.Logf("tick %d: %s", s.Seq, s.Server.Err)
		}
		counted += s.Server.SuccessCount
		if l := s.ServerLate; l != nil {
			if s.ServerLateSeq <= 0 || s.ServerLateSeq >= s.Seq {
				t.Errorf("tick %d carries a late read of tick %d", s.Seq, s.ServerLateSeq)
			}
			counted += l.SuccessCount
			late++
		}
	}
	sim := int64(after.Success.Count - before.Success.Count)
	t.Logf("%d ticks, %d without server statistics, %d late reads; server counted %d, simulator %d", len(snaps), missing, late, counted, sim)
	if counted != sim {
		t.Errorf("the ticks' server counts add up to %d, the simulator counted %d", counted, sim)
	}
	// The race detector slows each read several times over: the bound
	// is then 1 in 3, which still fails a collector that gives up on
	// every slow read.
	per := 10
	if testenv.Race {
		per = 3
	}
	if missing*per > len(snaps) {
		t.Errorf("%d of %d ticks without server statistics, want at most 1 in %d", missing, len(snaps), per)
	}
}

// slowStatistics delays the statistics reads whose number (from 1, the
// priming read first) is in slow, past the collector's read wait.
type slowStatistics struct {
	StatisticsClient
	calls atomic.Int32
	slow  map[int32]bool
	delay time.Duration
}

func (s *slowStatistics) ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
	if s.slow[s.calls.Add(1)] {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
		}
	}
	return s.StatisticsClient.ModelStatistics(ctx, model, version)
}

// TestLateStatisticsReadKeepsItsSpan: a statistics read that answers after
// its tick was emitted is carried by the next tick as ServerLate, naming the
// tick it describes, and that next tick's Server is its own span from a new
// read, never the late one's counts; nothing is lost.
func TestLateStatisticsReadKeepsItsSpan(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const model = "resnet50"
	srv, client, reqs := demoSim(t, ctx, model, sim.EngineOptions{MetricsInterval: 200 * time.Millisecond})
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs,
		Load: load.Target{Mode: load.Concurrency, Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	const interval = 500 * time.Millisecond
	// The third read (the second tick's, unless a tick was cut short)
	// answers 400 ms after the tick's 250 ms wait.
	stats := &slowStatistics{StatisticsClient: client, slow: map[int32]bool{3: true}, delay: 400 * time.Millisecond}
	col := NewCollector(CollectorOptions{
		Interval: interval, ReadWait: 250 * time.Millisecond,
		Results: drv.Results(), Control: drv, Epoch: drv.Epoch(),
		Server: NewServerPoller(stats, model, ""),
	})
	col.Prime(ctx)
	before := simStats(t, srv, model)
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	time.AfterFunc(3*time.Second, func() { drv.Stop(5 * time.Second) })
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	after := simStats(t, srv, model)
	var counted int64
	lateSeen := false
	without := map[int]bool{}
	for _, s := range snaps {
		if !s.Server.Available {
			without[s.Seq] = true
		}
	}
	for _, s := range snaps {
		counted += s.Server.SuccessCount
		if l := s.ServerLate; l != nil {
			lateSeen = true
			counted += l.SuccessCount
			if !l.Available || s.ServerLateSeq <= 0 || s.ServerLateSeq >= s.Seq {
				t.Errorf("tick %d carries a late read of tick %d: %+v", s.Seq, s.ServerLateSeq, l)
			}
			for q := s.ServerLateSeq; q < s.Seq; q++ {
				if !without[q] {
					t.Errorf("tick %d's late read covers tick %d, which had statistics of its own", s.Seq, q)
				}
			}
			if !s.Server.Available {
				t.Errorf("tick %d, after the late read, has no statistics of its own: %s", s.Seq, s.Server.Err)
			}
		}
	}
	if !lateSeen {
		t.Fatalf("no tick carried the late read")
	}
	if sim := int64(after.Success.Count - before.Success.Count); counted != sim {
		t.Errorf("the ticks' server counts add up to %d, the simulator counted %d", counted, sim)
	}
}
