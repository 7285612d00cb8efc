package session_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
)

// restartStart starts the demo's simulator on the given addresses (":0"
// ports for new ones), its metrics refreshed every 100 ms.
func restartStart(grpcAddr, metricsAddr string) (*sim.Server, error) {
	return sim.Start(context.Background(), sim.Config{
		GRPCAddr: grpcAddr, HTTPAddr: "127.0.0.1:0", MetricsAddr: metricsAddr,
		Repository: sim.DemoRepository(), Engine: sim.EngineOptions{MetricsInterval: 100 * time.Millisecond},
	})
}

// TestSummarySaysWhenTheServerReset: a server restarted under a run sets its
// cumulative statistics back to zero; the client notices, leaves that tick's
// server numbers out, and the summary says when it happened.
func TestSummarySaysWhenTheServerReset(t *testing.T) {
	t.Parallel()
	first, err := restartStart("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	grpcAddr, metricsAddr := first.GRPCAddr(), first.MetricsAddr()
	c := quickConfig(first, "simple")
	c.Concurrency, c.Duration = 2, 0 // until the test stops it, once the reset was seen
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var measured, afterReset atomic.Int32
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		p.Sinks = append(p.Sinks, report.SinkFunc(func(s stats.Snapshot) {
			if s.Server.Available && !s.Server.Reset && s.Server.SuccessCount > 0 {
				measured.Add(1)
			}
			if s.Server.Reset || afterReset.Load() > 0 {
				if afterReset.Add(1) == 3 {
					cancel()
				}
			}
		}))
		return p, nil
	})
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- restartRun(ctx, c, b, &stdout, &stderr) }()
	// Once the first server's statistics were read twice, it restarts.
	if !eventually(t, 30*time.Second, func() bool { return measured.Load() >= 2 }) {
		cancel()
		<-done
		t.Fatalf("no tick measured the first server: %s", stderr.String())
	}
	first.Close()
	second, err := restartStart(grpcAddr, metricsAddr)
	if err != nil {
		cancel()
		<-done
		t.Fatalf("restart on the same ports: %v", err)
	}
	t.Cleanup(func() { second.Close() })
	if err := <-done; err != nil {
		t.Fatalf("run: %v: %s", err, stderr.String())
	}
	if afterReset.Load() < 3 {
		t.Fatalf("the run ended before it saw the reset: %s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "Server counters reset at 00:0") {
		t.Errorf("the summary does not say when the server reset:\n%s", stdout.String())
	}
}

// restartRun runs c's session through its phases, a run without a
// duration ending when ctx does.
func restartRun(ctx context.Context, c session.Config, b session.Builder, stdout, stderr io.Writer) error {
	s, err := session.New(c, b, stdout, stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Connect(ctx); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	s.Wait(ctx)
	return s.Finish(ctx)
}
