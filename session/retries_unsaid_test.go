package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// TestRetriesSaidWhenNoneCould: with --retries against a server failing a
// fifth of its requests with INTERNAL (not retried unless named), the
// summary and every progress line with errors say that no try was retried
// and why, naming --retry-codes; with INTERNAL among the codes, they say
// how many were.
func TestRetriesSaidWhenNoneCould(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 100 * time.Millisecond, Faults: sim.Faults{ErrorRate: 0.2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := quickConfig(srv, "simple")
	c.Concurrency, c.Duration, c.Retries, c.Retry.Backoff = 4, 500*time.Millisecond, 3, time.Millisecond
	stdout, stderr := runOK(t, c)
	if !strings.Contains(stdout, "retries: none (--retries 3): the errors' codes INTERNAL (") ||
		!strings.Contains(stdout, "are not among --retry-codes UNAVAILABLE,RESOURCE_EXHAUSTED") {
		t.Errorf("the summary does not say why nothing was retried:\n%s", stdout)
	}
	lines := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "infer/s") && !strings.Contains(l, "errors 0") {
			lines++
			if !strings.Contains(l, "retries 0 (INTERNAL not in --retry-codes)") {
				t.Errorf("a progress line with errors does not say none was retried and why: %q", l)
			}
		}
	}
	if lines == 0 {
		t.Errorf("no progress line with errors:\n%s", stderr)
	}

	c.Retry.Codes.Set("INTERNAL")
	stdout, stderr = runOK(t, c)
	if !strings.Contains(stdout, "retries: ") || strings.Contains(stdout, "retries: none") {
		t.Errorf("with INTERNAL retried the summary does not count the retries:\n%s", stdout)
	}
	if !strings.Contains(stderr, "  retries ") {
		t.Errorf("no progress line counts retries:\n%s", stderr)
	}
}
