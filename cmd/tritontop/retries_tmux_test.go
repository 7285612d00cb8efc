package main

import (
	"strings"
	"testing"
	"time"
)

// TestRetriesInTmux: against a simulator failing a fifth of its requests
// with INTERNAL, a run with --retries 3 --retry-codes INTERNAL shows its
// retries in the dashboard.
func TestRetriesInTmux(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	grpc, _ := startSimProcess(t, bin, nil, "--error-rate", "0.2")
	tm := newTerminal(t, 120, 40, bin+" -u "+grpc+" -m resnet50 --concurrency 4 --retries 3 --retry-codes INTERNAL")
	if screen, ok := tm.waitFor(30*time.Second, func() {}, func(s string) bool { return strings.Contains(s, "retries ") }); !ok {
		t.Errorf("the dashboard does not show the retries:\n%s", screen)
	}
	tm.quitOK()
}
