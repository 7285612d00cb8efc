package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// TestSummarySaysWhenTheServerReset: a server restarted under a run sets its
// cumulative statistics back to zero; the client notices, leaves that tick's
// server numbers out, and the summary says when it happened.
func TestSummarySaysWhenTheServerReset(t *testing.T) {
	start := func(grpcAddr, metricsAddr string) *sim.Server {
		srv, err := sim.Start(context.Background(), sim.Config{
			GRPCAddr: grpcAddr, HTTPAddr: "127.0.0.1:0", MetricsAddr: metricsAddr,
			Repository: sim.DemoRepository(), Engine: sim.EngineOptions{MetricsInterval: 250 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	first := start("127.0.0.1:0", "127.0.0.1:0")
	grpcAddr, metricsAddr := first.GRPCAddr(), first.MetricsAddr()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI("-m", "simple", "-u", grpcAddr, "--metrics-url", "http://"+metricsAddr+"/metrics",
			"--concurrency", "2", "--duration", "5s", "--tick", "500ms")
		done <- result{code, stdout, stderr}
	}()
	time.Sleep(2 * time.Second)
	first.Close()
	second := start(grpcAddr, metricsAddr)
	defer second.Close()
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, lastLines(r.stderr, 5))
	}
	if !strings.Contains(r.stdout, "Server counters reset at 00:0") {
		t.Errorf("the summary does not say when the server reset:\n%s", r.stdout)
	}
}
