package session_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
)

// TestDialShapes: Dial.Shapes gives an input of variable dims its shape
// (the demo's identity model, INPUT0 of dims [-1]); without it the run is
// refused before it starts, with one line naming the input.
func TestDialShapes(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := session.Config{URL: srv.GRPCAddr(), Model: "identity", Concurrency: 2, Headless: true,
		Tick: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Drain: 5 * time.Second}

	s, err := session.New(cfg, session.Dial{}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Connect(ctx)
	s.Close()
	var usage session.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "INPUT0") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("no shape for INPUT0: %v", err)
	}
	t.Logf("without a shape: %v", err)

	var stdout bytes.Buffer
	if err := runSession(t, ctx, cfg, session.Dial{Shapes: map[string][]int64{"INPUT0": {16}}}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "Errors: none") || !strings.Contains(stdout.String(), "Request count: ") {
		t.Errorf("summary:\n%s", stdout.String())
	}
	resp, err := srv.Engine().ModelStatistics("identity", "")
	if err != nil || resp.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount() == 0 {
		t.Errorf("the simulator served no request of identity: %v", err)
	}
}
