package stats

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton/pb"
)

// slowFromNow delays every statistics read once slow is set, past the
// collector's read wait but within its read timeout.
type slowFromNow struct {
	StatisticsClient
	slow  atomic.Bool
	delay time.Duration
}

func (s *slowFromNow) ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
	if s.slow.Load() {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
		}
	}
	return s.StatisticsClient.ModelStatistics(ctx, model, version)
}

// TestLateStatisticsReadAtTheEnd: the reads of the run's last ticks answer
// after the read wait (as on a busy host), though within their timeout. No
// tick comes after the last to carry them, so the last tick waits for them:
// the ticks' server counts, with the late reads they carry, still add up to
// every request the simulator counted.
func TestLateStatisticsReadAtTheEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const model = "resnet50"
	srv, client, reqs := demoSim(t, ctx, model, sim.EngineOptions{MetricsInterval: 200 * time.Millisecond})
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs,
		Load: load.Target{Mode: load.Concurrency, Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	st := &slowFromNow{StatisticsClient: client, delay: 300 * time.Millisecond}
	col := NewCollector(CollectorOptions{
		Interval: 100 * time.Millisecond, ReadWait: 50 * time.Millisecond, ReadTimeout: 5 * time.Second,
		Results: drv.Results(), Control: drv, Epoch: drv.Epoch(),
		Server: NewServerPoller(st, model, ""),
	})
	col.Prime(ctx)
	before := simStats(t, srv, model)
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	// Once the simulator has answered requests enough, every read is slow
	// from here on, and the load ends.
	answered := func() uint64 {
		resp, err := srv.Engine().ModelStatistics(model, "")
		if err != nil || len(resp.GetModelStats()) == 0 {
			return 0
		}
		return resp.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount()
	}
	go func() {
		for ctx.Err() == nil && answered()-before.GetSuccess().GetCount() < 40 {
			time.Sleep(10 * time.Millisecond)
		}
		st.slow.Store(true)
		drv.Stop(5 * time.Second)
	}()
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	after := simStats(t, srv, model)
	var counted int64
	for _, s := range snaps {
		counted += s.Server.SuccessCount
		if s.ServerLate != nil {
			counted += s.ServerLate.SuccessCount
		}
	}
	last := snaps[len(snaps)-1]
	if !last.Server.Available {
		t.Errorf("the last tick has no statistics of its own: %s", last.Server.Err)
	}
	if sim := int64(after.GetSuccess().GetCount() - before.GetSuccess().GetCount()); counted != sim || sim == 0 {
		// What the client saw tells a read that missed the server's last
		// successes from requests the client gave up on in the drain.
		t.Errorf("the ticks' server counts add up to %d, the simulator counted %d; the client saw %d successes, %d errors, "+
			"%d cancelled in %d ticks (late reads carried: %d)", counted, sim, last.Run.Successes, last.Run.Errors,
			last.Run.Cancelled, len(snaps), lateReads(snaps))
		for _, s := range snaps {
			late := ""
			if s.ServerLate != nil {
				late = fmt.Sprintf(", carries a late read of %d from tick %d", s.ServerLate.SuccessCount, s.ServerLateSeq)
			}
			t.Logf("tick %d: client %d successes; server %d (available %v %s)%s", s.Seq, s.Tick.Successes,
				s.Server.SuccessCount, s.Server.Available, s.Server.Err, late)
		}
	}
}

// lateReads counts the ticks that carry a late statistics read.
func lateReads(snaps []Snapshot) int {
	n := 0
	for _, s := range snaps {
		if s.ServerLate != nil {
			n++
		}
	}
	return n
}
