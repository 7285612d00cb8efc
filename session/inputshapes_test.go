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

// TestShapes: Config.Shapes gives an input of variable dims its shape
// (the demo's identity model, INPUT0 of dims [-1]); without it the run is
// refused before it starts, with one line naming the input.
func TestShapes(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := quickConfig(srv, "identity")
	cfg.Concurrency, cfg.Duration = 2, 300*time.Millisecond

	s, err := session.New(cfg, nil, &bytes.Buffer{}, &bytes.Buffer{})
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
	cfg.Shapes = []string{"INPUT0:16"}
	if err := runSession(t, ctx, cfg, nil, &stdout, &bytes.Buffer{}); err != nil {
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
