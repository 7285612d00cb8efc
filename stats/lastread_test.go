package stats

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/triton/pb"
)

// TestCollectorWaitsForTheLastStatistics: the run's last tick waits for
// its statistics read past ReadWait (up to ReadTimeout): no later tick
// would carry a late answer, and the requests that ended the run would be
// in no tick's statistics. Its metrics are not waited for.
func TestCollectorWaitsForTheLastStatistics(t *testing.T) {
	t.Parallel()
	var served atomic.Uint64
	var ended atomic.Bool
	client := statsClient{stats: func(ctx context.Context, model, _ string) (*pb.ModelStatisticsResponse, error) {
		if ended.Load() {
			// The last read answers after the tick's ReadWait.
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		n := served.Load()
		st := reading{success: counter{n, n * 1000}, queue: counter{n, n * 100}}.proto()
		st.Name = model
		return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{st}}, nil
	}}
	results := make(chan []driver.Result)
	c := NewCollector(CollectorOptions{Interval: 100 * time.Millisecond, ReadWait: 30 * time.Millisecond,
		ReadTimeout: 2 * time.Second, Results: results, Server: NewServerPoller(client, "m", "1")})
	c.Prime(context.Background())
	go func() {
		defer close(results)
		for end := time.Now().Add(350 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			served.Add(1)
			results <- []driver.Result{ok(0, time.Millisecond)}
		}
		// The run's last requests, and the end of its results.
		served.Add(7)
		ended.Store(true)
	}()
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, s := range snaps {
		if s.Server.Available && !s.Server.Reset {
			got += s.Server.SuccessCount
		}
		if l := s.ServerLate; l != nil {
			got += l.SuccessCount
		}
	}
	last := snaps[len(snaps)-1]
	if !last.Server.Available || got != int64(served.Load()) {
		t.Errorf("the ticks' statistics count %d requests, the server %d; last tick %+v", got, served.Load(), last.Server)
	}
}

// TestCollectorReadsTheLastStatisticsAgain: the last tick's read that fails
// (past ReadTimeout, as on a busy server) is made once more; the failed
// one kept the baseline, so the second covers the run's end.
func TestCollectorReadsTheLastStatisticsAgain(t *testing.T) {
	t.Parallel()
	var served atomic.Uint64
	var ended atomic.Bool
	var slow atomic.Int32
	client := statsClient{stats: func(ctx context.Context, model, _ string) (*pb.ModelStatisticsResponse, error) {
		if ended.Load() && slow.Add(1) == 1 {
			<-ctx.Done() // the first read after the end times out
			return nil, ctx.Err()
		}
		n := served.Load()
		st := reading{success: counter{n, n * 1000}, queue: counter{n, n * 100}}.proto()
		st.Name = model
		return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{st}}, nil
	}}
	results := make(chan []driver.Result)
	c := NewCollector(CollectorOptions{Interval: 100 * time.Millisecond, ReadWait: 30 * time.Millisecond,
		ReadTimeout: 150 * time.Millisecond, Results: results, Server: NewServerPoller(client, "m", "1")})
	c.Prime(context.Background())
	go func() {
		defer close(results)
		for end := time.Now().Add(250 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			served.Add(1)
			results <- []driver.Result{ok(0, time.Millisecond)}
		}
		served.Add(3)
		ended.Store(true)
	}()
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, s := range snaps {
		if s.Server.Available && !s.Server.Reset {
			got += s.Server.SuccessCount
		}
		if l := s.ServerLate; l != nil && l.Available {
			got += l.SuccessCount
		}
	}
	if last := snaps[len(snaps)-1]; !last.Server.Available || got != int64(served.Load()) || slow.Load() < 2 {
		t.Errorf("the ticks' statistics count %d requests, the server %d (%d reads after the end); last tick %+v",
			got, served.Load(), slow.Load(), last.Server)
	}
}
