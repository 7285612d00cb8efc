package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// simReplica is a `tritontop sim` process serving one replica.
type simReplica struct {
	cmd           *exec.Cmd
	grpc, metrics string
}

// startReplica starts `tritontop sim`, on the given ports ("0" for free
// ones).
func startReplica(t *testing.T, bin, grpcPort, metricsPort string) simReplica {
	t.Helper()
	cmd, addrs, _ := startSimCommand(t, bin, "--grpc-port", grpcPort, "--metrics-port", metricsPort, "--metrics-interval-ms", "250")
	return simReplica{cmd: cmd, grpc: addrs["gRPC"], metrics: addrs["metrics"]}
}

// kill ends the replica's process at once, as a crash would.
func (r simReplica) kill(t *testing.T) time.Time {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	_ = r.cmd.Wait()
	return at
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReplicasKillAndRestart runs load over two simulator processes
// serving resnet50 and kills one mid-run: every tick's replicas add up to
// its aggregate (client requests and successes, Triton's successes); the
// killed replica is marked down and its load goes to the other within
// 2 s; restarted on the same port, it is put back and serves again. The
// run file replays to the same summary, with its per-replica block.
func TestReplicasKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two simulators for 12 s")
	}
	bin := buildBinary(t)
	a, b := startReplica(t, bin, "0", "0"), startReplica(t, bin, "0", "0")
	runFile := filepath.Join(t.TempDir(), "run.jsonl")
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		code, stdout, stderr := runCLI("-m", "resnet50", "-u", a.grpc, "-u", b.grpc,
			"--metrics-url", "http://"+a.metrics+"/metrics", "--metrics-url", "http://"+b.metrics+"/metrics",
			"--concurrency", "8", "--tick", "500ms", "--duration", "12s", "--record", runFile)
		done <- result{code, stdout, stderr}
	}()
	// Mid-tick (ticks are 500 ms from the run's start): a kill on a
	// boundary would leave which tick first shows it to chance.
	time.Sleep(4250 * time.Millisecond)
	killed := b.kill(t)
	time.Sleep(4 * time.Second)
	b2 := startReplica(t, bin, port(t, b.grpc), port(t, b.metrics))
	restarted := time.Now() // serving
	if b2.grpc != b.grpc {
		t.Fatalf("restarted on %s, not %s", b2.grpc, b.grpc)
	}
	res := <-done
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	t.Logf("killed %v and restarted %v after the start", killed.Sub(start).Round(time.Millisecond), restarted.Sub(start).Round(time.Millisecond))

	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if h := run.Header.Server; len(h.Replicas) != 2 || h.Balance != "least" || h.URL != a.grpc+","+b.grpc {
		t.Errorf("header: %+v", h)
	}
	var downAt, backAt time.Time
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
	switch {
	case downAt.IsZero():
		t.Fatal("no tick marks the killed replica down")
	case downAt.Sub(killed) > 2*time.Second:
		t.Errorf("the replica was marked down %v after the kill, more than 2 s", downAt.Sub(killed))
	case backAt.IsZero():
		t.Fatal("the restarted replica was never put back")
	}
	t.Logf("marked down in the tick ending %v after the kill; back in the tick ending %v after the restart",
		downAt.Sub(killed).Round(time.Millisecond), backAt.Sub(restarted).Round(time.Millisecond))
	// A probe a second (the first may find the connection still failed
	// from the last), and the tick that reports it.
	if backAt.Sub(restarted) > 4*time.Second {
		t.Errorf("put back in a tick ending %v after the restart: probes are one a second", backAt.Sub(restarted))
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

	sum := run.Summary
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
	if !strings.Contains(res.stdout, "Replicas (least outstanding requests)") || !strings.Contains(res.stdout, b.grpc) {
		t.Errorf("printed summary lacks the replicas:\n%s", res.stdout)
	}
	code, replayed, rerr := runCLI("replay", runFile)
	if code != 0 || replayed != res.stdout {
		t.Errorf("replay (exit %d, %s) differs from the live summary:\nlive:\n%s\nreplay:\n%s", code, rerr, res.stdout, replayed)
	}
}

// TestReplicasDashboardMarksDown runs the dashboard in a real terminal
// against two simulator processes and kills one: its row says down.
func TestReplicasDashboardMarksDown(t *testing.T) {
	skipWithoutTmux(t)
	bin := buildBinary(t)
	a, b := startReplica(t, bin, "0", "0"), startReplica(t, bin, "0", "0")
	capture := dashboard(t, bin+" -m resnet50 -u "+a.grpc+" -u "+b.grpc+" --metrics-url http://"+a.metrics+
		"/metrics --metrics-url http://"+b.metrics+"/metrics --concurrency 8")
	wait := func(what string, cond func(screen string) bool) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			screen := capture()
			if cond(screen) {
				return screen
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s; screen:\n%s", what, screen)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The replica's row in the Replicas pane: the URL and a space (the GPU
	// pane names each GPU URL/index).
	rowOf := func(screen, url string) string {
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, url+" ") {
				return l
			}
		}
		return ""
	}
	wait("both replicas up", func(s string) bool {
		return strings.Contains(s, "Replicas · 2 of 2 in") && strings.Contains(rowOf(s, b.grpc), " up ")
	})
	killed := b.kill(t)
	screen := wait("the killed replica down", func(s string) bool {
		return strings.Contains(s, "Replicas · 1 of 2 in") && strings.Contains(rowOf(s, b.grpc), " down ")
	})
	t.Logf("the dashboard said down %v after the kill:\n%s", time.Since(killed).Round(time.Millisecond), screen)
	if !strings.Contains(rowOf(screen, a.grpc), " up ") {
		t.Errorf("the replica left is not up: %q", rowOf(screen, a.grpc))
	}
}
