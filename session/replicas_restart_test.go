package session_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
)

// replicasSim starts a simulator of the demo's models with its gRPC and
// metrics endpoints on the given addresses (port 0: a free one), so that
// a replica closed can start again where it was; closed when the test
// ends.
func replicasSim(t *testing.T, grpcAddr, metricsAddr string) (*sim.Server, error) {
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: grpcAddr, HTTPAddr: "127.0.0.1:0", MetricsAddr: metricsAddr,
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 100 * time.Millisecond},
	})
	if err == nil {
		t.Cleanup(func() { srv.Close() })
	}
	return srv, err
}

// replicasEvents is what TestReplicasKillAndRestart did to replica b, and
// when.
type replicasEvents struct {
	killed, restarted time.Time
	err               error
}

// replicasKillAndRestart watches the run's ticks and, once both replicas
// have served for three ticks, closes b as a crash would end it; after
// three ticks that show b down it starts b again on its ports, and once b
// has served again for two ticks it stops the run.
func replicasKillAndRestart(ctx context.Context, t *testing.T, ticks <-chan stats.Snapshot, b *sim.Server, stop func()) replicasEvents {
	var ev replicasEvents
	defer stop()
	until := func(n int, cond func(s stats.Snapshot) bool) bool {
		for seen := 0; seen < n; {
			select {
			case <-ctx.Done():
				return false
			case s := <-ticks:
				if len(s.Replicas) == 2 && cond(s) {
					seen++
				}
			}
		}
		return true
	}
	if !until(3, func(s stats.Snapshot) bool {
		return s.Replicas[0].Tick.Successes > 0 && s.Replicas[1].Tick.Successes > 0
	}) {
		return ev
	}
	grpcAddr, metricsAddr := b.GRPCAddr(), b.MetricsAddr()
	ev.killed = time.Now()
	b.Close()
	if !until(3, func(s stats.Snapshot) bool { return !s.Replicas[1].Up }) {
		return ev
	}
	if _, ev.err = replicasSim(t, grpcAddr, metricsAddr); ev.err != nil {
		return ev
	}
	ev.restarted = time.Now() // serving
	until(2, func(s stats.Snapshot) bool { return s.Replicas[1].Up && s.Replicas[1].Tick.Successes > 0 })
	return ev
}

// replicasTicksTo is the session's own Builder, with every tick of the
// run sent to ticks too.
func replicasTicksTo(ticks chan<- stats.Snapshot) session.Builder {
	return session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		p.Sinks = append(p.Sinks, report.SinkFunc(func(s stats.Snapshot) {
			select {
			case ticks <- s:
			default:
			}
		}))
		return p, nil
	})
}

// TestReplicasKillAndRestart runs load over two simulators serving
// simple and closes one mid-run: every tick's replicas add up to its
// aggregate (client requests and successes, Triton's successes); the
// closed replica is marked down and its load goes to the other within
// 2 s; started again on the same port, it is put back and serves again.
// The run file replays to the same summary, with its per-replica block.
func TestReplicasKillAndRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := replicasSim(t, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := replicasSim(t, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bAddr := b.GRPCAddr()
	runFile := filepath.Join(t.TempDir(), "run.jsonl")
	// Every tick before the kill must show both replicas serving: simple's
	// small tensors and ticks of 500 ms, not 100, give each replica
	// requests in every tick even on a busy host (with -race too).
	c := quickConfig(a, "simple")
	c.URLs = []string{a.GRPCAddr(), bAddr}
	c.MetricsURLs = []string{"http://" + a.MetricsAddr() + "/metrics", "http://" + b.MetricsAddr() + "/metrics"}
	c.Concurrency, c.Duration, c.Tick, c.Record = 8, 0, 500*time.Millisecond, runFile

	ticks := make(chan stats.Snapshot, 4096)
	builder := replicasTicksTo(ticks)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	events := make(chan replicasEvents, 1)
	go func() { events <- replicasKillAndRestart(runCtx, t, ticks, b, stop) }()
	start := time.Now()
	var stdout, stderr bytes.Buffer
	if err := runSession(t, runCtx, c, builder, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	ev := <-events
	switch {
	case ev.err != nil:
		t.Fatalf("restarting the replica on its port: %v", ev.err)
	case ev.restarted.IsZero():
		t.Fatalf("the run ended before the replica was killed, marked down and restarted (killed at %v):\n%s", ev.killed, stderr.String())
	}
	t.Logf("killed %v and restarted %v after the start", ev.killed.Sub(start).Round(time.Millisecond), ev.restarted.Sub(start).Round(time.Millisecond))

	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if h := run.Header.Server; len(h.Replicas) != 2 || h.Balance != "least" || h.URL != a.GRPCAddr()+","+bAddr {
		t.Errorf("header: %+v", h)
	}
	downAt, backAt := replicasCheckTicks(t, run, ev.killed)
	switch {
	case downAt.IsZero():
		t.Fatal("no tick marks the killed replica down")
	case downAt.Sub(ev.killed) > 2*time.Second:
		t.Errorf("the replica was marked down %v after the kill, more than 2 s", downAt.Sub(ev.killed))
	case backAt.IsZero():
		t.Fatal("the restarted replica was never put back")
	}
	t.Logf("marked down in the tick ending %v after the kill; back in the tick ending %v after the restart",
		downAt.Sub(ev.killed).Round(time.Millisecond), backAt.Sub(ev.restarted).Round(time.Millisecond))
	// A probe a second (the first may find the connection still failed
	// from the last), and the tick that reports it.
	if backAt.Sub(ev.restarted) > 4*time.Second {
		t.Errorf("put back in a tick ending %v after the restart: probes are one a second", backAt.Sub(ev.restarted))
	}
	served := int64(0)
	for _, s := range run.Snapshots {
		if s.Time.After(backAt) {
			served += s.Replicas[1].Tick.Successes
		}
	}
	if served == 0 {
		t.Error("the replica put back served nothing")
	}
	replicasCheckSummary(t, run.Summary, stdout.String(), bAddr)
	var replayed bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: runFile}, &replayed, io.Discard); err != nil || replayed.String() != stdout.String() {
		t.Errorf("replay (%v) differs from the live summary:\nlive:\n%s\nreplay:\n%s", err, stdout.String(), replayed.String())
	}
}

// replicasCheckTicks checks every tick of the run: the replicas add up to
// the aggregate; before the kill both serve; once b is marked down and out
// it gets no request. It returns the end of the first tick that shows b
// down and of the first that shows it back.
func replicasCheckTicks(t *testing.T, run *record.Run, killed time.Time) (downAt, backAt time.Time) {
	t.Helper()
	// A tick is cut up to stats.MaxCutGrace after its end (results done
	// before the end are still coming in), and the replicas' state is
	// taken then: a tick that ended just before the kill may already
	// show b down. Only ticks that ended well before it must show b up.
	const cutSlack = stats.MaxCutGrace + 100*time.Millisecond
	for _, s := range run.Snapshots {
		if len(s.Replicas) != 2 {
			t.Fatalf("tick %d: %d replicas", s.Seq, len(s.Replicas))
		}
		ra, rb := s.Replicas[0], s.Replicas[1]
		// The replicas add up to the aggregate, tick by tick.
		if ra.Tick.Requests+rb.Tick.Requests != s.Tick.Requests || ra.Tick.Successes+rb.Tick.Successes != s.Tick.Successes ||
			ra.Tick.Errors+rb.Tick.Errors != s.Tick.Errors {
			t.Errorf("tick %d: replicas %+v and %+v do not add up to %+v", s.Seq, ra.Tick, rb.Tick, s.Tick)
		}
		var server int64
		for _, r := range s.Replicas {
			if r.Server.Available && !r.Server.Reset {
				server += r.Server.SuccessCount
			}
		}
		if server != s.Server.SuccessCount {
			t.Errorf("tick %d: Triton's successes %d and %d, aggregate %d", s.Seq, ra.Server.SuccessCount, rb.Server.SuccessCount, s.Server.SuccessCount)
		}
		begin := s.Time.Add(-s.Interval)
		switch {
		case s.Time.Before(killed.Add(-cutSlack)):
			if !rb.Up || rb.Tick.Successes == 0 || ra.Tick.Successes == 0 {
				t.Errorf("tick %d before the kill: a %+v, b up %v %+v", s.Seq, ra.Tick, rb.Up, rb.Tick)
			}
		case downAt.IsZero() && !rb.Up:
			downAt = s.Time
		}
		if !downAt.IsZero() && backAt.IsZero() && rb.Up {
			backAt = s.Time
		}
		// Out, replica b gets no request; a serves them all. A tick's
		// state is taken when it is cut, up to stats.MaxCutGrace after its
		// end, so the tick that marks b down may end before the kill, and
		// the next one still holds requests sent to b before the kill and
		// between the kill and the failure that told the picker (longer on
		// a busy host). From a tick after that on, b gets none.
		outFrom := downAt
		if killed.After(outFrom) {
			outFrom = killed
		}
		if !downAt.IsZero() && backAt.IsZero() && begin.After(outFrom.Add(s.Interval)) && !s.Load.Drain {
			if rb.Tick.Requests != 0 || ra.Tick.Successes == 0 {
				t.Errorf("tick %d with b out: a %d successes, b %d requests", s.Seq, ra.Tick.Successes, rb.Tick.Requests)
			}
		}
	}
	return downAt, backAt
}

// replicasCheckSummary checks the run's summary and its printed form: b
// went down once, a never; the replicas' requests add up to the run's.
func replicasCheckSummary(t *testing.T, sum *record.Summary, printed, bAddr string) {
	t.Helper()
	if sum == nil || len(sum.Replicas) != 2 {
		t.Fatalf("summary: %+v", sum)
	}
	if r := sum.Replicas[1]; r.Downs != 1 || r.TicksUp >= r.Ticks || sum.Replicas[0].TicksUp != sum.Replicas[0].Ticks {
		t.Errorf("replicas in the summary: %+v", sum.Replicas)
	}
	if sum.Replicas[0].Client.Requests+sum.Replicas[1].Client.Requests != sum.Client.Requests {
		t.Errorf("summary: replicas' requests %d + %d, whole run %d", sum.Replicas[0].Client.Requests,
			sum.Replicas[1].Client.Requests, sum.Client.Requests)
	}
	if !strings.Contains(printed, "Replicas (least outstanding requests)") || !strings.Contains(printed, bAddr) {
		t.Errorf("printed summary lacks the replicas:\n%s", printed)
	}
}
